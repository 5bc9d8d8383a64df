"""Facts read from a text report, put into the data shapes of the probes that own them.

Each builder goes through its probe's own parser or helpers (`PackagesProbe.parse`, `TorchProbe.parse`,
`parse_topo`, `performance_groups`, ...), so a pip list in a report and a live `packages` probe give the
same shape. A report carries fewer facts than a probe gathers: a builder keeps only the fields the
report held. Absent means "not in the report"; null is never written for it (null means unreadable).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from driftcheck.nvidia.topo import cut_among_gpus, parse_topo, topology_devices
from driftcheck.nvidia.values import NvidiaFormatError, cpu_list
from driftcheck.probes.env import performance_groups
from driftcheck.probes.packages import PackagesProbe, normalize_name
from driftcheck.probes.system import cpu_count
from driftcheck.probes.torch import TorchProbe, cudnn_version_string, nccl_version_string
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty, value_at

# Answers the tools print when they could not read a fact.
UNKNOWN = frozenset({"", "n/a", "na", "none", "could not collect", "no cuda", "not set", "module not found",
                     "unknown", "not available"})
_VERSION = re.compile(r"\d+(\.\d+)+")


def known(value: str | None) -> str | None:
    """`value` stripped, or None when the tool said it could not read it."""
    if value is None:
        return None
    value = value.strip()
    return None if value.lower() in UNKNOWN else value


def truth(value: str | None) -> bool | None:
    """`True`/`Yes` → True, `False`/`No` → False, anything else None."""
    text = (value or "").strip().lower()
    return True if text in ("true", "yes") else False if text in ("false", "no") else None


def prune(value: Mapping[str, JSONValue]) -> JSONObject:
    """`value` without the None members of its objects (at every depth), and without emptied objects."""
    kept: JSONObject = {}
    for key, member in value.items():
        if isinstance(member, dict):
            member = prune(member)
            if not member:
                continue
        if member is not None:
            kept[key] = member
    return kept


def packages_data(pip: list[tuple[str, str]], conda: list[dict[str, str | None]] | None) -> JSONObject:
    """The `packages` shape of a listed set of (name, version) and conda rows; only name and version per entry."""
    raw: JSONObject = {"distributions": [{"name": name, "version": version} for name, version in pip],
                       "conda": None if conda is None else {"packages": conda}}
    data = PackagesProbe().parse(raw)
    out: JSONObject = {"packages": {key: {"name": value_at(entry, "name"), "version": value_at(entry, "version")}
                                    for key, entry in object_or_empty(data["packages"]).items()}}
    duplicates = object_or_empty(data["duplicates"])
    if duplicates:
        out["duplicates"] = {key: [{"version": value_at(d, "version")} for d in list_or_empty(found)]
                             for key, found in duplicates.items()}
    conda_data = data["conda"]
    if isinstance(conda_data, dict):
        out["conda"] = prune(conda_data)
    return out


# nvcc's own line (`Cuda compilation tools, release 12.4, V12.4.131`), as SGLang's check_env quotes it.
_NVCC_RELEASE = re.compile(r"release (?P<release>\d+\.\d+), V(?P<version>\d+(?:\.\d+)+)")
_NVCC_VERSION = re.compile(r"^(?P<release>\d+\.\d+)\.\d+$")


def cuda_toolkit_data(text: str | None) -> JSONObject | None:
    """The `kernels` shape of the CUDA toolkit nvcc reports: from its release line, or from the `V` number alone
    (collect_env's `CUDA runtime version: 12.9.86` is nvcc's); None when the text holds neither."""
    value = (text or "").strip()
    line = _NVCC_RELEASE.search(value)
    if line:
        return {"cuda_toolkit": {"version": line["version"], "release": line["release"]}}
    bare = _NVCC_VERSION.match(value)
    return {"cuda_toolkit": {"version": value, "release": bare["release"]}} if bare else None


def torch_version_cuda(version: str | None) -> str | None:
    """The CUDA a wheel was built for, from its local version label (`2.3.1+cu121` → `12.1`)."""
    match = re.search(r"\+cu(\d{2,3})(\b|$)", version or "")
    if not match:
        return None
    digits = match.group(1)
    return f"{digits[:-1]}.{digits[-1]}"


def torch_data(version: str | None, *, debug: bool | None = None, cuda: str | None = None,
               hip: str | None = None, wheels: dict[str, str] | None = None, cudnn: str | None = None,
               cuda_available: bool | None = None, device_count: int | None = None) -> JSONObject | None:
    """The `torch` shape of a report's torch facts; None when the report names no torch version."""
    if not version:
        return None
    cuda_wheels = {name: v for name, v in sorted((wheels or {}).items()) if name.startswith("nvidia-")}
    raw: JSONObject = {"installed": True,
                       "version_py": {"__version__": version, "debug": debug, "cuda": cuda, "hip": hip},
                       "cuda_wheels": cuda_wheels}
    data = TorchProbe().parse(raw)
    # A wheel's cuDNN is what torch loads; a system library found on disk is the report's only other clue.
    data["cudnn_version"] = data["cudnn_version"] or cudnn_version_string(cudnn)
    data["nccl_version"] = nccl_version_string(data["nccl_version"])
    data["cuda_available"] = cuda_available
    data["device_count"] = device_count
    for key in ("deep", "location", "git_version", "devices", "arch_list", "backends", "config"):
        data.pop(key, None)
    if not cuda_wheels:
        data.pop("cuda_wheels")
    return prune(data)


