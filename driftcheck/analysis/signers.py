"""Who signed each side of a comparison, said before the comparison, and refused on request.

A comparison is only as good as its sides: a snapshot re-signed by a stranger or stripped of its signature
compares as readily as the user's own. `diff`, `explain`, `check`, `baseline save` and `fleet` therefore name,
in their first lines and in JSON (`signers`), every side that is not signed by the user or a key they trust,
and `--require-trusted` turns such a side into an error before anything is compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.trust import Signer, TrustStore, UntrustedSignerError


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its role ("A", "B", a host), the snapshot's id and source, its signer."""

    role: str
    short_id: str
    source: str
    signer: Signer

    def where(self) -> str:
        """`A 1a2b3c4d5e6f (before.json)`: the role and which snapshot, for a message."""
        # A path may hold any character: escaped, so a warning stays one line and no terminal sequence.
        source = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in self.source)
        shown = f" ({source})" if source and not source.startswith("<") else ""
        return f"{self.role} {self.short_id}{shown}"

    def warning(self) -> str:
        """One line naming a side not signed by a trusted key; what to do about it where there is something."""
        line = f"! {self.where()}: {self.signer.text()}"
        if self.signer.state == "unknown":
            line += " (not a key you trust: compare it with its owner's, then `driftcheck key trust`)"
        return line


@dataclass(frozen=True)
class Signers:
    """The sides of a comparison by key ("a", "b", or host names), in the order given."""

    sides: dict[str, Side]

    def untrusted(self) -> list[Side]:
        """The sides signed by no trusted key: unsigned, altered, or by an unknown key."""
        return [side for side in self.sides.values() if not side.signer.trusted]

    def lines(self) -> list[str]:
        """The warning lines a text report starts with: one per untrusted side, none when all are trusted."""
        return [side.warning() for side in self.untrusted()]

    def to_json(self) -> dict[str, Any]:
        """`{"a": Signer.to_json(), "b": ...}`: every side, trusted or not."""
        return {key: side.signer.to_json() for key, side in self.sides.items()}


def signers_for(snapshots: Mapping[str, Snapshot], store: TrustStore | None = None,
                roles: Mapping[str, str] | None = None) -> Signers:
    """The signer of every snapshot in `snapshots` (key -> snapshot); `roles` names a key in messages
    (default: the key upper-cased, so "a" reads "A")."""
    store = store or TrustStore()
    roles = roles or {}
    return Signers({key: Side(roles.get(key, key.upper()), snapshot.short_id, snapshot.source,
                              store.signer_of(snapshot.document, snapshot.verification))
                    for key, snapshot in snapshots.items()})


def signers_of(a: Snapshot, b: Snapshot, store: TrustStore | None = None) -> Signers:
    """The signers of the two sides of a diff, explain or check: keys "a" and "b"."""
    return signers_for({"a": a, "b": b}, store)


def require_trusted(signers: Signers, keys: Iterable[str] | None = None) -> None:
    """UntrustedSignerError for the first side (of `keys`, default all) not signed by a trusted key."""
    wanted = set(signers.sides) if keys is None else set(keys)
    for key, side in signers.sides.items():
        if key in wanted and not side.signer.trusted:
            raise UntrustedSignerError(side.where(), side.signer)
