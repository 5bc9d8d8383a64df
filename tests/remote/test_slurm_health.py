"""`driftcheck slurm-health` on the real single-node Slurm (munged, slurmctld, slurmd of Debian's slurm-wlm 22.05)
the fleet tests start: a drifted node is drained with driftcheck's reason, resumed once the drift is gone; a
node drained by someone else is never resumed, nor re-reasoned. Drift is OMP_NUM_THREADS=1 against a
baseline taken without it, as in tests/analysis/test_gate.py. The health check runs as a process, as
slurmd runs a HealthCheckProgram."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from driftcheck.api.slurm_health import DEFAULT_DEADLINE_S, SLURM_LIMIT_S
from tests.conftest import REPO_ROOT, CliResult
from tests.remote.slurm_cluster import SlurmCluster, needs_slurm, start_cluster

pytestmark = [needs_slurm, pytest.mark.slow]


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlurmCluster]:
    cluster = start_cluster(tmp_path / "slurm")
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    try:
        yield cluster
    finally:
        cluster.stop()


def _sinfo(cluster: SlurmCluster, *args: str) -> str:
    done = subprocess.run(["sinfo", *args], env=cluster.env(), capture_output=True, text=True, timeout=30,
                          check=True)
    return done.stdout


def _state(cluster: SlurmCluster) -> tuple[str, str]:
    state, _, reason = _sinfo(cluster, "--noheader", "--Node", "--format", "%T|%E").strip().partition("|")
    return state, reason


def _health(cli_process: Callable[..., CliResult], drift: bool) -> tuple[CliResult, float]:
    started = time.monotonic()
    result = cli_process("slurm-health", "--format", "json", env={"OMP_NUM_THREADS": "1"} if drift else {})
    return result, time.monotonic() - started


def test_a_drifted_node_is_drained_with_the_cause_and_resumed_once_the_drift_is_gone(
        slurm: SlurmCluster, cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("baseline", "save", "default").returncode == 0
    healthy, _ = _health(cli_process, drift=False)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert json.loads(healthy.stdout)["action"] == "none"

    drifted, wall_s = _health(cli_process, drift=True)
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr + slurm.log_tail()
    outcome = json.loads(drifted.stdout)
    assert outcome["action"] == "drained" and outcome["node"] == slurm.node
    assert _state(slurm) == ("drained", "driftcheck: OMP_NUM_THREADS unset -> 1")
    assert "driftcheck: OMP_NUM_" in _sinfo(slurm, "-R")  # sinfo -R cuts the reason to its column
    # The wall time of the whole process against Slurm's kill after 60 s (printed with -s).
    print(f"slurm-health wall time: {wall_s:.2f} s (check {outcome['elapsed_s']:.2f} s) of Slurm's {SLURM_LIMIT_S:g} s")
    assert wall_s < SLURM_LIMIT_S

    again, _ = _health(cli_process, drift=True)
    assert again.returncode == 1 and json.loads(again.stdout)["action"] == "kept drained"

    cured, _ = _health(cli_process, drift=False)
    assert cured.returncode == 0, cured.stdout + cured.stderr
    assert json.loads(cured.stdout)["action"] == "resumed"
    state, reason = _state(slurm)
    assert "drain" not in state and reason == "none"


def test_a_node_drained_by_someone_else_is_never_resumed_nor_re_reasoned(
        slurm: SlurmCluster, cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("baseline", "save", "default").returncode == 0
    subprocess.run(["scontrol", "update", f"nodename={slurm.node}", "state=drain", "reason=disk replacement"],
                   env=slurm.env(), check=True, timeout=30)
    for drift in (False, True):
        result, _ = _health(cli_process, drift=drift)
        assert result.returncode == (1 if drift else 0), result.stdout + result.stderr
        assert json.loads(result.stdout)["action"] == "left alone (drained by someone else)"
        assert _state(slurm) == ("drained", "disk replacement")


def test_no_baseline_is_a_clear_reason_fast_and_the_node_is_untouched(
        slurm: SlurmCluster, cli_process: Callable[..., CliResult]) -> None:
    result, wall_s = _health(cli_process, drift=True)
    assert result.returncode == 2
    assert result.stderr.startswith("driftcheck: error: nothing to check against") and "Traceback" not in result.stderr
    assert wall_s < DEFAULT_DEADLINE_S
    assert _state(slurm)[0].startswith("idle")


def test_a_node_slurm_does_not_know_is_trouble_not_a_drain(
        slurm: SlurmCluster, cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("baseline", "save", "default").returncode == 0
    result = cli_process("slurm-health", "--node", "no-such-node", env={"OMP_NUM_THREADS": "1"})
    assert result.returncode == 2 and "Slurm knows no node no-such-node" in result.stderr
    assert _state(slurm)[0].startswith("idle")


def test_slurmd_itself_runs_it_as_health_check_program_drains_on_drift_and_resumes(
        tmp_path: Path, driftcheck_home: Path) -> None:
    # The program slurmd runs: driftcheck in a fixed environment (as slurmd's own is not the test's), with
    # OMP_NUM_THREADS=1 only while the file `drift` exists. The baseline is saved through the same program.
    flag, log = tmp_path / "drift", tmp_path / "health.log"
    conf = tmp_path / "slurm" / "slurm.conf"
    program = tmp_path / "driftcheck-health"
    program.write_text(
        "#!/bin/sh\n"
        'extra=""\n'
        f'[ -e {flag} ] && extra="OMP_NUM_THREADS=1"\n'
        '[ $# -eq 0 ] && set -- slurm-health\n'
        f"exec env -i PATH=/usr/sbin:/usr/bin:/bin HOME={tmp_path} SLURM_CONF={conf} "
        f"DRIFTCHECK_HOME={driftcheck_home} PYTHONPATH={REPO_ROOT} $extra {sys.executable} -m driftcheck "
        f'"$@" >>{log} 2>&1\n', "utf-8")
    program.chmod(0o755)
    cluster = start_cluster(tmp_path / "slurm", f"HealthCheckProgram={program}\nHealthCheckInterval=2\n")
    try:
        assert subprocess.run([str(program), "baseline", "save", "default"], timeout=120).returncode == 0
        flag.touch()
        _wait_for_state(cluster, lambda state, reason: state == "drained"
                        and reason == "driftcheck: OMP_NUM_THREADS unset -> 1", log)
        flag.unlink()
        _wait_for_state(cluster, lambda state, reason: "drain" not in state and reason == "none", log)
    finally:
        cluster.stop()


def _wait_for_state(cluster: SlurmCluster, wanted: Callable[[str, str], bool], log: Path,
                    timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if wanted(*_state(cluster)):
            return
        time.sleep(0.5)
    raise AssertionError(f"node state {_state(cluster)} after {timeout_s:g} s\n"
                         f"{log.read_text(errors='replace')[-3000:] if log.exists() else 'no health log'}\n"
                         f"{cluster.log_tail()}")


def test_a_check_past_its_deadline_is_trouble_and_touches_nothing(
        slurm: SlurmCluster, cli_process: Callable[..., CliResult]) -> None:
    assert cli_process("baseline", "save", "default").returncode == 0
    result = cli_process("slurm-health", "--deadline", "0.01", env={"OMP_NUM_THREADS": "1"})
    assert result.returncode == 2
    assert result.stderr == "driftcheck: error: the check did not finish within 0.01 s\n"
    assert _state(slurm)[0].startswith("idle")


def test_a_deadline_at_slurms_limit_is_refused(cli_process: Callable[..., CliResult]) -> None:
    result = cli_process("slurm-health", "--deadline", "60")
    assert result.returncode == 2 and "less than Slurm's 60 s" in result.stderr and "Traceback" not in result.stderr