def cudnn_from_text(text: str | None) -> str | None:
    """cuDNN's version from a report's line: a number, or the one version its library file names agree on
    (`libcudnn.so.8` and `libcudnn.so.8.9.0` agree on 8.9.0). Several versions on disk (7.5.0 and 7.6.5)
    are candidates, not the one torch loads: then None, never the newest as a guess."""
    if not text:
        return None
    versions = re.findall(r"libcudnn(?:\.so|64_|\.\w*dylib)?[._]?(\d+(?:\.\d+)*)", text)
    if not versions:
        plain = _VERSION.search(text)
        if plain and "/" not in text and "\\" not in text:
            return plain.group(0)
        return None
    longest = max(versions, key=lambda v: (len(v.split(".")), tuple(int(p) for p in v.split("."))))
    if all(longest == v or longest.startswith(v + ".") for v in versions):
        return longest
    return None


def gpu_data(names: list[str], driver: str | None, source: str, *, count_known: bool = True,
             cuda_driver: str | None = None) -> JSONObject | None:
    """The `gpu` shape of GPU model names in index order (keyed `GPU<index>`: a report names no UUID).

    `count_known` is False when the report names one model without enumerating the GPUs (ROCm's line).
    """
    driver = known(driver)
    if not names and not driver:
        return None
    gpus: JSONObject = {f"GPU{i}": {"index": i, "name": name} for i, name in enumerate(names)}
    return prune({"source": source, "driver_version": driver, "cuda_driver_version": known(cuda_driver),
                  "gpu_count": len(names) if names and count_known else None, "gpus": gpus or None})


def pcie_data(topology_text: str | None, source: str) -> JSONObject | None:
    """The `pcie` shape holding the topology matrix of a report; None when it holds no readable matrix."""
    if not topology_text:
        return None
    try:
        topology = parse_topo(topology_text)
    except NvidiaFormatError:
        return None
    devices = topology_devices(topology)
    if cut_among_gpus(topology, header_devices(topology_text)):
        # The paste stops among the GPU rows: the rows left would read as a smaller, different machine. Cut
        # only after them (NIC rows missing), every pair is read and the matrix is kept.
        return None
    cpu_affinity = object_or_empty(topology.get("cpu_affinity"))
    numa_affinity = object_or_empty(topology.get("numa_affinity"))
    gpus: JSONObject = {}
    for label in devices:
        if label.startswith("GPU") and label[3:].isdigit():
            entry: JSONObject = {"index": int(label[3:])}
            affinity = cpu_affinity.get(label)
            numa = numa_affinity.get(label)
            if affinity:
                entry["cpu_affinity"] = affinity
            if isinstance(numa, str) and numa.isdigit():
                entry["numa_node"] = int(numa)
            gpus[label] = entry
    return {"source": source, "gpus": gpus, "topology": topology}


def header_devices(text: str) -> int:
    """How many devices the matrix's header names (0 when there is no header line)."""
    lines = [line for line in text.splitlines() if line.strip()]
    for before, line in zip(lines, lines[1:], strict=False):
        tokens = line.split()
        if len(tokens) > 1 and tokens[1] == "X":
            return sum(1 for t in before.split() if re.fullmatch(r"(?:\S*m)?(GPU\d+|NIC\d+|mlx\S+)", t))
    return 0


