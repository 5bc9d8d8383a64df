"""The system probe on recorded machines (tests/data/hosts), and on this machine against its own /proc."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.runner import run_one
from driftcheck.probes.system import SystemProbe, cpu_count, parse_cmdline, selected_choice
from tests.conftest import DATA
from tests.probes.facts_of import category_of, is_reading

HOSTS = DATA / "hosts"


def system_data(name: str) -> dict[str, Any]:
    outcome = run_one(SystemProbe(), ReplayHost(HOSTS / name), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    return outcome.data


def test_recorded_vm_reads_as_recorded() -> None:
    data = system_data("debian12-vm-docker")
    assert data["os"] == {"id": "debian", "version_id": "12", "pretty_name": "Debian GNU/Linux 12 (bookworm)"}
    assert data["kernel"]["release"] == "6.1.0-18-amd64"
    assert data["cpu"] == {"model": "AMD EPYC", "vendor": "AuthenticAMD", "sockets": 1, "cores": 2, "threads": 2,
                           "online": "0-1", "smt_active": False, "smt_control": "notsupported"}
    assert data["thp"] == {"enabled": "madvise", "defrag": "madvise"}
    assert data["numa"]["nodes"]["0"]["cpus"] == "0-1"
    assert data["numa"]["balancing"] == 0
    assert data["swappiness"] == 60
    assert data["memlock_limit_bytes"] == 8388608
    assert data["cgroup"] == {"version": 1, "cpu_quota_cores": "max", "memory_limit_bytes": "max", "cpuset": "0-1",
                              "cpu_stat": None}
    assert data["container"]["kind"] == "docker"
    assert data["cmdline"] == {"mitigations": "auto,no_guest_host,no_guest_guest"}
    assert data["hugepages"]["default_size_kib"] == 2048
    assert set(data["hugepages"]["sizes"]) == {"2048kB", "1048576kB"}
    assert data["iommu"] == {"groups": 0, "units": [], "cmdline": {}}
    # No cpufreq in this VM: present but empty, not an error.
    assert data["cpufreq"]["governors"] == {} and data["cpufreq"]["driver"] is None
    assert data["modules"] == {}


def test_cgroup_limits_scenario() -> None:
    data = system_data("debian12-vm-docker-cgroup-limits")
    assert data["cgroup"]["cpu_quota_cores"] == 1.5
    assert data["cgroup"]["memory_limit_bytes"] == 17179869184


def test_cpufreq_is_summarized_over_policies() -> None:
    data = system_data("debian12-vm-docker-cpufreq-powersave")
    assert data["cpufreq"] == {"driver": "acpi-cpufreq", "governors": {"powersave": 2},
                               "energy_performance_preferences": {}, "min_mhz": 1500.0, "max_mhz": 3700.0,
                               "hw_min_mhz": 1500.0, "hw_max_mhz": 3700.0, "cur_mhz": 3250.0, "turbo": True}


def test_no_proc_means_unavailable_not_error() -> None:
    outcome = run_one(SystemProbe(), ReplayHost(HOSTS / "bare-no-proc-sys"), ProbeOptions())
    assert outcome.status == "unavailable"
    assert "not a Linux host" in (outcome.error or {})["message"]


def test_kernel_command_line_keeps_only_performance_flags() -> None:
    text = ("BOOT_IMAGE=/vmlinuz root=UUID=1234 ro quiet isolcpus=2-7 nohz_full=2-7 intel_iommu=on iommu=pt "
            "hugepagesz=1G hugepages=16 hugepagesz=2M hugepages=512 nosmt console=ttyS0 -- --addr 192.0.2.1")
    assert parse_cmdline(text) == {"isolcpus": "2-7", "nohz_full": "2-7", "intel_iommu": "on", "iommu": "pt",
                                   "hugepagesz": "1G 2M", "hugepages": "16 512", "nosmt": None}
    assert parse_cmdline(None) is None


def test_small_parsers() -> None:
    assert selected_choice("always defer defer+madvise [madvise] never\n") == "madvise"
    assert cpu_count("0-3,8-11") == 8
    assert cpu_count("0") == 1


def test_categories() -> None:
    assert category_of(SystemProbe, "thp.enabled") == "thp_memory"
    assert category_of(SystemProbe, "cpufreq.governors.performance") == "cpu_governor"
    assert category_of(SystemProbe, "cgroup.memory_limit_bytes") == "container_limits"
    assert category_of(SystemProbe, "numa.balancing") == "numa"
    assert category_of(SystemProbe, "kernel.release") == "kernel_os"
    assert category_of(SystemProbe, "cpu.model") == "hardware_change"
    assert category_of(SystemProbe, "modules.nvidia.version") == "driver_version"
    assert is_reading(SystemProbe, "uptime_s") and is_reading(SystemProbe, "boot_id")
    assert not is_reading(SystemProbe, "thp.enabled")


@pytest.mark.skipif(not Path("/proc/meminfo").exists(), reason="needs Linux /proc")
def test_live_machine_matches_what_the_os_says() -> None:
    outcome = run_one(SystemProbe(), LocalHost(), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    data = outcome.data or {}
    assert data["cpu"]["threads"] == os.cpu_count()
    assert cpu_count(data["affinity"]["cpus"]) == len(os.sched_getaffinity(0))
    assert data["kernel"]["release"] == os.uname().release
    pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    assert data["memory"]["total_kib"] == pages * page_size // 1024


def make_recording(root: Path, files: dict[str, str], dirs: dict[str, list[str]],
                   environ: dict[str, str] | None = None) -> Path:
    """A hand-made recording (the layout `driftcheck record` writes) holding just `files` and `dirs`."""
    for path, text in files.items():
        target = root / "files" / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    document = {"format": 1, "host": {"name": "made", "kind": "local"}, "environ": environ or {}, "missing": {},
                "dirs": dirs, "commands": {}, "scripts": {}}
    (root / "host.json").write_text(json.dumps(document))
    return root


def test_cgroup_v2_takes_the_strictest_limit_of_the_ancestry(tmp_path: Path) -> None:
    root = make_recording(tmp_path, {
        "/proc/meminfo": "MemTotal: 1000 kB\n",
        "/proc/self/cgroup": "0::/kubepods/pod1/ctr\n",
        "/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max": "max 100000\n",
        "/sys/fs/cgroup/kubepods/pod1/ctr/memory.max": "max\n",
        "/sys/fs/cgroup/kubepods/pod1/cpu.max": "250000 100000\n",
        "/sys/fs/cgroup/kubepods/pod1/memory.max": "8589934592\n",
        "/sys/fs/cgroup/kubepods/pod1/ctr/cpuset.cpus.effective": "0-7\n",
        "/proc/sys/kernel/version": "#1 SMP Sun Jan 10 15:06:54 PST 2016\n",
    }, {"/sys/fs/cgroup": ["cgroup.controllers", "kubepods"], "/run": [".containerenv"]},
        environ={"KUBERNETES_SERVICE_HOST": "192.0.2.1"})
    outcome = run_one(SystemProbe(), ReplayHost(root), ProbeOptions())
    data = outcome.data or {}
    assert data["cgroup"] == {"version": 2, "cpu_quota_cores": 2.5, "memory_limit_bytes": 8589934592,
                              "cpuset": "0-7", "cpu_stat": None}
    assert data["container"]["runtimes"] == ["kubernetes", "gvisor", "podman"]
    assert data["container"]["kind"] == "kubernetes"
    # Only the fact that the variable is set is kept, never its value (an address).
    assert "192.0.2.1" not in json.dumps(data)


def test_gpu_and_rdma_modules_with_versions(tmp_path: Path) -> None:
    root = make_recording(tmp_path, {
        "/proc/meminfo": "MemTotal: 1000 kB\n",
        "/sys/module/nvidia/version": "550.54.15\n",
        "/sys/module/nvidia_peermem/version": "550.54.15\n",
    }, {"/sys/module": ["ext4", "ib_core", "nvidia", "nvidia_peermem", "nvidia_uvm"]})
    data = run_one(SystemProbe(), ReplayHost(root), ProbeOptions()).data or {}
    assert data["modules"] == {"nvidia": {"version": "550.54.15"}, "nvidia_uvm": {"version": None},
                               "nvidia_peermem": {"version": "550.54.15"}, "ib_core": {"version": None}}
    assert data["cpufreq"] is None and data["numa"]["nodes"] == {} and data["container"]["kind"] == "none"


def test_a_denied_cgroup_limit_reads_as_denied_never_as_no_limit(tmp_path: Path) -> None:
    root = make_recording(tmp_path, {
        "/proc/meminfo": "MemTotal: 1000 kB\n",
        "/proc/self/cgroup": "0::/job/step\n",
        "/sys/fs/cgroup/job/cpu.max": "max 100000\n",
        "/sys/fs/cgroup/job/memory.max": "max\n",
        "/sys/fs/cgroup/cpu.max": "max 100000\n",
        "/sys/fs/cgroup/memory.max": "max\n",
    }, {"/sys/fs/cgroup": ["cgroup.controllers", "job"]})
    # The step's own limit files exist but may not be read (as for an unprivileged user in some setups).
    document = json.loads((root / "host.json").read_text())
    denied = {"error": "PermissionError", "message": "[Errno 13] Permission denied"}
    document["missing"] = {"/sys/fs/cgroup/job/step/cpu.max": denied, "/sys/fs/cgroup/job/step/memory.max": denied}
    (root / "host.json").write_text(json.dumps(document))
    data = run_one(SystemProbe(), ReplayHost(root), ProbeOptions()).data or {}
    assert data["cgroup"]["cpu_quota_cores"] == "denied"
    assert data["cgroup"]["memory_limit_bytes"] == "denied"


def test_open_files_limit_is_the_recorded_soft_limit() -> None:
    # debian12-vm-docker's /proc/self/limits: "Max open files  20000  20000  files".
    assert system_data("debian12-vm-docker")["open_files_limit"] == 20000
    assert system_data("debian12-vm-docker")["dev_shm_size_kib"] is None  # that recording holds no mounts


@pytest.mark.skipif(not Path("/proc/self/mounts").exists(), reason="needs Linux /proc")
def test_live_open_files_limit_and_dev_shm_size_match_what_the_os_says() -> None:
    import resource

    data = run_one(SystemProbe(), LocalHost(), ProbeOptions()).data or {}
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert data["open_files_limit"] == ("unlimited" if soft == resource.RLIM_INFINITY else soft)
    if os.path.ismount("/dev/shm"):
        shm = os.statvfs("/dev/shm")
        assert data["dev_shm_size_kib"] == shm.f_blocks * shm.f_frsize // 1024



def test_a_recording_keeps_only_the_dev_shm_line_of_the_mount_table() -> None:
    mounts = Path("/proc/self/mounts")
    if not mounts.exists():
        pytest.skip("needs Linux /proc")
    kept = SystemProbe().record_file("/proc/self/mounts", mounts.read_bytes()) or b""
    assert all(line.split()[1] == b"/dev/shm" for line in kept.splitlines())


def test_nvidia_params_read_as_the_driver_prints_them() -> None:
    from driftcheck.probes.system import nvidia_params

    # nv_procfs_read_params (open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c): "%s: %u\n" per numeric
    # option, then the string options quoted; the names are the driver's (nv-reg.h).
    text = ('ResmanDebugLevel: 4294967295\nNvLinkDisable: 0\nEnableGpuFirmware: 18\n'
            'RegistryDwords: "PeerMappingOverride=1;"\nRegistryDwordsPerDevice: ""\nTemporaryFilePath: "/var/tmp"\n')
    assert nvidia_params(text) == {"ResmanDebugLevel": 4294967295, "NvLinkDisable": 0, "EnableGpuFirmware": 18,
                                   "RegistryDwords": "PeerMappingOverride=1;", "RegistryDwordsPerDevice": "",
                                   "TemporaryFilePath": "/var/tmp"}
    assert nvidia_params(None) is None
    assert system_data("debian12-vm-docker")["nvidia_params"] is None  # no NVIDIA module on that VM
