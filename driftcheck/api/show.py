"""`show`: a snapshot named by reference, with who signed it in the user's terms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from driftcheck.api.loading import Side, load
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.trust import Signer, TrustStore
from driftcheck.store.snapshots import Store


@dataclass(frozen=True)
class Shown:
    """A snapshot to print, and who signed it (you / a trusted name / an unknown key), as `verify` says it."""

    snapshot: Snapshot
    signer: Signer

    def to_json(self) -> dict[str, Any]:
        """The `show --format json` object: the snapshot document itself."""
        return self.snapshot.document


def show(snapshot: Side, *, store: Store | None = None) -> Shown:
    """The snapshot `snapshot` names (a reference, see `load`, or a Snapshot) and its signer."""
    found = snapshot if isinstance(snapshot, Snapshot) else load(snapshot, store=store)
    return Shown(found, TrustStore().signer_of(found.document, found.verification))