def env_data(variables: dict[str, str]) -> JSONObject | None:
    """The `env` shape of the variables a report lists."""
    if not variables:
        return None
    ordered = dict(sorted(variables.items()))
    return {"vars": ordered, "groups": performance_groups(list(ordered))}


def nccl_data(variables: dict[str, str]) -> JSONObject | None:
    """The `nccl` shape of the NCCL_* variables among a report's variables."""
    env = {k: v for k, v in sorted(variables.items()) if k.startswith("NCCL_") and k != "NCCL_VERSION"}
    return {"env": env} if env else None


def python_data(version_line: str | None, platform_line: str | None) -> JSONObject | None:
    """The `python` shape of `Python version: 3.12.3 | packaged by ... (64-bit runtime)` and the platform line."""
    version = _VERSION.search(version_line or "")
    if not version:
        return None
    data: JSONObject = {"version": version.group(0)}
    compiler = re.search(r"\[([^\]]+)\]", version_line or "")
    if compiler:
        data["compiler"] = compiler.group(1).strip()
    platform = platform_fields(platform_line)
    if platform:
        data["platform"] = platform
    return data


def platform_fields(line: str | None) -> dict[str, str] | None:
    """system, release, machine and libc from Python's `platform.platform()`.

    `Linux-5.15.0-143-generic-x86_64-with-glibc2.35` → Linux, 5.15.0-143-generic, x86_64, glibc 2.35.
    """
    text = known(line)
    if not text:
        return None
    match = re.match(r"^(Linux)-(.+)-(x86_64|aarch64|ppc64le|s390x|arm64|i686)-with-(.+)$", text)
    if match:
        return {"system": match.group(1), "release": match.group(2), "machine": match.group(3),
                "libc": match.group(4).replace("glibc", "glibc ").strip()}
    system, _, rest = text.partition("-")
    return {"system": system, "release": rest} if rest else {"system": system}


def kernel_cpulist(text: str) -> str:
    """A CPU list as the kernel writes it (`0-1`, not lscpu's `0,1`), so a paste and a probe of one machine
    agree; text that is no CPU list is kept as it is."""
    if not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", text.strip()):
        return text
    cpus = {cpu for part in text.strip().split(",")
            for cpu in range(int(part.split("-")[0]), int(part.split("-")[-1]) + 1)}
    return cpu_list([sum(1 << cpu for cpu in cpus)], bits_per_mask=max(cpus) + 1) or text


def system_data(os_line: str | None, kernel_release: str | None, lscpu: dict[str, str],
                numa_cpus: dict[str, str]) -> JSONObject | None:
    """The `system` shape of a report's OS line, kernel release and lscpu block."""
    data: JSONObject = {}
    os_name = known(os_line)
    if os_name:
        # collect_env appends the machine to the OS name: `Ubuntu 22.04.5 LTS (x86_64)`.
        data["os"] = {"pretty_name": re.sub(r"\s*\((x86_64|aarch64|arm64|ppc64le|s390x)\)$", "", os_name)}
    if kernel_release:
        data["kernel"] = {"release": kernel_release}
    cpu = _cpu_from_lscpu(lscpu)
    if cpu:
        data["cpu"] = cpu
    nodes = {node: {"cpus": kernel_cpulist(cpus)} for node, cpus in numa_cpus.items() if cpus}
    if nodes:
        data["numa"] = {"nodes": nodes}
    return data or None


def _number(text: str | None) -> int | None:
    match = re.match(r"^\s*(\d+)\s*$", text or "")
    return int(match.group(1)) if match else None


def _cpu_from_lscpu(lscpu: dict[str, str]) -> JSONObject | None:
    if not lscpu:
        return None
    sockets = _number(lscpu.get("Socket(s)"))
    per_socket = _number(lscpu.get("Core(s) per socket"))
    threads = _number(lscpu.get("CPU(s)"))
    online = known(lscpu.get("On-line CPU(s) list"))
    cpu = {
        # lscpu on Linux; the Windows form of collect_env prints WMI's Name and Manufacturer instead.
        "model": known(lscpu.get("Model name") or lscpu.get("Name")),
        "vendor": known(lscpu.get("Vendor ID") or lscpu.get("Manufacturer")),
        "sockets": sockets,
        "cores": sockets * per_socket if sockets and per_socket else None,
        "threads": threads if threads is not None else cpu_count(online),
        "online": online,
    }
    return prune(cpu) or None


def package_key(name: str) -> str:
    """A listed name as the `packages` probe keys it."""
    return normalize_name(name)
