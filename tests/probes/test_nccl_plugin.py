"""The NCCL network plugin a process mapped: read from a real /proc/PID/maps excerpt (its SOURCE says which
lines are real and which are added), from a live process here, and what explain makes of a lost plugin."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.hosts import LocalHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.process import ProcessProbe, nccl_mapped
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import run_one
from driftcheck.snapshot.model import read_snapshot_file
from tests.conftest import DATA

REAL_MAPS = (DATA / "processes" / "gvisor-9827-nccl-maps" / "maps").read_text("utf-8")
OFI_PLUGIN = "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so"
# What mapping the aws-ofi-nccl plugin adds to those lines (synthetic: see SOURCE).
WITH_PLUGIN = REAL_MAPS + "".join(
    f"7eb1656{i}000-7eb1656{i + 1}000 {mode} 0000{i}000 00:19 1201                       {OFI_PLUGIN}\n"
    for i, mode in enumerate(("r--p", "r-xp", "r--p", "rw-p")))
PAIRS = DATA / "pairs"


def test_the_real_maps_show_nccl_loaded_without_a_network_plugin() -> None:
    assert nccl_mapped(REAL_MAPS) == {"loaded": True, "net_plugins": []}


def test_a_mapped_plugin_is_named_by_the_file_the_kernel_lists() -> None:
    assert nccl_mapped(WITH_PLUGIN) == {"loaded": True, "net_plugins": [OFI_PLUGIN]}
    # NCCL's shared-memory segments (/dev/shm/nccl-*) and its tuner plugin are not network plugins.
    shm = "7f00-7f10 rw-s 00000000 00:1a 99 /dev/shm/nccl-Xy12Ab\n"
    tuner = "7f10-7f20 r-xp 00000000 00:19 7 /opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so\n"
    assert nccl_mapped(shm + tuner) == {"loaded": False, "net_plugins": []}
    deleted = f"7f20-7f30 r-xp 00000000 00:19 8 {OFI_PLUGIN} (deleted)\n"
    assert nccl_mapped(deleted)["net_plugins"] == [OFI_PLUGIN]


def test_the_process_probe_records_it_and_null_when_maps_are_denied() -> None:
    probe = ProcessProbe(Redactor(b"test-secret"))
    raw = {"processes": [
        {"pid": 4242, "stat": "4242 (python) S 1 " + "0 " * 18 + "777",
         "cmdline": ["python", "-m", "sglang.launch_server"],
         "environ": None, "status": None, "cgroup": None, "maps": WITH_PLUGIN, "numa_maps": None},
        {"pid": 4243, "stat": "4243 (python) S 1 " + "0 " * 18 + "778",
         "cmdline": ["python", "-m", "vllm.entrypoints"],
         "environ": None, "status": None, "cgroup": None, "maps": None, "numa_maps": None}]}
    processes = probe.parse(raw)["processes"]
    assert processes["sglang.launch_server"]["nccl"] == {"loaded": True, "net_plugins": [OFI_PLUGIN]}
    assert processes["vllm.entrypoints"]["nccl"] is None  # another user's process: unknown, not "none"


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
def test_a_live_process_here_maps_no_nccl() -> None:
    result = run_one(ProcessProbe(Redactor(b"test-secret")), LocalHost(), ProbeOptions(pids=(os.getppid(),)))
    assert result.status == "ok", result.error
    (entry,) = result.data["processes"].values()
    assert entry["nccl"] == {"loaded": False, "net_plugins": []}
    assert entry["mapped_libraries"] is not None  # the same maps were read


def test_explain_ranks_a_lost_plugin_first_with_its_fix() -> None:
    a = read_snapshot_file(PAIRS / "nccl-net-plugin-lost" / "a.json")
    b = read_snapshot_file(PAIRS / "nccl-net-plugin-lost" / "b.json")
    top = explain(diff_snapshots(a, b)).explanations[0]
    assert top.rule == "nccl-net-plugin-lost"
    assert "NCCL fell back to its internal transport" in top.title
    assert f"NCCL_NET_PLUGIN={OFI_PLUGIN}" in top.fix
