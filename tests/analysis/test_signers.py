"""Who signed each side: diff, explain, check, baseline save and fleet name an untrusted side first and in JSON,
and `--require-trusted` refuses it (one line, exit 2) before anything is compared."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.signers import require_trusted, signers_of
from driftcheck.snapshot.keys import KeyPair, load_signing_key
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.signing import sign_document
from driftcheck.snapshot.trust import TrustStore, UntrustedSignerError
from driftcheck.store.snapshots import Store
from tests.conftest import DATA, CliResult

Cli = Callable[..., CliResult]


def _document(value: str) -> dict[str, Any]:
    return new_document({"name": "node-0007"}, {"env": {"status": "ok", "data": {"vars": {"OMP_NUM_THREADS": value}},
                                                        "error": None, "duration_s": 0.0}})


def _write(path: Path, value: str, key: KeyPair | None) -> Path:
    document = _document(value)
    path.write_text(json.dumps(sign_document(document, key) if key else document), "utf-8")
    return path


@pytest.fixture
def stranger(tmp_path: Path) -> KeyPair:
    return load_signing_key(tmp_path / "stranger")


def test_key_trust_untrust_and_trusted_list_the_keys(cli: Cli, stranger: KeyPair) -> None:
    own = json.loads(cli("key", "--format", "json").stdout)["fingerprint"]
    done = cli("key", "trust", stranger.public_key_b64, "--name", "bob")
    assert done.returncode == 0 and f"trusted {stranger.fingerprint} as bob" in done.stdout
    listed = json.loads(cli("key", "trusted", "--format", "json").stdout)
    assert listed == [{"fingerprint": own, "name": "you"}, {"fingerprint": stranger.fingerprint, "name": "bob"}]
    assert cli("key", "trusted").stdout.splitlines() == [f"{own}  you", f"{stranger.fingerprint}  bob"]
    assert cli("key", "untrust", stranger.fingerprint).returncode == 0
    assert TrustStore().entries() == []
    assert cli("key", "untrust", stranger.fingerprint).returncode == 1
    refused = cli("key", "untrust", own)
    assert refused.returncode == 2 and "your own key" in refused.stderr
    assert cli("key", "trust", "SHA256:nope").returncode == 2
    assert "fingerprint:" in cli("key").stdout and "fingerprint:" in cli("key", "show").stdout


def test_diff_names_a_strangers_side_first_and_require_trusted_refuses_it(cli: Cli, tmp_path: Path,
                                                                         stranger: KeyPair) -> None:
    a = _write(tmp_path / "a.json", "1", load_signing_key())
    b = _write(tmp_path / "b.json", "8", stranger)
    done = cli("diff", str(a), str(b))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("! B ")
    assert f"signed by an unknown key {stranger.fingerprint}" in done.stdout.splitlines()[0]
    signers = json.loads(cli("diff", str(a), str(b), "--format", "json").stdout)["signers"]
    assert (signers["a"]["state"], signers["b"]["state"]) == ("you", "unknown")
    assert signers["b"]["fingerprint"] == stranger.fingerprint and signers["b"]["trusted"] is False
    refused = cli("diff", str(a), str(b), "--require-trusted")
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.splitlines()) == 1
    assert "--require-trusted: B" in refused.stderr and stranger.fingerprint in refused.stderr
    # Trusted by name: no warning line, and the flag lets it through.
    assert cli("key", "trust", stranger.fingerprint, "--name", "bob").returncode == 0
    trusted = cli("diff", str(a), str(b), "--require-trusted")
    assert trusted.returncode == 1 and not trusted.stdout.startswith("!")
    signers = json.loads(cli("diff", str(a), str(b), "--format", "json").stdout)["signers"]
    assert signers["b"]["name"] == "bob" and signers["b"]["trusted"] is True


def test_explain_names_an_unsigned_side_in_text_markdown_and_json(cli: Cli, tmp_path: Path) -> None:
    a = _write(tmp_path / "a.json", "1", None)
    b = _write(tmp_path / "b.json", "8", load_signing_key())
    text = cli("explain", str(a), str(b))
    assert text.returncode == 1 and text.stdout.splitlines()[0].startswith("! A ")
    assert text.stdout.splitlines()[0].endswith(": not signed")
    markdown = cli("explain", str(a), str(b), "--format", "markdown").stdout.splitlines()
    assert markdown[0] == "## driftcheck explain" and markdown[2].startswith("> **A ")
    assert "not signed" in markdown[2]
    signers = json.loads(cli("explain", str(a), str(b), "--format", "json").stdout)["signers"]
    assert (signers["a"]["state"], signers["b"]["state"]) == ("unsigned", "you")
    refused = cli("explain", str(a), str(b), "--require-trusted")
    assert refused.returncode == 2 and "--require-trusted: A" in refused.stderr and "not signed" in refused.stderr


def test_a_pasted_report_is_said_to_be_imported_and_unsigned(cli: Cli, tmp_path: Path) -> None:
    own = _write(tmp_path / "own.json", "1", load_signing_key())
    paste = DATA / "reports" / "sglang_08.txt"
    done = cli("diff", str(paste), str(own))
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.splitlines()[0].endswith("imported from a paste: not signed")
    signers = json.loads(cli("diff", str(paste), str(own), "--format", "json").stdout)["signers"]
    assert signers["a"]["note"] == "imported from a paste" and signers["a"]["state"] == "unsigned"


def test_check_names_an_untrusted_reference_and_require_trusted_refuses_before_taking_anything(
        cli: Cli, tmp_path: Path, stranger: KeyPair) -> None:
    reference = _write(tmp_path / "ref.json", "1", stranger)
    refused = cli("check", "--against", str(reference), "--probe", "env", "--require-trusted")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--require-trusted: the reference" in refused.stderr and stranger.fingerprint in refused.stderr
    assert Store().entries() == []  # refused before the fresh snapshot was taken
    done = cli("check", "--against", str(reference), "--probe", "env", "--no-store")
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.splitlines()[0].startswith("! A ") and stranger.fingerprint in done.stdout.splitlines()[0]
    signers = json.loads(cli("check", "--against", str(reference), "--probe", "env", "--no-store",
                             "--format", "json").stdout)["signers"]
    assert (signers["a"]["state"], signers["b"]["state"]) == ("unknown", "you")


def test_check_require_trusted_lets_the_users_own_reference_and_fresh_side_through(cli: Cli, tmp_path: Path) -> None:
    reference = _write(tmp_path / "ref.json", "1", load_signing_key())
    done = cli("check", "--against", str(reference), "--probe", "env", "--no-store", "--require-trusted",
               "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    signers = json.loads(done.stdout)["signers"]
    assert signers["a"]["state"] == "you" and signers["b"]["state"] == "you"


def test_baseline_save_names_an_untrusted_snapshot_and_require_trusted_refuses_it(cli: Cli, tmp_path: Path,
                                                                                  stranger: KeyPair) -> None:
    snap = _write(tmp_path / "s.json", "1", stranger)
    refused = cli("baseline", "save", "theirs", str(snap), "--require-trusted")
    assert refused.returncode == 2 and "--require-trusted: SNAP" in refused.stderr
    assert "theirs" not in cli("baseline", "list").stdout
    saved = cli("baseline", "save", "theirs", str(snap))
    assert saved.returncode == 0
    first, second = saved.stdout.splitlines()[:2]
    assert first.startswith("! SNAP ") and stranger.fingerprint in first and second.startswith("baseline theirs")


def test_fleet_refuses_an_untrusted_against_before_any_host(cli: Cli, tmp_path: Path, stranger: KeyPair) -> None:
    reference = _write(tmp_path / "ref.json", "1", stranger)
    # Port 1 of a host that cannot exist: a refusal after contacting it would take a time-out, not a line.
    refused = cli("fleet", "--against", str(reference), "--require-trusted", "--host-timeout", "5",
                  "nowhere.invalid:1")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--require-trusted: --against" in refused.stderr and stranger.fingerprint in refused.stderr


def test_signers_of_and_require_trusted_in_the_library(tmp_path: Path, stranger: KeyPair) -> None:
    own = Snapshot(sign_document(_document("1"), load_signing_key()), "own.json")
    theirs = Snapshot(sign_document(_document("2"), stranger), "theirs.json")
    signers = signers_of(own, theirs)
    assert [side.role for side in signers.untrusted()] == ["B"]
    assert signers.lines() == [f"! B {theirs.short_id} (theirs.json): signed by an unknown key "
                               f"{stranger.fingerprint} (not a key you trust: compare it with its owner's, then "
                               "`driftcheck key trust`)"]
    require_trusted(signers, keys=["a"])
    with pytest.raises(UntrustedSignerError) as caught:
        require_trusted(signers)
    assert caught.value.signer.fingerprint == stranger.fingerprint and caught.value.exit_code == 2


def test_a_source_or_trusted_name_with_control_characters_stays_one_plain_line(tmp_path: Path,
                                                                              stranger: KeyPair) -> None:
    theirs = Snapshot(sign_document(_document("2"), stranger), "evil\n\x1b[2Jname.json")
    line = signers_of(theirs, theirs).lines()[0]
    assert "\n" not in line and "\x1b" not in line and "evil\\n\\x1b[2Jname.json" in line
    store = TrustStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(f"{stranger.fingerprint} bob\x1b[31m\n", "utf-8")
    assert store.signer_of(theirs.document).text() == f"signed by a trusted key {stranger.fingerprint}"
