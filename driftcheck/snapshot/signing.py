"""Ed25519 signatures over a snapshot's canonical content; the public key travels in the snapshot.

cryptography is imported where a signature is checked (signing goes through the key, which brought it): a
module that may sign or verify, imported by a command that does neither (an unsigned snapshot), does not pay
for it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass

from driftcheck.snapshot.canonical import canonical_bytes, content_of
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue
from driftcheck.snapshot.keys import KeyPair, fingerprint

ALGORITHM = "ed25519"


def sign_document(document: Mapping[str, JSONValue], key: KeyPair) -> JSONObject:
    """A copy of `document` with a signature over its canonical content."""
    content = content_of(document)
    value = key.private_key.sign(canonical_bytes(content))
    return {**content, "signature": {"algorithm": ALGORITHM, "public_key": key.public_key_b64,
                                     "fingerprint": key.fingerprint,
                                     "value": base64.b64encode(value).decode("ascii")}}


@dataclass(frozen=True)
class Verification:
    """The verdict on a snapshot's signature. `status`: valid, unsigned, altered or untrusted."""

    status: str
    message: str
    fingerprint: str | None = None

    @property
    def intact(self) -> bool:
        return self.status == "valid"


def _trusted(trust: list[str], public_key_b64: str, key_fingerprint: str) -> bool:
    wanted = {t.strip() for t in trust}
    bare = key_fingerprint.removeprefix("SHA256:")
    return bool(wanted & {public_key_b64, key_fingerprint, bare})


def verify_document(document: Mapping[str, object], trust: list[str] | None = None) -> Verification:
    """Check a document's signature, and that its key is among `trust` (keys or fingerprints) if given."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    signature = document.get("signature")
    if not signature:
        return Verification("unsigned", "not signed (taken with --no-sign, or imported)")
    if not isinstance(signature, dict):
        return Verification("altered", "signature block is malformed")
    try:
        if signature.get("algorithm") != ALGORITHM:
            return Verification("altered", f"unknown signature algorithm {signature.get('algorithm')!r}")
        public_key_b64 = str(signature["public_key"])
        public_key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64, validate=True))
        value = base64.b64decode(str(signature["value"]), validate=True)
    except (KeyError, TypeError, ValueError, AttributeError, binascii.Error):
        return Verification("altered", "signature block is malformed")
    key_fingerprint = fingerprint(public_key_b64)
    try:
        public_key.verify(value, canonical_bytes(content_of(document)))
    except InvalidSignature:
        return Verification("altered", "content was altered after signing: the signature does not match",
                            key_fingerprint)
    if trust and not _trusted(trust, public_key_b64, key_fingerprint):
        return Verification("untrusted", f"signed by {key_fingerprint}, which is not among the trusted keys",
                            key_fingerprint)
    return Verification("valid", f"intact, signed by {key_fingerprint}", key_fingerprint)
