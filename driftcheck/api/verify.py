"""`verify`: is a snapshot intact, and who signed it; trust on first use on request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from driftcheck.api.loading import Side, load
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.trust import Signer, TrustStore
from driftcheck.store.snapshots import Store


@dataclass(frozen=True)
class Verified:
    """What `verify` found: the snapshot, its signer in the user's terms, and whether a key given for this
    check only (`trust`) vouched for it (`accepted`)."""

    snapshot: Snapshot
    signer: Signer
    accepted: bool = False

    @property
    def trusted(self) -> bool:
        """Intact and signed by the user, a trusted key, or a key given for this check."""
        return self.signer.trusted or self.accepted

    @property
    def status(self) -> str:
        """`unsigned`, `altered`, `valid` (trusted) or `untrusted`."""
        if self.signer.state in ("unsigned", "altered"):
            return self.signer.state
        return "valid" if self.trusted else "untrusted"

    def to_json(self) -> dict[str, Any]:
        """The `verify --format json` object."""
        return {"snapshot": self.snapshot.source, "id": self.snapshot.id, "status": self.status,
                "signer": self.signer.to_json(), "trusted": self.trusted}


def verify(snapshot: Side, *, trust: Sequence[str] = (), accept_new: bool = False, name: str | None = None,
           store: Store | None = None) -> Verified:
    """Whether `snapshot` (a reference or a Snapshot; an altered one is read, not refused) is intact and by
    whom it is signed. `trust`: public keys or fingerprints accepted for this check only. `accept_new`:
    trust on first use, an intact snapshot signed by a key never seen adds that key to the trusted ones
    (under `name`, default its fingerprint)."""
    found = snapshot if isinstance(snapshot, Snapshot) else load(snapshot, check_signature=False, store=store)
    keys = TrustStore()
    signer = keys.signer_of(found.document)
    if signer.state == "unknown" and trust:
        return Verified(found, signer, verify_document(found.document, list(trust)).intact)
    if signer.state == "unknown" and accept_new and signer.fingerprint:
        keys.add(signer.fingerprint, name)
        signer = keys.signer_of(found.document)
    return Verified(found, signer)
