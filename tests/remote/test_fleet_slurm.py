"""`driftcheck fleet --slurm` against a real single-node Slurm (munged, slurmctld, slurmd) started here."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from driftcheck.remote.slurm import split_labelled
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult
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


def test_fleet_over_slurm_returns_one_verified_snapshot_per_node(slurm: SlurmCluster,
                                                                 cli: Callable[..., CliResult]) -> None:
    result = cli("fleet", "--slurm", "--format", "json", "--probe", "env", "--probe", "python", "--", "-N", "1")
    assert result.returncode == 0, result.stdout + result.stderr + slurm.log_tail()
    report = json.loads(result.stdout)
    assert report["failures"] == {}
    assert list(report["snapshots"]) == [slurm.node]
    stored = Store().entries()
    assert [entry.id for entry in stored] == list(report["snapshots"].values())
    assert report["uniform"] is True


def test_a_node_whose_snapshot_was_altered_is_a_failure(slurm: SlurmCluster, tmp_path: Path,
                                                        cli: Callable[..., CliResult]) -> None:
    forger = tmp_path / "forge.sh"
    forger.write_text(f'#!/bin/sh\n{sys.executable} -m driftcheck "$@" | sed \'s/"label": null/"label": "x"/\'\n')
    forger.chmod(0o755)
    result = cli("fleet", "--slurm", "--driftcheck", str(forger), "--format", "json", "--probe", "env")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["snapshots"] == {}
    assert "signature" in report["failures"]["task 0"]
    assert Store().entries() == []


def test_srun_labels_split_back_into_one_text_per_task() -> None:
    stream = "0: {\n1: {\n0:   \"a\": 1\n1:   \"b\": 2\n0: }\n1: }\nsrun: warning\n"
    assert split_labelled(stream) == {0: '{\n  "a": 1\n}\n', 1: '{\n  "b": 2\n}\n'}


def test_hosts_with_slurm_are_a_usage_error(cli: Callable[..., CliResult]) -> None:
    result = cli("fleet", "--slurm", "gpu01")
    assert result.returncode == 2
    assert "srun options go after" in result.stderr


def test_a_node_signed_by_a_key_you_do_not_trust_is_named_and_refused_on_request(
        slurm: SlurmCluster, tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    # The node's driftcheck has a home of its own: an intact snapshot, signed by a key this user never trusted.
    stranger = tmp_path / "stranger.sh"
    stranger.write_text(f'#!/bin/sh\nDRIFTCHECK_HOME={tmp_path / "node-home"} exec {sys.executable} '
                        '-m driftcheck "$@"\n')
    stranger.chmod(0o755)
    named = cli("fleet", "--slurm", "--driftcheck", str(stranger), "--probe", "env", "--no-store")
    assert named.returncode == 0, named.stdout + named.stderr + slurm.log_tail()
    assert named.stdout.startswith(f"! {slurm.node} ") and "signed by an unknown key SHA256:" in named.stdout
    report = json.loads(cli("fleet", "--slurm", "--driftcheck", str(stranger), "--probe", "env", "--no-store",
                            "--format", "json").stdout)
    assert report["signers"][slurm.node]["state"] == "unknown" and report["failures"] == {}
    refused = cli("fleet", "--slurm", "--driftcheck", str(stranger), "--probe", "env", "--require-trusted",
                  "--format", "json")
    assert refused.returncode == 2
    report = json.loads(refused.stdout)
    assert report["snapshots"] == {} and "which you do not trust" in report["failures"][slurm.node]
    assert Store().entries() == []


def test_fleet_bench_over_slurm_measures_inside_the_nodes_snapshot(slurm: SlurmCluster,
                                                                   cli: Callable[..., CliResult]) -> None:
    # One node (the fixture's): its figures travel in its signed snapshot; one host is too few to judge.
    result = cli("fleet", "--slurm", "--format", "json", "--probe", "env", "--bench", "--runs", "1",
                 "--budget-s", "1", "--", "-N", "1")
    assert result.returncode == 0, result.stdout + result.stderr + slurm.log_tail()
    report = json.loads(result.stdout)
    bench = report["bench"]
    assert bench["failures"] == {} and list(bench["hosts"]) == [slurm.node]
    measured = bench["hosts"][slurm.node]
    assert (measured["suite"], measured["device"], measured["runs"], measured["verdict"]) == ("quick", "cpu", 1, None)
    assert measured["figures"]["gemm_fp32_1024_gflops"]["value"] > 0
    assert bench["judged"] is False
    assert bench["note"] == "fleet too small to judge by measurement: 1 host measured on cpu, 3 needed"
    stored = Store().entries()
    assert [entry.id for entry in stored] == list(report["snapshots"].values())
    assert "bench" in Store().load(stored[0].id).probes
    # The bench's figures move run to run: they are no configuration finding.
    assert report["uniform"] is True


def test_bench_concurrency_with_slurm_is_a_usage_error(cli: Callable[..., CliResult]) -> None:
    result = cli("fleet", "--slurm", "--bench", "--bench-concurrency", "2")
    assert result.returncode == 2
    assert "every node measures on its own node" in result.stderr
