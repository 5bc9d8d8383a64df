"""`system` probe: the OS, kernel, CPU, frequency scaling, NUMA, memory, cgroup limits and kernel modules.

Everything is read from /proc and /sys through the Host, so the same code describes this machine,
a machine over SSH, and a recorded machine. The kernel command line is kept only as the parsed
flags that move performance (isolcpus, iommu, hugepages, mitigations, ...): the rest of it
describes how the machine is hosted and has no place in a snapshot.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.probes.sysread import DENIED, RawView, SysReader, key_values, kib, to_int

CPU_DIR = "/sys/devices/system/cpu"
CPUFREQ_DIR = f"{CPU_DIR}/cpufreq"
NODE_DIR = "/sys/devices/system/node"
HUGEPAGES_DIR = "/sys/kernel/mm/hugepages"
THP_DIR = "/sys/kernel/mm/transparent_hugepage"
CGROUP_ROOT = "/sys/fs/cgroup"
KERNEL_CMDLINE = "/proc/cmdline"
MOUNTS = "/proc/self/mounts"
NVIDIA_PARAMS = "/proc/driver/nvidia/params"

PLAIN_FILES = (
    "/etc/os-release", "/usr/lib/os-release", "/proc/sys/kernel/osrelease", "/proc/sys/kernel/version",
    "/proc/sys/kernel/random/boot_id", "/proc/uptime", "/proc/cpuinfo", KERNEL_CMDLINE, "/proc/meminfo",
    "/proc/sys/vm/swappiness", "/proc/sys/kernel/numa_balancing", f"{THP_DIR}/enabled", f"{THP_DIR}/defrag",
    f"{CPU_DIR}/online", f"{CPU_DIR}/isolated", f"{CPU_DIR}/nohz_full", f"{CPU_DIR}/smt/active",
    f"{CPU_DIR}/smt/control", f"{CPUFREQ_DIR}/boost", f"{CPU_DIR}/intel_pstate/no_turbo",
    "/proc/self/status", "/proc/self/limits", "/proc/self/cgroup", "/proc/modules", "/run/systemd/container",
    MOUNTS, NVIDIA_PARAMS,
)
POLICY_FILES = ("affected_cpus", "scaling_driver", "scaling_governor", "scaling_min_freq", "scaling_max_freq",
                "scaling_cur_freq", "cpuinfo_min_freq", "cpuinfo_max_freq", "energy_performance_preference")

# Kernel command-line flags that change how fast a benchmark runs; everything else on it is dropped.
CMDLINE_FLAGS = frozenset({
    "isolcpus", "nohz_full", "nohz", "rcu_nocbs", "irqaffinity", "iommu", "intel_iommu", "amd_iommu",
    "iommu.passthrough", "iommu.strict", "transparent_hugepage", "default_hugepagesz", "hugepagesz", "hugepages",
    "numa_balancing", "numa", "mitigations", "nosmt", "pti", "nopti", "spectre_v2", "processor.max_cstate",
    "intel_idle.max_cstate", "idle", "intel_pstate", "amd_pstate", "cpufreq.default_governor", "pcie_aspm",
    "pci", "preempt", "init_on_alloc", "systemd.unified_cgroup_hierarchy", "cgroup_no_v1", "clocksource",
    "tsc", "skew_tick", "nmi_watchdog", "audit", "hugepages_node", "efi",
})

# Kernel modules that decide whether GPUs, GPUDirect RDMA and InfiniBand work (and how).
GPU_RDMA_MODULES = (
    "nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia_peermem", "nv_peer_mem", "nvidia_fs",
    "gdrdrv", "ib_core", "ib_uverbs", "ib_umad", "rdma_cm", "rdma_ucm", "mlx5_core", "mlx5_ib", "mlx4_core",
    "mlx4_ib", "efa", "irdma", "bnxt_re", "vfio_pci", "amdgpu",
)

# The fixed version string gVisor's kernel reports.
GVISOR_KERNEL_VERSION = "#1 SMP Sun Jan 10 15:06:54 PST 2016"
# v1 reports "no memory limit" as the largest page-aligned signed 64-bit number; anything this big is none.
_NO_LIMIT_BYTES = 1 << 62


class SystemProbe(Probe):
    name = "system"
    description = "OS, kernel, CPU and cpufreq, NUMA, THP and hugepages, memory, cgroup limits, container, modules"
    timeout_s = 15.0

    def record_file(self, path: str, content: bytes) -> bytes | None:
        """Of the kernel command line, the flags the probe keeps: the rest describes how the host boots. Of the
        mount table, the /dev/shm line: the others name the host's disks and paths."""
        if path == KERNEL_CMDLINE:
            return kernel_cmdline_as_recorded(content)
        if path == MOUNTS:
            return b"".join(line for line in content.splitlines(keepends=True) if line.split()[1:2] == [b"/dev/shm"])
        return None

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        reader = SysReader(host)
        # /proc/self describes whoever reads it: only a host whose reads are served by the process
        # that matters (this one, or the target interpreter over SSH) says anything true with it.
        own_view = host.capabilities.process_local_reads
        for path in PLAIN_FILES:
            if own_view or not path.startswith("/proc/self/"):
                reader.text(path)
        if reader.text("/proc/cpuinfo") is None and reader.text("/proc/meminfo") is None:
            raise ProbeUnavailable("no /proc/cpuinfo or /proc/meminfo: not a Linux host")
        for policy in _numbered(reader.listing(CPUFREQ_DIR), "policy"):
            for name in POLICY_FILES:
                reader.text(f"{CPUFREQ_DIR}/{policy}/{name}")
        for node in _numbered(reader.listing(NODE_DIR), "node"):
            reader.text(f"{NODE_DIR}/{node}/cpulist")
            reader.text(f"{NODE_DIR}/{node}/meminfo")
        for size in reader.listing(HUGEPAGES_DIR) or []:
            reader.text(f"{HUGEPAGES_DIR}/{size}/nr_hugepages")
            reader.text(f"{HUGEPAGES_DIR}/{size}/free_hugepages")
        # Without our own cgroup membership the limits found would be the root's: unknown, not "none".
        cgroup = _gather_cgroup(reader) if own_view else {"version": None}
        # Presence checks by listing, so a container's own files (which may name it) are never read.
        reader.listing("/")
        reader.listing("/run")
        reader.listing("/var/run/secrets/kubernetes.io")
        reader.listing("/sys/kernel/iommu_groups")
        reader.listing("/sys/class/iommu")
        module_names = reader.listing("/sys/module") or []
        for module in GPU_RDMA_MODULES:
            if module in module_names:
                reader.text(f"/sys/module/{module}/version")
        raw = reader.raw()
        raw["cgroup"] = cgroup
        raw["kubernetes_env"] = "KUBERNETES_SERVICE_HOST" in host.environ()
        return raw

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or "files" not in raw:
            raise ValueError("system raw material is not a recorded /proc and /sys read")
        view = RawView(raw)
        cmdline = parse_cmdline(view.text(KERNEL_CMDLINE))
        meminfo = key_values(view.text("/proc/meminfo"))
        status = key_values(view.text("/proc/self/status"))
        return {
            "os": parse_os_release(view.text("/etc/os-release") or view.text("/usr/lib/os-release")),
            "kernel": {"release": view.stripped("/proc/sys/kernel/osrelease"),
                       "version": view.stripped("/proc/sys/kernel/version")},
            "boot_id": view.stripped("/proc/sys/kernel/random/boot_id"),
            "uptime_s": _uptime(view.text("/proc/uptime")),
            "cpu": _cpu(view),
            "cpufreq": _cpufreq(view),
            "cmdline": cmdline,
            "isolcpus": view.stripped(f"{CPU_DIR}/isolated"),
            "nohz_full": view.stripped(f"{CPU_DIR}/nohz_full"),
            "numa": _numa(view),
            "thp": {"enabled": selected_choice(view.text(f"{THP_DIR}/enabled")),
                    "defrag": selected_choice(view.text(f"{THP_DIR}/defrag"))},
            "hugepages": _hugepages(view, meminfo),
            "memory": {"total_kib": kib(meminfo.get("MemTotal")), "available_kib": kib(meminfo.get("MemAvailable"))},
            "swap": {"total_kib": kib(meminfo.get("SwapTotal"))},
            "swappiness": view.integer("/proc/sys/vm/swappiness"),
            "affinity": {"cpus": status.get("Cpus_allowed_list"), "mems": status.get("Mems_allowed_list")},
            "cgroup": _cgroup(view, raw.get("cgroup") or {}),
            "container": _container(view, bool(raw.get("kubernetes_env"))),
            "memlock_limit_bytes": _memlock(view.text("/proc/self/limits")),
            "open_files_limit": _soft_limit(view.text("/proc/self/limits"), "Max open files"),
            "dev_shm_size_kib": dev_shm_size_kib(view.text(MOUNTS)),
            "nvidia_params": nvidia_params(view.text(NVIDIA_PARAMS)),
            "iommu": _iommu(view, cmdline),
            "modules": _modules(view),
        }


