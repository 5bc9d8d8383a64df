"""Xid errors since boot from the kernel log (driftcheck.nvidia.xid) and in the gpu probe.

The log is a recorded `dmesg -T` of an H100 node (tests/data/nvidia-real/kernel-log, SOURCES.md); the journalctl
answers are what journalctl 252 prints on a host without a journal and on one whose journal matches nothing.
"""

from __future__ import annotations

from pathlib import Path

from driftcheck.hosts import ReplayHost
from driftcheck.nvidia.gather import SMI_XML_ARGV
from driftcheck.nvidia.xid import KERNEL_LOG_ARGV, attach_xids, xid_counts
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.runner import run_one
from tests.conftest import DATA
from tests.nvidia.helpers import make_replay, nvidia_text

LOG = (DATA / "nvidia-real" / "kernel-log" / "dmesg-with-xid-119_gpud.log").read_text("utf-8")
A10G = "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94"


def test_the_recorded_log_counts_five_xid_119_for_its_gpu() -> None:
    assert xid_counts(LOG) == {"00000000:9B:00": {"119": 5}}


def test_each_gpu_gets_its_own_counts_by_bus_id() -> None:
    # The log's GPU ("NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-...") and another one of the node.
    gpus = {"GPU-509665ad-b600-ac93-3616-d754b23d636d": {"pci_bus_id": "00000000:9B:00.0"},
            "other": {"pci_bus_id": "00000000:1B:00.0"}}
    attach_xids(gpus, LOG)
    assert gpus["GPU-509665ad-b600-ac93-3616-d754b23d636d"]["xid_since_boot"] == {"119": 5}
    assert gpus["other"]["xid_since_boot"] == {}
    attach_xids(gpus, None)
    assert gpus["other"]["xid_since_boot"] is None  # an unread log says nothing


def _probe(tmp_path: Path, journal: dict[str, object] | None) -> object:
    commands: dict[tuple[str, ...], dict[str, object]] = {
        SMI_XML_ARGV: {"stdout": nvidia_text("xml/a10g_515.105.01_v11.xml")}}
    if journal is not None:
        commands[KERNEL_LOG_ARGV] = journal
    outcome = run_one(GpuProbe(), ReplayHost(make_replay(tmp_path / "rec", commands)), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    return outcome.data["gpus"][A10G]["xid_since_boot"]


def test_the_probe_tells_no_xid_from_an_unreadable_journal(tmp_path: Path) -> None:
    assert _probe(tmp_path / "none", {"returncode": 1, "stdout": "-- No entries --\n"}) == {}
    assert _probe(tmp_path / "nojournal", {"returncode": 1, "stdout": "-- No entries --\n",
                                           "stderr": "No journal files were found.\n"}) is None
    assert _probe(tmp_path / "nojournalctl", None) is None


def test_the_previous_boot_is_read_apart(tmp_path: Path) -> None:
    from driftcheck.nvidia.xid import PREVIOUS_BOOT, kernel_log_argv

    commands: dict[tuple[str, ...], dict[str, object]] = {
        SMI_XML_ARGV: {"stdout": nvidia_text("xml/a10g_515.105.01_v11.xml")},
        KERNEL_LOG_ARGV: {"returncode": 1, "stdout": "-- No entries --\n"},
        # journalctl 252's answer for a boot its journal does not hold.
        kernel_log_argv(PREVIOUS_BOOT): {
            "returncode": 1, "stdout": "",
            "stderr": "Data from the specified boot (-1) is not available: No such boot ID in journal\n"}}
    outcome = run_one(GpuProbe(), ReplayHost(make_replay(tmp_path / "rec", commands)), ProbeOptions())
    gpu = (outcome.data or {})["gpus"][A10G]
    assert (gpu["xid_since_boot"], gpu["xid_previous_boot"]) == ({}, None)
