"""`driftcheck check`: exit 0 right after `baseline save`, 1 after one relevant change, 1 on a policy
violation alone, 2 on trouble. Real snapshots of this machine, taken by real processes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.analysis.policy import Policy, PolicyError, parse_policy, violations
from driftcheck.api.check import load_policy
from driftcheck.errors import DriftcheckError
from driftcheck.snapshot.model import read_snapshot_file
from tests.conftest import CliResult

PAIRS = Path(__file__).resolve().parents[1] / "data" / "pairs"


def test_check_passes_right_after_baseline_save_and_fails_after_a_change(
        cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("baseline", "save", "default").returncode == 0
    clean = cli_process("check")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "check: ok" in clean.stdout
    drift = cli_process("check", env={"OMP_NUM_THREADS": "1"})
    assert drift.returncode == 1
    assert "OMP_NUM_THREADS unset -> 1" in drift.stdout
    assert "unset OMP_NUM_THREADS" in drift.stdout
    assert "check: DRIFT" in drift.stdout


def test_low_confidence_difference_is_shown_but_not_drift(cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("baseline", "save", "default").returncode == 0
    result = cli_process("check", "--no-store", env={"SOME_UNRELATED_SETTING": "x"})
    assert result.returncode == 0
    assert "SOME_UNRELATED_SETTING unset -> x" in result.stdout
    strict = cli_process("check", "--no-store", "--min-confidence", "0", env={"SOME_UNRELATED_SETTING": "x"})
    assert strict.returncode == 1


def test_policy_violation_alone_fails(cli_process: Callable[..., CliResult], tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("must:\n  - {match: probes.env.data.vars.OMP_NUM_THREADS, equals: '8', why: pinned threads}\n",
                      "utf-8")
    assert cli_process("baseline", "save", "default", env={"OMP_NUM_THREADS": "4"}).returncode == 0
    result = cli_process("check", "--policy", str(policy), "--format", "json", env={"OMP_NUM_THREADS": "4"})
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["explanations"] == []
    assert report["violations"] == ["probes.env.data.vars.OMP_NUM_THREADS is 4, must be 8 (pinned threads)"]


def test_ignore_pattern_lets_a_change_pass(cli_process: Callable[..., CliResult], tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("ignore:\n  - probes.env.data.vars.OMP_*\n", "utf-8")
    assert cli_process("baseline", "save", "default").returncode == 0
    assert cli_process("check", "--policy", str(policy), env={"OMP_NUM_THREADS": "1"}).returncode == 0


def test_check_against_previous_snapshot_when_no_default(cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("check").returncode == 2  # nothing to compare with
    assert cli_process("snapshot", "-q", "--probe", "env", "--probe", "python").returncode == 0
    assert cli_process("check", "--against", "@latest", "--no-store").returncode == 0
    assert cli_process("check", "--no-store", env={"NCCL_DEBUG": "INFO"}).returncode == 1


def test_bad_policy_is_trouble(cli_process: Callable[..., CliResult], tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("must:\n  - {match: probes.env.data.vars.X}\n", "utf-8")
    assert cli_process("baseline", "save", "default").returncode == 0
    result = cli_process("check", "--policy", str(policy))
    assert result.returncode == 2 and "exactly one of" in result.stderr and "Traceback" not in result.stderr
    result = cli_process("check", "--policy", str(tmp_path / "missing.yaml"))
    assert result.returncode == 2 and "cannot read" in result.stderr


def _policy(text: str, tmp_path: Path) -> Policy:
    path = tmp_path / "p.yaml"
    path.write_text(text, "utf-8")
    return load_policy(path)


def test_must_facts_on_a_recorded_gpu_snapshot(tmp_path: Path) -> None:
    snapshot = read_snapshot_file(PAIRS / "gpu-other-process" / "b.json")
    policy = _policy(
        "must:\n"
        "  - {match: 'probes.gpu.data.gpus.*.persistence_mode', equals: true}\n"
        "  - {match: 'probes.gpu.data.gpus.*.processes', equals: {}}\n"
        "  - {match: 'probes.gpu.data.gpus.*.power.limit_w', min: 700}\n"
        "  - {match: 'probes.env.data.vars.NCCL_*', exactly: {NCCL_CUMEM_ENABLE: '0', NCCL_VERSION: 2.25.1-1}}\n"
        "  - {match: 'probes.env.data.vars.NCCL_P2P_DISABLE', absent: true}\n"
        "  - {match: 'probes.gpu.data.gpus.*.locked_clocks.gpu_max_mhz', equals: 1980}\n", tmp_path)
    found = violations(policy, snapshot)
    assert len(found) == 2
    assert found[0].startswith("probes.gpu.data.gpus.GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa.processes is ")
    assert found[1] == "probes.gpu.data.gpus.*.locked_clocks.gpu_max_mhz: not recorded in the snapshot " \
                       "(is its probe taken?)"


def test_tolerance_counts_small_moves_as_no_change(tmp_path: Path) -> None:
    from driftcheck.analysis.gate import check_against

    # A setting (a power limit 700 -> 500 W); a reading (a clock) never fails the gate at all.
    a = read_snapshot_file(PAIRS / "gpu-power-limit-lowered" / "a.json")
    b = read_snapshot_file(PAIRS / "gpu-power-limit-lowered" / "b.json")
    assert check_against(a, b).drift
    limits = "probes.gpu.data.gpus.*.power.limit_w|enforced_limit_w"
    loose = _policy(f"tolerances:\n  - {{match: '{limits}', rel: 0.5}}\n", tmp_path)
    assert not check_against(a, b, loose).drift
    tight = _policy(f"tolerances:\n  - {{match: '{limits}', abs: 30}}\n", tmp_path)
    assert check_against(a, b, tight).drift


@pytest.mark.parametrize("text", ["[1, 2]", "surprise: 1", "tolerances:\n  - {match: x}",
                                  "must:\n  - {match: x, in: 3}", "ignore:\n  - 'a..b'"])
def test_malformed_policies(text: str) -> None:
    import yaml

    with pytest.raises(DriftcheckError):
        parse_policy(yaml.safe_load(text), "p.yaml")


@pytest.mark.parametrize(("text", "message"), [
    ("ignore: probes.env.data.vars.HOSTNAME\n", "`ignore` takes a list of path patterns"),
    ("ignore: {a: 1}\n", "`ignore` takes a list of path patterns"),
    ("tolerances: {match: x, abs: 1}\n", "`tolerances` takes a list of mappings"),
    ("tolerances: [{match: x, rel: -1}]\n", "cannot be negative"),
    ("tolerances: [{match: x, abs: fast}]\n", "must be a number"),
    ("must: [{match: probes.x, min: abc}]\n", "must be a number"),
    ("must: [{match: probes.x, max: [1]}]\n", "must be a number"),
])
def test_policy_shape_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(text, "utf-8")
    with pytest.raises(PolicyError, match=message):
        load_policy(policy)


def test_policy_that_is_not_text(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(b"\xff\xfe\x00\x01garbage")
    with pytest.raises(PolicyError, match="not UTF-8"):
        load_policy(policy)
