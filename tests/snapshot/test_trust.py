"""Who signed it: your own key trusted from the start, others by name or on first use, strangers named."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.errors import UsageError
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.model import new_document
from driftcheck.snapshot.signing import sign_document
from driftcheck.snapshot.trust import TrustStore, normalize_fingerprint
from tests.conftest import CliResult


def _signed_by(directory: Path, out: Path) -> str:
    """A snapshot signed by the key in `directory` (created there), written to `out`; its fingerprint."""
    key = load_signing_key(directory)
    document = new_document({"name": "node-0007"}, {"env": {"status": "ok", "data": {"vars": {}}, "error": None,
                                                            "duration_s": 0.0}})
    out.write_text(json.dumps(sign_document(document, key)), "utf-8")
    return key.fingerprint


def test_a_strangers_signature_is_named_as_unknown_and_fails_verify(cli: Callable[..., CliResult],
                                                                     tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    stranger = _signed_by(tmp_path / "stranger", snap)
    done = cli("verify", str(snap))
    assert done.returncode == 1
    assert f"intact, signed by an unknown key {stranger}, which you do not trust" in done.stdout
    assert f"driftcheck key trust {stranger}" in done.stderr
    assert cli("verify", str(snap), "--trust", stranger).returncode == 0
    assert cli("verify", str(snap), "--trust", "SHA256:" + "A" * 43).returncode == 1
    report = json.loads(cli("verify", str(snap), "--format", "json").stdout)
    assert report["signer"]["state"] == "unknown" and report["trusted"] is False


def test_key_trusted_by_name_is_shown_by_name(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    stranger = _signed_by(tmp_path / "alice", snap)
    TrustStore().add(stranger, "alice@lab")
    done = cli("verify", str(snap))
    assert done.returncode == 0 and f"intact, signed by alice@lab ({stranger})" in done.stdout
    assert TrustStore().remove(stranger) and cli("verify", str(snap)).returncode == 1


def test_accept_new_trusts_on_first_use_only_when_asked(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    stranger = _signed_by(tmp_path / "bob", snap)
    assert cli("verify", str(snap)).returncode == 1
    assert TrustStore().entries() == []
    assert cli("verify", str(snap), "--accept-new", "--name", "bob").returncode == 0
    assert [(k.fingerprint, k.name) for k in TrustStore().entries()] == [(stranger, "bob")]
    assert cli("verify", str(snap)).returncode == 0


def test_an_altered_or_unsigned_snapshot_is_said_to_be_so(tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    _signed_by(tmp_path / "carol", snap)
    document = json.loads(snap.read_text("utf-8"))
    document["host"]["name"] = "elsewhere"
    assert TrustStore().signer_of(document).state == "altered"
    del document["signature"]
    assert TrustStore().signer_of(document).text() == "not signed"


def test_fingerprints_are_checked_and_public_keys_accepted(tmp_path: Path) -> None:
    key = load_signing_key(tmp_path / "dave")
    assert normalize_fingerprint(key.public_key_b64) == key.fingerprint
    assert normalize_fingerprint(key.fingerprint.removeprefix("SHA256:")) == key.fingerprint
    with pytest.raises(UsageError, match="not a key fingerprint"):
        normalize_fingerprint("SHA256:someoneelse")


def test_show_names_the_signer_as_verify_does(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    own = tmp_path / "own.json"
    assert cli("snapshot", "--probe", "env", "--no-store", "-o", str(own)).returncode == 0
    assert "signed by you" in cli("show", str(own)).stdout.splitlines()[0]
    stranger = tmp_path / "s.json"
    fingerprint = _signed_by(tmp_path / "stranger", stranger)
    assert f"signed by an unknown key {fingerprint}" in cli("show", str(stranger)).stdout.splitlines()[0]