def _numbered(names: list[str] | None, prefix: str) -> list[str]:
    """Entries named `<prefix><number>`, in numeric order."""
    found = [n for n in names or [] if re.fullmatch(rf"{prefix}\d+", n)]
    return sorted(found, key=lambda n: int(n[len(prefix):]))


def parse_os_release(text: str | None) -> dict[str, str | None]:
    """id, version_id and pretty_name from an os-release file."""
    values: dict[str, str] = {}
    for line in (text or "").splitlines():
        name, sep, value = line.partition("=")
        if sep:
            try:
                parts = shlex.split(value)
            except ValueError:
                parts = [value]
            values[name.strip()] = parts[0] if parts else ""
    return {"id": values.get("ID"), "version_id": values.get("VERSION_ID"), "pretty_name": values.get("PRETTY_NAME")}


def kernel_cmdline_as_recorded(content: bytes) -> bytes:
    """/proc/cmdline reduced to the flags the system probe keeps; the rest describes how the host boots."""
    flags = parse_cmdline(content.decode("utf-8", errors="replace")) or {}
    tokens = [name if value is None else " ".join(f"{name}={part}" for part in value.split(" "))
              for name, value in flags.items()]
    return (" ".join(tokens) + "\n").encode("utf-8")


def parse_cmdline(text: str | None) -> dict[str, str | None] | None:
    """The performance-relevant flags of a kernel command line (`flag: value`, None for a bare flag).

    A flag given several times (`hugepagesz=1G hugepages=16 hugepagesz=2M ...`) keeps its values in
    order, joined by spaces. Arguments after `--` belong to init, not the kernel, and are dropped.
    """
    if text is None:
        return None
    flags: dict[str, str | None] = {}
    for token in text.split():
        if token == "--":
            break
        name, sep, value = token.partition("=")
        if name not in CMDLINE_FLAGS:
            continue
        if name in flags and sep and flags[name] is not None:
            flags[name] = f"{flags[name]} {value}"
        else:
            flags[name] = value if sep else None
    return flags


