"""One door per verb: for every verb of snapshots and comparisons with `--format json`, the command prints
exactly what the library's result gives as `.to_json()` for the same inputs; the face takes its options as
keywords, and references or Snapshots alike."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import driftcheck
from driftcheck import api
from driftcheck.errors import OptionError
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.model import Snapshot, read_snapshot_file
from driftcheck.snapshot.signing import sign_document
from driftcheck.snapshot.trust import UntrustedSignerError
from tests.conftest import CliResult

PAIRS = Path(__file__).resolve().parent / "data" / "pairs"
# Pairs that rank an environment variable, a server argument, a machine-wide setting, and nothing at all.
CASES = ["env-thread-count", "server-attention-backend", "cpu-governor", "gpu-identity"]


def _pair(case: str) -> tuple[str, str]:
    return str(PAIRS / case / "a.json"), str(PAIRS / case / "b.json")


def _printed(done: CliResult) -> Any:
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _as_printed(value: Any) -> Any:
    """`value` as JSON text gives it back (tuples become lists), the form the command's output parses to."""
    return json.loads(json.dumps(value))


def _signed(case: str, side: str, tmp_path: Path) -> str:
    """The pair's `side` snapshot signed with this test's own key, written to a file of its own."""
    document = sign_document(read_snapshot_file(PAIRS / case / f"{side}.json").document, load_signing_key())
    path = tmp_path / f"{case}-{side}.json"
    path.write_text(json.dumps(document), "utf-8")
    return str(path)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("everything", [False, True])
def test_diff_json_is_the_library_json(cli: Callable[..., CliResult], case: str, everything: bool) -> None:
    a, b = _pair(case)
    printed = _printed(cli("diff", a, b, "--format", "json", *(["--all"] if everything else [])))
    result = driftcheck.diff(a, b, all=everything)
    assert printed == _as_printed(result.to_json())
    assert set(printed["signers"]) == {"a", "b"}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("everything", [False, True])
def test_explain_json_is_the_library_json(cli: Callable[..., CliResult], case: str, everything: bool) -> None:
    a, b = _pair(case)
    printed = _printed(cli("explain", a, b, "--format", "json", *(["--all"] if everything else [])))
    result = driftcheck.explain(a, b, all=everything)
    assert printed == _as_printed(result.to_json())
    # What the library once lacked: who signed each side, and the volatile facts `--all` weighs.
    assert set(result.to_json()["signers"]) == {"a", "b"}
    assert result.to_json()["signers"]["a"]["state"] == "unsigned"


def test_all_weighs_the_volatile_facts_in_the_library_as_in_the_command() -> None:
    a, b = _pair("env-other")
    assert driftcheck.explain(a, b, all=True).include_volatile
    assert not driftcheck.explain(a, b).include_volatile


def test_require_trusted_refuses_in_the_library_as_the_command_does(cli: Callable[..., CliResult],
                                                                    tmp_path: Path) -> None:
    a, b = _pair("env-thread-count")
    for verb in ("diff", "explain"):
        done = cli(verb, a, b, "--format", "json", "--require-trusted")
        assert done.returncode == 2 and "is not signed" in done.stderr, done.stderr
    with pytest.raises(UntrustedSignerError):
        driftcheck.explain(a, b, require_trusted=True)
    with pytest.raises(UntrustedSignerError):
        driftcheck.diff(a, b, require_trusted=True)
    mine_a, mine_b = _signed("env-thread-count", "a", tmp_path), _signed("env-thread-count", "b", tmp_path)
    printed = _printed(cli("explain", mine_a, mine_b, "--format", "json", "--require-trusted"))
    assert printed == _as_printed(driftcheck.explain(mine_a, mine_b, require_trusted=True).to_json())
    assert printed["signers"]["a"]["state"] == "you"


def test_references_and_snapshots_are_the_same_sides() -> None:
    a, b = _pair("env-thread-count")
    objects = [read_snapshot_file(Path(p)) for p in (a, b)]
    by_reference = driftcheck.explain(a, b).to_json()
    assert driftcheck.explain(*objects).to_json() == by_reference
    assert driftcheck.diff(objects[0], b).to_json() == driftcheck.diff(a, b).to_json()
    assert by_reference["explanations"][0]["title"].startswith("OMP_NUM_THREADS")


def test_show_json_is_the_library_json(cli: Callable[..., CliResult]) -> None:
    a, _ = _pair("env-thread-count")
    assert _printed(cli("show", a, "--format", "json")) == _as_printed(driftcheck.show(a).to_json())
    assert driftcheck.show(a).snapshot.id == driftcheck.load(a).id


