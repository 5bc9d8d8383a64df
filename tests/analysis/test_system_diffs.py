"""What a diff reports when one system, NCCL or environment fact moves, and nothing else.

Live pairs set a variable between two real snapshots of this machine; recorded pairs replay a real
recording and an edited copy of it (tests/data/hosts/*/SOURCE says what was edited).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA, CliResult

HOSTS = DATA / "hosts"


def changes_between(cli: Callable[..., CliResult], tmp_path: Path, a: Path, b: Path) -> list[dict[str, Any]]:
    done = cli("diff", str(a), str(b), "--format", "json")
    report = json.loads(done.stdout)
    assert done.returncode == (1 if report["changes"] else 0)
    return list(report["changes"])


def replayed(cli: Callable[..., CliResult], tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / f"{name}.json"
    done = cli("snapshot", "--replay", str(HOSTS / name), "--skip", "process", "--no-store", "-o", str(out), "-q",
               *extra)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize(("variable", "before", "after", "expected"), [
    ("NCCL_P2P_DISABLE", None, "1", [
        {"path": "probes.env.data.vars.NCCL_P2P_DISABLE", "kind": "added", "before": None, "after": "1",
         "category": "nccl_env"},
        {"path": "probes.nccl.data.env.NCCL_P2P_DISABLE", "kind": "added", "before": None, "after": "1",
         "category": "nccl_env"}]),
    ("OMP_NUM_THREADS", "4", "8", [
        {"path": "probes.env.data.vars.OMP_NUM_THREADS", "kind": "changed", "before": "4", "after": "8",
         "category": "env_var_other"}]),
])
def test_live_variable_change_is_exactly_that_change(tmp_path: Path, cli_process: Callable[..., CliResult],
                                                     variable: str, before: str | None, after: str,
                                                     expected: list[dict[str, Any]]) -> None:
    snapshots = []
    for value in (before, after):
        env = {"OMP_NUM_THREADS": "4"} | ({variable: value} if value is not None else {})
        out = tmp_path / f"{variable}-{value}.json"
        done = cli_process("snapshot", "--no-store", "-o", str(out), "-q", env=env)
        assert done.returncode == 0, done.stderr
        snapshots.append(out)
    diff = cli_process("diff", str(snapshots[0]), str(snapshots[1]), "--format", "json")
    assert diff.returncode == 1
    assert json.loads(diff.stdout)["changes"] == expected


@pytest.mark.parametrize(("scenario", "expected"), [
    ("debian12-vm-docker-nccl-p2p-disable", [
        ("probes.env.data.vars.NCCL_P2P_DISABLE", "added", None, "1", "nccl_env"),
        ("probes.nccl.data.env.NCCL_P2P_DISABLE", "added", None, "1", "nccl_env")]),
    ("debian12-vm-docker-omp-threads", [
        ("probes.env.data.vars.OMP_NUM_THREADS", "changed", "2", "8", "env_var_other")]),
    ("debian12-vm-docker-thp-always", [
        ("probes.system.data.thp.enabled", "changed", "madvise", "always", "thp_memory")]),
    ("debian12-vm-docker-cgroup-limits", [
        ("probes.system.data.cgroup.cpu_quota_cores", "changed", "max", 1.5, "container_limits"),
        ("probes.system.data.cgroup.memory_limit_bytes", "changed", "max", 17179869184, "container_limits")]),
])
def test_recorded_scenario_against_its_recording(tmp_path: Path, cli: Callable[..., CliResult], scenario: str,
                                                 expected: list[tuple[Any, ...]]) -> None:
    base = replayed(cli, tmp_path, "debian12-vm-docker")
    edited = replayed(cli, tmp_path, scenario)
    changes = changes_between(cli, tmp_path, base, edited)
    assert [(c["path"], c["kind"], c["before"], c["after"], c["category"]) for c in changes] == expected


def test_governor_change(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    a = replayed(cli, tmp_path, "debian12-vm-docker-cpufreq-performance")
    b = replayed(cli, tmp_path, "debian12-vm-docker-cpufreq-powersave")
    changes = changes_between(cli, tmp_path, a, b)
    # Every CPU moved from one governor to another: the count per governor, keyed by governor name.
    assert [(c["path"], c["kind"], c["before"], c["after"], c["category"]) for c in changes] == [
        ("probes.system.data.cpufreq.governors.performance", "removed", 2, None, "cpu_governor"),
        ("probes.system.data.cpufreq.governors.powersave", "added", None, 2, "cpu_governor")]
    explained = json.loads(cli("explain", str(a), str(b), "--format", "json").stdout)
    assert explained["explanations"][0]["category"] == "cpu_governor"


def test_infiniband_appearing_is_a_hardware_change(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    a = replayed(cli, tmp_path, "debian12-vm-docker")
    b = replayed(cli, tmp_path, "debian12-vm-docker-infiniband")
    changes = changes_between(cli, tmp_path, a, b)
    assert [(c["path"], c["kind"], c["category"]) for c in changes] == [
        ("probes.nccl.data.infiniband", "changed", "hardware_change")]
    assert changes[0]["before"] is None and set(changes[0]["after"]) == {"mlx5_0"}


def test_bare_machine_probes_are_unavailable_not_errors(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    out = tmp_path / "bare.json"
    done = cli("snapshot", "--replay", str(HOSTS / "bare-no-proc-sys"), "--no-store", "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    statuses = {name: p["status"] for name, p in json.loads(out.read_text())["probes"].items()}
    assert statuses["system"] == statuses["nccl"] == "unavailable"
    assert "process" not in statuses  # taken only when --pid/--process asks for it
    assert statuses["env"] == "ok"
    assert "error" not in statuses.values()
    asked = tmp_path / "bare-pid.json"
    done = cli("snapshot", "--replay", str(HOSTS / "bare-no-proc-sys"), "--pid", "1", "--no-store", "-o", str(asked))
    assert done.returncode == 0, done.stderr
    assert json.loads(asked.read_text())["probes"]["process"]["status"] == "unavailable"