def selected_choice(text: str | None) -> str | None:
    """The bracketed choice of a sysfs selector such as `always [madvise] never`."""
    if text is None:
        return None
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text.strip() or None


def _uptime(text: str | None) -> float | None:
    try:
        return float(text.split()[0]) if text else None
    except (ValueError, IndexError):
        return None


def cpu_count(cpulist: str | None) -> int | None:
    """How many CPUs a list such as `0-3,8-11` names."""
    if cpulist is None:
        return None
    count = 0
    for part in cpulist.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        lo, hi = to_int(low), to_int(high) if high else to_int(low)
        if lo is None or hi is None:
            return None
        count += hi - lo + 1
    return count


def _cpu(view: RawView) -> dict[str, Any]:
    blocks = [key_values(block) for block in (view.text("/proc/cpuinfo") or "").split("\n\n") if block.strip()]
    processors = [b for b in blocks if "processor" in b]
    model = next((b.get("model name") or b.get("Model") for b in processors
                  if b.get("model name") or b.get("Model")), None)
    packages = {b["physical id"] for b in processors if "physical id" in b}
    cores = {(b.get("physical id"), b["core id"]) for b in processors if "core id" in b}
    smt_active = view.stripped(f"{CPU_DIR}/smt/active")
    return {
        "model": model,
        "vendor": next((b["vendor_id"] for b in processors if "vendor_id" in b), None),
        "sockets": len(packages) or None,
        "cores": len(cores) or None,
        "threads": len(processors) or None,
        "online": view.stripped(f"{CPU_DIR}/online"),
        "smt_active": None if smt_active is None else smt_active == "1",
        "smt_control": view.stripped(f"{CPU_DIR}/smt/control"),
    }