@pytest.mark.parametrize("signed", [False, True])
def test_verify_json_is_the_library_json(cli: Callable[..., CliResult], tmp_path: Path, signed: bool) -> None:
    path = _signed("env-thread-count", "a", tmp_path) if signed else _pair("env-thread-count")[0]
    printed = _printed(cli("verify", path, "--format", "json"))
    verified = driftcheck.verify(path)
    assert printed == _as_printed(verified.to_json())
    assert printed["status"] == ("valid" if signed else "unsigned") and verified.trusted is signed


def test_log_json_is_the_library_json(cli: Callable[..., CliResult]) -> None:
    for case in ("env-thread-count", "cpu-governor"):
        api.keep_snapshot(read_snapshot_file(PAIRS / case / "b.json"))
    printed = _printed(cli("log", "--format", "json"))
    assert printed == _as_printed(driftcheck.log().to_json())
    assert len(printed) == 2
    assert _printed(cli("log", "--format", "json", "-n", "1")) == _as_printed(driftcheck.log(limit=1).to_json())


def test_take_snapshot_takes_keywords_or_a_request_not_both() -> None:
    replay = f"replay:{Path(__file__).resolve().parent / 'data' / 'hosts' / 'debian12-vm-docker'}"
    taken = driftcheck.take_snapshot(target=replay, probes=["system"], label="by keywords", keep=False)
    assert isinstance(taken, Snapshot) and taken.document["label"] == "by keywords"
    with pytest.raises(OptionError, match="not both"):
        driftcheck.take_snapshot(driftcheck.SnapshotRequest(target=replay), label="and a keyword", keep=False)


def test_a_confirm_request_is_checked_when_built() -> None:
    with pytest.raises(OptionError, match="max_pairs=1: a trial needs at least 2 rounds"):
        driftcheck.ConfirmRequest(command=["python", "bench.py"], max_pairs=1)
    with pytest.raises(driftcheck.UsageError, match="--wall compares wall time"):
        driftcheck.ConfirmRequest(command=["python", "bench.py"], wall=True, figure="decode")
    with pytest.raises(driftcheck.UsageError, match="needs your benchmark command"):
        driftcheck.ConfirmRequest(command=[])


def test_explain_of_two_runs_carries_their_telemetry_in_the_library_too(cli_process: Callable[..., CliResult],
                                                                         cli: Callable[..., CliResult]) -> None:
    for figure in ("12.5", "19.0"):
        done = cli_process("run", "--probe", "env", "--metric", "score=^score ([0-9.]+)", "--", sys.executable,
                           "-c", f"print('score {figure}')")
        assert done.returncode == 0, done.stderr
    printed = _printed(cli("explain", "run:1", "run:2", "--format", "json"))
    result = driftcheck.explain("run:1", "run:2")
    assert printed == _as_printed(result.to_json())
    assert result.runs is not None and "runs" in printed


REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_import_reports_keeps_the_import_as_the_command_does(cli: Callable[..., CliResult]) -> None:
    paste = REPORTS / "vllm_07.txt"
    imported = driftcheck.import_reports([paste], label="from an issue")
    assert imported.document["origin"] == "imported" and imported.document["label"] == "from an issue"
    assert driftcheck.load("@latest").id == imported.id
    assert not imported.document.get("signature")
    from_stdin = driftcheck.import_reports(["-"], stdin=paste.read_text("utf-8"), keep=False)
    assert from_stdin.document["probes"] == imported.document["probes"]
    with pytest.raises(driftcheck.UsageError, match="can be read once"):
        driftcheck.import_reports(["-", "-"], stdin="x")
    assert cli("import", str(paste)).stdout.strip() == driftcheck.load("@latest").short_id


def test_report_writes_the_files_the_command_writes(tmp_path: Path) -> None:
    a, b = _pair("env-thread-count")
    files = driftcheck.report(b, against=a, output=tmp_path / "out")
    assert files.markdown is not None and files.markdown.parent == tmp_path / "out"
    assert "OMP_NUM_THREADS" in files.markdown.read_text("utf-8")
    assert files.snapshot is not None and files.snapshot.exists()


def test_record_saves_what_the_probes_read(tmp_path: Path) -> None:
    recorded = driftcheck.record(tmp_path / "rec", probes=["env"])
    assert set(recorded.outcomes) == {"env"} and recorded.outcomes["env"].status == "ok"
    assert recorded.directory == tmp_path / "rec" and any((tmp_path / "rec").iterdir())
    with pytest.raises(driftcheck.UsageError):
        driftcheck.record(tmp_path / "rec", probes=["env"])  # not empty any more
