"""Ed25519 signatures: intact, altered in any byte of content, unsigned, untrusted; real key files."""

from __future__ import annotations

import copy
import stat
from pathlib import Path

from driftcheck.snapshot.keys import load_redaction_secret, load_signing_key
from driftcheck.snapshot.model import new_document
from driftcheck.snapshot.signing import sign_document, verify_document


def _document() -> dict:
    return new_document({"name": "node-a", "kind": "local"},
                        {"env": {"status": "ok", "data": {"vars": {"OMP_NUM_THREADS": "8"}}, "error": None,
                                 "duration_s": 0.01}}, label="before")


def test_key_files_are_created_once_with_owner_only_mode(driftcheck_home: Path) -> None:
    first = load_signing_key()
    second = load_signing_key()
    assert first.public_key_b64 == second.public_key_b64
    assert stat.S_IMODE(first.path.stat().st_mode) == 0o600
    secret = load_redaction_secret()
    assert secret == load_redaction_secret() and len(secret) == 32
    assert stat.S_IMODE((driftcheck_home / "redaction.secret").stat().st_mode) == 0o600
    assert first.fingerprint.startswith("SHA256:")


def test_signed_document_verifies_and_any_content_change_breaks_it() -> None:
    key = load_signing_key()
    signed = sign_document(_document(), key)
    verdict = verify_document(signed)
    assert verdict.status == "valid" and verdict.fingerprint == key.fingerprint
    for mutate in (lambda d: d["probes"]["env"]["data"]["vars"].__setitem__("OMP_NUM_THREADS", "4"),
                   lambda d: d.__setitem__("label", "after"),
                   lambda d: d["host"].__setitem__("name", "node-b"),
                   lambda d: d["probes"]["env"].__setitem__("duration_s", 0.02)):
        altered = copy.deepcopy(signed)
        mutate(altered)
        assert verify_document(altered).status == "altered"


def test_unsigned_and_malformed_signatures() -> None:
    assert verify_document(_document()).status == "unsigned"
    signed = sign_document(_document(), load_signing_key())
    signed["signature"]["value"] = "not base64!"
    assert verify_document(signed).status == "altered"


def test_trust_by_fingerprint_or_public_key(tmp_path: Path) -> None:
    mine = load_signing_key()
    theirs = load_signing_key(tmp_path / "other")
    signed = sign_document(_document(), theirs)
    assert verify_document(signed, [mine.fingerprint]).status == "untrusted"
    assert verify_document(signed, [theirs.fingerprint]).status == "valid"
    assert verify_document(signed, [theirs.public_key_b64]).status == "valid"
    assert verify_document(signed, [theirs.fingerprint.removeprefix("SHA256:")]).status == "valid"


def test_replacing_the_public_key_does_not_make_a_forgery_valid(tmp_path: Path) -> None:
    signed = sign_document(_document(), load_signing_key())
    forged = sign_document(signed, load_signing_key(tmp_path / "attacker"))
    forged["signature"]["fingerprint"] = signed["signature"]["fingerprint"]
    # Intact under the attacker's key, but not under the key the reader trusts.
    assert verify_document(forged).status == "valid"
    assert verify_document(forged, [signed["signature"]["fingerprint"]]).status == "untrusted"