def _mhz(khz: int | None) -> float | None:
    return None if khz is None else round(khz / 1000.0, 1)


def _cpufreq(view: RawView) -> dict[str, Any] | None:
    """Frequency scaling summarized over CPUs: the driver, and how many CPUs run each governor."""
    policies = _numbered(view.listing(CPUFREQ_DIR), "policy")
    if view.listing(CPUFREQ_DIR) is None:
        return None
    governors: dict[str, int] = {}
    preferences: dict[str, int] = {}
    drivers: set[str] = set()
    mins: list[int] = []
    maxs: list[int] = []
    curs: list[int] = []
    hw_mins: list[int] = []
    hw_maxs: list[int] = []
    for policy in policies:
        base = f"{CPUFREQ_DIR}/{policy}"
        weight = len((view.stripped(f"{base}/affected_cpus") or "").split()) or 1
        governor = view.stripped(f"{base}/scaling_governor")
        if governor:
            governors[governor] = governors.get(governor, 0) + weight
        preference = view.stripped(f"{base}/energy_performance_preference")
        if preference:
            preferences[preference] = preferences.get(preference, 0) + weight
        driver = view.stripped(f"{base}/scaling_driver")
        if driver:
            drivers.add(driver)
        for values, name in ((mins, "scaling_min_freq"), (maxs, "scaling_max_freq"), (curs, "scaling_cur_freq"),
                             (hw_mins, "cpuinfo_min_freq"), (hw_maxs, "cpuinfo_max_freq")):
            value = view.integer(f"{base}/{name}")
            if value is not None:
                values.append(value)
    boost = view.integer(f"{CPUFREQ_DIR}/boost")
    no_turbo = view.integer(f"{CPU_DIR}/intel_pstate/no_turbo")
    turbo = bool(boost) if boost is not None else (None if no_turbo is None else not no_turbo)
    return {
        "driver": ",".join(sorted(drivers)) or None,
        "governors": governors,
        "energy_performance_preferences": preferences,
        "min_mhz": _mhz(min(mins)) if mins else None,
        "max_mhz": _mhz(max(maxs)) if maxs else None,
        "hw_min_mhz": _mhz(min(hw_mins)) if hw_mins else None,
        "hw_max_mhz": _mhz(max(hw_maxs)) if hw_maxs else None,
        "cur_mhz": _mhz(sum(curs) // len(curs)) if curs else None,
        "turbo": turbo,
    }


def _numa(view: RawView) -> dict[str, Any]:
    nodes: dict[str, Any] = {}
    for node in _numbered(view.listing(NODE_DIR), "node"):
        meminfo = view.text(f"{NODE_DIR}/{node}/meminfo") or ""
        match = re.search(r"MemTotal:\s+(\d+)\s*kB", meminfo)
        nodes[node[len("node"):]] = {"cpus": view.stripped(f"{NODE_DIR}/{node}/cpulist"),
                                     "memory_total_kib": int(match.group(1)) if match else None}
    balancing = view.integer("/proc/sys/kernel/numa_balancing")
    return {"nodes": nodes, "balancing": balancing}


def _hugepages(view: RawView, meminfo: dict[str, str]) -> dict[str, Any]:
    """Pages per size (`2048kB: {pages, free}`) and the default size."""
    sizes: dict[str, Any] = {}
    for entry in view.listing(HUGEPAGES_DIR) or []:
        size = entry.removeprefix("hugepages-")
        sizes[size] = {"pages": view.integer(f"{HUGEPAGES_DIR}/{entry}/nr_hugepages"),
                       "free": view.integer(f"{HUGEPAGES_DIR}/{entry}/free_hugepages")}
    return {"default_size_kib": kib(meminfo.get("Hugepagesize")), "sizes": sizes}


def _memlock(limits: str | None) -> int | str | None:
    """The soft `Max locked memory` limit in bytes, or "unlimited" (RDMA needs it large)."""
    return _soft_limit(limits, "Max locked memory")


def _soft_limit(limits: str | None, name: str) -> int | str | None:
    """The soft limit `name` of /proc/self/limits (`Max open files  1024  1048576  files`), or "unlimited"."""
    for line in (limits or "").splitlines():
        if line.startswith(name):
            soft = line[len(name):].split()[0]
            return "unlimited" if soft == "unlimited" else to_int(soft)
    return None


def dev_shm_size_kib(mounts: str | None) -> int | None:
    """The size of the tmpfs mounted on /dev/shm (its `size=` option), where NCCL's shared-memory transport and
    data loaders keep their buffers; None when none is mounted there or no size is given."""
    for line in (mounts or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/dev/shm" and fields[2] == "tmpfs":
            options = dict(option.partition("=")[::2] for option in fields[3].split(","))
            return _tmpfs_kib(options.get("size", ""))
    return None


_QUOTED = re.compile(r'^"(.*)"$')


def nvidia_params(text: str | None) -> dict[str, int | str] | None:
    """The NVIDIA kernel module's options as it is running with them (`NVreg_<name>`), from
    /proc/driver/nvidia/params: the driver prints `<name>: <unsigned>` per numeric option and `<name>: "<text>"`
    for the string ones (open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c, nv_procfs_read_params).
    None where the module is not loaded."""
    if text is None:
        return None
    found: dict[str, int | str] = {}
    for line in text.splitlines():
        name, colon, value = line.partition(": ")
        if not colon or not name.strip():
            continue
        value = value.strip()
        quoted = _QUOTED.match(value)
        found[name.strip()] = quoted.group(1) if quoted else int(value) if value.isdigit() else value
    return found


_SIZE_SUFFIX_KIB = {"": 1 / 1024, "k": 1, "m": 1024, "g": 1024 * 1024}


def _tmpfs_kib(size: str) -> int | None:
    """A tmpfs `size=` as the kernel writes it in mounts (`65536k`), in KiB."""
    match = re.fullmatch(r"(\d+)([kmg]?)", size.lower())
    return int(int(match.group(1)) * _SIZE_SUFFIX_KIB[match.group(2)]) if match else None


def cgroup_membership(text: str | None) -> dict[str, str]:
    """controller → cgroup path from /proc/self/cgroup; the v2 unified hierarchy is keyed ""."""
    memberships: dict[str, str] = {}
    for line in (text or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            memberships[""] = path
        for controller in controllers.split(","):
            if controller:
                memberships[controller] = path
    return memberships


def _ancestors(mount: str, path: str) -> list[str]:
    """`mount/a/b`, `mount/a`, `mount`: a limit set on any level above a cgroup applies to it too."""
    parts = [p for p in path.split("/") if p]
    return [f"{mount}/{'/'.join(parts[:i])}".rstrip("/") for i in range(len(parts), -1, -1)]


def _v1_mount(names: list[str], controller: str) -> str | None:
    if controller in names:
        return f"{CGROUP_ROOT}/{controller}"
    joined = next((n for n in names if controller in n.split(",")), None)
    return f"{CGROUP_ROOT}/{joined}" if joined else None


def cpu_cgroup_dirs(names: list[str], cgroup_text: str | None) -> list[str]:
    """The cpu cgroup directories of a process (its own first, then its ancestors), from the listing of
    /sys/fs/cgroup and its /proc/PID/cgroup; [] when the cpu controller is not mounted."""
    memberships = cgroup_membership(cgroup_text)
    if "cgroup.controllers" in names:
        return _ancestors(CGROUP_ROOT, memberships.get("", "/"))
    mount = _v1_mount(names, "cpu")
    return _ancestors(mount, memberships.get("cpu", "/")) if mount else []


def _gather_cgroup(reader: SysReader) -> dict[str, Any]:
    """Read the cgroup limit files of this process's cgroups and their ancestors; returns where they are."""
    names = reader.listing(CGROUP_ROOT)
    if names is None:
        return {"version": None}
    memberships = cgroup_membership(reader.text("/proc/self/cgroup"))
    if "cgroup.controllers" in names:
        dirs = _ancestors(CGROUP_ROOT, memberships.get("", "/"))
        for directory in dirs:
            for name in ("cpu.max", "cpu.stat", "memory.max", "cpuset.cpus.effective"):
                reader.text(f"{directory}/{name}")
        return {"version": 2, "dirs": {"cpu": dirs, "memory": dirs, "cpuset": dirs}}
    found: dict[str, list[str]] = {}
    files = {"cpu": ("cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.stat"), "memory": ("memory.limit_in_bytes",),
             "cpuset": ("cpuset.effective_cpus", "cpuset.cpus")}
    for controller, controller_files in files.items():
        mount = _v1_mount(names, controller)
        if mount is None:
            continue
        found[controller] = _ancestors(mount, memberships.get(controller, "/"))
        for directory in found[controller]:
            for name in controller_files:
                reader.text(f"{directory}/{name}")
    return {"version": 1, "dirs": found}


def _limit_bytes(text: str | None) -> int | str | None:
    if text is None:
        return None
    if text == "max":
        return "max"
    value = to_int(text)
    return "max" if value is not None and value >= _NO_LIMIT_BYTES else value


def _limit_or_denied(view: RawView, path: str) -> int | str | None:
    if view.is_denied(path):
        return DENIED
    return _limit_bytes(view.stripped(path))


def _tightest(values: list[int | float | str | None]) -> int | float | str | None:
    """The strictest of the limits found along a cgroup's ancestry.

    "max" = no limit anywhere, "denied" = a level we may not read (its limit is unknown, so the whole
    answer is unknown unless a readable level already sets a number), None = nothing readable.
    """
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers:
        return min(numbers)
    if DENIED in values:
        return DENIED
    return "max" if "max" in values else None


def _cgroup(view: RawView, where: dict[str, Any]) -> dict[str, Any]:
    version = where.get("version")
    dirs: dict[str, list[str]] = where.get("dirs") or {}
    quotas: list[int | float | str | None] = []
    memory: list[int | float | str | None] = []
    cpuset: str | None = None
    if version == 2:
        for directory in dirs.get("cpu", []):
            text = view.stripped(f"{directory}/cpu.max")
            if text:
                quota, _, period = text.partition(" ")
                v2_period_us = to_int(period) or 100000
                quotas.append("max" if quota == "max" else round((to_int(quota) or 0) / v2_period_us, 3))
            elif view.is_denied(f"{directory}/cpu.max"):
                quotas.append(DENIED)
            memory.append(_limit_or_denied(view, f"{directory}/memory.max"))
            cpuset = cpuset or view.stripped(f"{directory}/cpuset.cpus.effective") or None
    elif version == 1:
        for directory in dirs.get("cpu", []):
            quota_us = view.integer(f"{directory}/cpu.cfs_quota_us")
            period_us = view.integer(f"{directory}/cpu.cfs_period_us")
            if quota_us is not None:
                quotas.append("max" if quota_us < 0 else round(quota_us / (period_us or 100000), 3))
            elif view.is_denied(f"{directory}/cpu.cfs_quota_us"):
                quotas.append(DENIED)
        for directory in dirs.get("memory", []):
            memory.append(_limit_or_denied(view, f"{directory}/memory.limit_in_bytes"))
        for directory in dirs.get("cpuset", []):
            cpuset = cpuset or view.stripped(f"{directory}/cpuset.effective_cpus") \
                or view.stripped(f"{directory}/cpuset.cpus") or None
    return {"version": version, "cpu_quota_cores": _tightest(quotas), "memory_limit_bytes": _tightest(memory),
            "cpuset": cpuset, "cpu_stat": throttling(view, dirs.get("cpu", []))}


def throttling(view: RawView, dirs: list[str]) -> dict[str, Any] | str | None:
    """How often the CPU quota stopped this cgroup: `cpu.stat` of the nearest level that has periods
    (a quota set there), as {nr_periods, nr_throttled, throttled_usec, throttled_pct} since it was made.

    Counters, so readings: a quota that throttles is a cause, a quota alone is not. v1 counts
    `throttled_time` in ns, v2 `throttled_usec`. "denied" when the nearest file may not be read.
    """
    for directory in dirs:
        path = f"{directory}/cpu.stat"
        if view.is_denied(path):
            return DENIED
        counters = key_values(view.text(path), " ")
        if not counters:
            continue
        periods = to_int(counters.get("nr_periods"))
        throttled = to_int(counters.get("nr_throttled"))
        usec = to_int(counters.get("throttled_usec"))
        if usec is None and to_int(counters.get("throttled_time")) is not None:
            usec = (to_int(counters.get("throttled_time")) or 0) // 1000
        if periods or directory == dirs[-1]:
            return {"nr_periods": periods, "nr_throttled": throttled, "throttled_usec": usec,
                    "throttled_pct": round(100.0 * (throttled or 0) / periods, 2) if periods else None}
    return None


def _container(view: RawView, kubernetes_env: bool) -> dict[str, Any]:
    """Which container runtime (if any) this runs in, and the signals that say so."""
    signals: list[str] = []
    kinds: list[str] = []
    cgroups = view.text("/proc/self/cgroup") or ""
    systemd_container = view.stripped("/run/systemd/container")
    if kubernetes_env or view.listing("/var/run/secrets/kubernetes.io") is not None or "kubepods" in cgroups:
        kinds.append("kubernetes")
        signals.append("kubernetes service account, env or kubepods cgroup")
    if view.stripped("/proc/sys/kernel/version") == GVISOR_KERNEL_VERSION:
        kinds.append("gvisor")
        signals.append("gVisor kernel version string")
    if ".containerenv" in (view.listing("/run") or []) or systemd_container == "podman" or "libpod" in cgroups:
        kinds.append("podman")
        signals.append("/run/.containerenv, libpod cgroup or systemd container=podman")
    if ".dockerenv" in (view.listing("/") or []) or "docker" in cgroups or systemd_container == "docker":
        kinds.append("docker")
        signals.append("/.dockerenv or docker cgroup")
    if systemd_container and systemd_container not in kinds:
        kinds.append(systemd_container)
        signals.append(f"systemd container={systemd_container}")
    return {"kind": kinds[0] if kinds else "none", "runtimes": kinds, "signals": signals}


def _iommu(view: RawView, cmdline: dict[str, str | None] | None) -> dict[str, Any]:
    groups = view.listing("/sys/kernel/iommu_groups")
    flags = {k: v for k, v in (cmdline or {}).items() if "iommu" in k}
    return {"groups": None if groups is None else len(groups), "units": view.listing("/sys/class/iommu"),
            "cmdline": flags}


def _modules(view: RawView) -> dict[str, Any] | None:
    present = view.listing("/sys/module")
    if present is None:
        loaded = [line.split()[0] for line in (view.text("/proc/modules") or "").splitlines() if line.strip()]
        if view.text("/proc/modules") is None:
            return None
        present = loaded
    return {name: {"version": view.stripped(f"/sys/module/{name}/version")}
            for name in GPU_RDMA_MODULES if name in present}
