"""Hosts declare what they can do; the probes and the runner decide by that, never by a host's class."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from driftcheck import errors
from driftcheck.hosts import LocalHost, RecordingHost, ReplayHost
from driftcheck.hosts.ssh import SSHHost
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.bench import BenchProbe
from driftcheck.probes.runner import outcome_from_exception, run_one
from driftcheck.probes.system import SystemProbe


def test_each_host_declares_its_capabilities(tmp_path: Path) -> None:
    (tmp_path / "host.json").write_text(json.dumps({"format": 1, "host": {"name": "r"}}))
    local, replay, ssh = LocalHost(), ReplayHost(tmp_path), SSHHost("example.invalid")
    recording = RecordingHost(local)
    assert local.capabilities.in_process and local.capabilities.hash_cache and not local.capabilities.few_calls
    # A recording must be replayable: no in-process NVML, no hash cache, one hash call.
    assert not recording.capabilities.in_process and not recording.capabilities.hash_cache
    assert recording.capabilities.few_calls
    assert replay.capabilities.recorded and not replay.capabilities.hash_cache
    assert not ssh.capabilities.in_process and ssh.capabilities.few_calls and ssh.capabilities.hash_cache
    assert ssh.target_python == "python3"


def test_benchmarks_refuse_a_host_that_cannot_run_code_here(tmp_path: Path) -> None:
    outcome = run_one(BenchProbe(), SSHHost("example.invalid"), ProbeOptions(bench=BenchRequest("quick")))
    assert outcome.status == "unavailable"


@pytest.mark.parametrize(("failure", "status"), [
    (FileNotFoundError("x"), "unavailable"), (PermissionError("x"), "denied"),
    (errors.CommandTimeout("x"), "timeout"), (errors.ConnectionLost("x"), "error"),
    (errors.TargetPythonError("x"), "unavailable"), (errors.FactsScriptError("x"), "error"),
    (errors.ProbeDenied("x"), "denied"), (ValueError("x"), "error"),
])
def test_one_table_maps_failures_to_outcomes(failure: Exception, status: str) -> None:
    assert outcome_from_exception(failure, 0.0).status == status
    assert errors.probe_status_by_name(type(failure).__name__) == status
    rebuilt = errors.failure_by_name(type(failure).__name__, "m")
    assert errors.probe_status(rebuilt) == status


def test_a_host_whose_reads_are_not_its_own_view_reports_no_process_facts(tmp_path: Path) -> None:
    class Elsewhere(LocalHost):
        capabilities = replace(LocalHost.capabilities, process_local_reads=False)

    data = run_one(SystemProbe(), Elsewhere(), ProbeOptions()).data or {}
    assert data["affinity"] == {"cpus": None, "mems": None}
    assert data["memlock_limit_bytes"] is None
    assert data["cgroup"]["version"] is None
    assert data["memory"]["total_kib"]  # the machine-wide facts are still read
