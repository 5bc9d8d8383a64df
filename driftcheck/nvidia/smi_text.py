"""`nvidia-smi -q` (human-readable, full or `-d SECTION` partial) to the `gpu` and `pcie` data shapes.

The text is an indented tree of `Key : value` lines and section headings. It is read into that tree
first, then each field is looked up by its path of headings; sections renamed across drivers
("Clocks Throttle Reasons" / "Clocks Event Reasons", "Power Readings" / "GPU Power Readings") list
each of their names. Fields a partial output (`-d CLOCK`) does not print stay null.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from driftcheck.nvidia.values import (
    CLOCK_EVENT_COUNTERS,
    NvidiaFormatError,
    empty_gpu,
    empty_pcie_gpu,
    empty_power,
    flag,
    integer,
    keyed_by_identity,
    mebibytes,
    mig_instances,
    normalize_bus_id,
    text_value,
    total,
    vgpu_licence,
    watts,
    without_note,
)
from driftcheck.snapshot.jsontypes import JSONObject

_KEY_VALUE = re.compile(r"^(\S.*?)\s+:(?:\s(.*))?$")
_GPU_HEADING = re.compile(r"^GPU\s+([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_REASON_NAMES = {"idle": "idle", "gpu idle": "idle", "applications clocks setting": "applications_clocks_setting",
                 "sw power cap": "sw_power_cap", "hw slowdown": "hw_slowdown",
                 "hw thermal slowdown": "hw_thermal_slowdown", "hw power brake slowdown": "hw_power_brake_slowdown",
                 "sync boost": "sync_boost", "sw thermal slowdown": "sw_thermal_slowdown",
                 "display clock setting": "display_clock_setting"}


@dataclass
class _Node:
    key: str
    value: str | None = None
    children: list[_Node] = field(default_factory=list)

    def child(self, *names: str) -> _Node | None:
        wanted = {name.lower() for name in names}
        return next((c for c in self.children if c.key.lower() in wanted), None)

    def get(self, *path: str) -> str | None:
        """The value at `path`; a step may list alternatives separated by '|'."""
        node: _Node | None = self
        for step in path:
            node = node.child(*step.split("|")) if node else None
        return node.value if node else None

    def all(self, name: str) -> list[_Node]:
        return [c for c in self.children if c.key.lower() == name.lower()]


def _tree(text: str) -> _Node:
    root = _Node("")
    stack: list[tuple[int, _Node]] = [(-1, root)]
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip() or line.strip().startswith("====="):
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        match = _KEY_VALUE.match(body)
        node = _Node(match.group(1).strip(), (match.group(2) or "").strip()) if match else _Node(body.strip())
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


def _reasons(gpu: _Node) -> list[str] | None:
    section = gpu.child("Clocks Event Reasons", "Clocks Throttle Reasons")
    if section is None:
        return None
    found: dict[str, bool | None] = {}

    def walk(node: _Node) -> None:
        for child in node.children:
            name = _REASON_NAMES.get(child.key.lower())
            if name:
                found[name] = flag(child.value)
            walk(child)

    walk(section)
    if not any(value is not None for value in found.values()):
        return None
    return sorted(name for name, active in found.items() if active)


# Lines of `Clocks Event Reasons Counters` (drivers >= 570) by the counter they hold.
_COUNTER_LINES = dict(zip(CLOCK_EVENT_COUNTERS, ("SW Power Capping", "Sync Boost", "SW Thermal Slowdown",
                                                 "HW Thermal Slowdown", "HW Power Braking"), strict=True))


def _clock_event_time(gpu: _Node) -> dict[str, int | None] | None:
    """Microseconds spent in each clock-event reason since the driver loaded; None on older drivers."""
    section = gpu.child("Clocks Event Reasons Counters")
    if section is None:
        return None
    return {name: integer(section.get(line)) for name, line in _COUNTER_LINES.items()}


def vgpu_section(node: _Node) -> JSONObject | None:
    """The `vGPU Software Licensed Product` section under `node` (a GPU, or a fragment's root)."""
    return vgpu_licence(node.get("vGPU Software Licensed Product", "Product Name"),
                        node.get("vGPU Software Licensed Product", "License Status"))


def parse_vgpu_fragment(text: str) -> JSONObject | None:
    """The licence of a pasted `vGPU Software Licensed Product` section on its own."""
    return vgpu_section(_tree(text))


def _section(node: _Node, *path: str) -> _Node | None:
    found: _Node | None = node
    for step in path:
        found = found.child(step) if found else None
    return found


def _ecc_counts(section: _Node | None) -> dict[str, int | None]:
    if section is None:
        return {"corrected": None, "uncorrected": None}
    if section.child("Single Bit") is not None:
        return {"corrected": integer(section.get("Single Bit", "Total")),
                "uncorrected": integer(section.get("Double Bit", "Total"))}
    corrected = total(integer(section.get(name)) for name in ("SRAM Correctable", "DRAM Correctable"))
    uncorrected = total(integer(section.get(name)) for name in (
        "SRAM Uncorrectable", "SRAM Uncorrectable Parity", "SRAM Uncorrectable SEC-DED", "DRAM Uncorrectable"))
    return {"corrected": corrected, "uncorrected": uncorrected}


def _processes(gpu: _Node) -> JSONObject:
    section = gpu.child("Processes")
    processes: JSONObject = {}
    for node in section.all("Process ID") if section else []:
        pid = integer(node.value)
        if pid is None:
            continue
        processes[str(pid)] = {"pid": pid, "name": text_value(node.get("Name")), "type": text_value(node.get("Type")),
                               "used_memory_mib": mebibytes(node.get("Used GPU Memory"))}
    return processes


def _mig(gpu: _Node) -> JSONObject:
    devices = []
    for node in gpu.all("MIG Device"):
        gi, ci = integer(node.get("GPU Instance ID")), integer(node.get("Compute Instance ID"))
        if gi is None or ci is None:
            continue
        devices.append({"gpu_instance_id": gi, "compute_instance_id": ci, "profile": None,
                        "device_index": integer(node.get("Index")),
                        "multiprocessor_count": integer(node.get("Device Attributes", "Shared",
                                                                 "Multiprocessor count")),
                        "memory_total_mib": mebibytes(node.get("Shared FB Memory Usage|FB Memory Usage", "Total"))})
    return {"mode_current": text_value(gpu.get("MIG Mode", "Current")),
            "mode_pending": text_value(gpu.get("MIG Mode", "Pending")), "instances": mig_instances(devices)}


def _power(gpu: _Node) -> dict[str, float | None]:
    section = gpu.child("GPU Power Readings", "Power Readings")
    if section is None:
        return empty_power()
    # Driver 610 moved the three limits one level down, under "GPU Ceiling Power Limit".
    limits = section.child("GPU Ceiling Power Limit") or section
    return {
        "draw_w": watts(section.get("Instantaneous Power Draw") or section.get("Power Draw")
                        or section.get("Average Power Draw")),
        "limit_w": watts(limits.get("Requested Power Limit") or limits.get("Power Limit")),
        "default_limit_w": watts(limits.get("Default Power Limit")),
        "enforced_limit_w": watts(limits.get("Current Power Limit") or limits.get("Enforced Power Limit")),
        "min_limit_w": watts(section.get("Min Power Limit")),
        "max_limit_w": watts(section.get("Max Power Limit")),
    }


def _fabric(gpu: _Node) -> dict[str, str | None] | None:
    state = text_value(gpu.get("Fabric", "State"))
    return None if state is None else {"state": state, "status": text_value(gpu.get("Fabric", "Status"))}


def _gpu_record(gpu: _Node, bus_id: str, index: int) -> JSONObject:
    record = empty_gpu()
    temp = "Temperature"
    record.update({
        "index": index,
        "uuid": text_value(gpu.get("GPU UUID")),
        "pci_bus_id": normalize_bus_id(gpu.get("PCI", "Bus Id") or bus_id),
        "name": text_value(gpu.get("Product Name")),
        "serial": text_value(gpu.get("Serial Number")),
        "vbios_version": text_value(gpu.get("VBIOS Version")),
        # -q prints the GSP firmware's version only (N/A where GSP is off), and no compute capability.
        "firmware": {"gsp_mode": None, "gsp_version": text_value(gpu.get("GSP Firmware Version")),
                     "inforom_image": text_value(gpu.get("Inforom Version", "Image Version"))},
        "persistence_mode": flag(gpu.get("Persistence Mode")),
        "compute_mode": text_value(gpu.get("Compute Mode")),
        "performance_state": text_value(gpu.get("Performance State")),
        "fan_speed_pct": integer(gpu.get("Fan Speed")),
        "clocks": {"sm_mhz": integer(gpu.get("Clocks", "SM")), "memory_mhz": integer(gpu.get("Clocks", "Memory")),
                   "graphics_mhz": integer(gpu.get("Clocks", "Graphics")),
                   "video_mhz": integer(gpu.get("Clocks", "Video"))},
        "max_clocks": {"sm_mhz": integer(gpu.get("Max Clocks", "SM")),
                       "memory_mhz": integer(gpu.get("Max Clocks", "Memory")),
                       "graphics_mhz": integer(gpu.get("Max Clocks", "Graphics"))},
        "application_clocks": {"graphics_mhz": integer(gpu.get("Applications Clocks", "Graphics")),
                               "memory_mhz": integer(gpu.get("Applications Clocks", "Memory"))},
        "default_application_clocks": {"graphics_mhz": integer(gpu.get("Default Applications Clocks", "Graphics")),
                                       "memory_mhz": integer(gpu.get("Default Applications Clocks", "Memory"))},
        "clock_event_reasons": _reasons(gpu),
        "clock_event_time_us": _clock_event_time(gpu),
        "power": _power(gpu),
        "temperature": {"gpu_c": integer(gpu.get(temp, "GPU Current Temp")),
                        "memory_c": integer(gpu.get(temp, "Memory Current Temp")),
                        "slowdown_c": integer(gpu.get(temp, "GPU Slowdown Temp")),
                        "shutdown_c": integer(gpu.get(temp, "GPU Shutdown Temp")),
                        "max_operating_c": integer(gpu.get(temp, "GPU Max Operating Temp"))},
        "memory": {"total_mib": mebibytes(gpu.get("FB Memory Usage", "Total")),
                   "used_mib": mebibytes(gpu.get("FB Memory Usage", "Used")),
                   "free_mib": mebibytes(gpu.get("FB Memory Usage", "Free"))},
        "bar1_memory": {"total_mib": mebibytes(gpu.get("BAR1 Memory Usage", "Total")),
                        "used_mib": mebibytes(gpu.get("BAR1 Memory Usage", "Used"))},
        "ecc": {"mode_current": text_value(gpu.get("ECC Mode", "Current")),
                "mode_pending": text_value(gpu.get("ECC Mode", "Pending")),
                "volatile": _ecc_counts(_section(gpu, "ECC Errors", "Volatile")),
                "aggregate": _ecc_counts(_section(gpu, "ECC Errors", "Aggregate"))},
        "retired_pages": {
            "single_bit": integer(gpu.get("Retired Pages", "Single Bit ECC")),
            "double_bit": integer(gpu.get("Retired Pages", "Double Bit ECC")),
            "pending": flag(gpu.get("Retired Pages", "Pending Page Blacklist|Pending Page Retirement|Pending"))},
        "remapped_rows": {"correctable": integer(gpu.get("Remapped Rows", "Correctable Error")),
                          "uncorrectable": integer(gpu.get("Remapped Rows", "Uncorrectable Error")),
                          "pending": flag(gpu.get("Remapped Rows", "Pending")),
                          "failure": flag(gpu.get("Remapped Rows", "Remapping Failure Occurred"))},
        "mig": _mig(gpu),
        "utilization": {"gpu_pct": integer(gpu.get("Utilization", "GPU")),
                        "memory_pct": integer(gpu.get("Utilization", "Memory"))},
        "processes": _processes(gpu),
        "fabric": _fabric(gpu),
        "vgpu": vgpu_section(gpu),
    })
    return record


def _pcie_record(gpu: _Node, bus_id: str, index: int) -> JSONObject:
    record = empty_pcie_gpu()
    info = ("PCI", "GPU Link Info")
    record.update({
        "index": index,
        "pci_bus_id": normalize_bus_id(gpu.get("PCI", "Bus Id") or bus_id),
        "link": {"gen_current": integer(gpu.get(*info, "PCIe Generation", "Current")),
                 "gen_max": integer(gpu.get(*info, "PCIe Generation", "Max")),
                 "width_current": integer(gpu.get(*info, "Link Width", "Current")),
                 "width_max": integer(gpu.get(*info, "Link Width", "Max"))},
        "replay_counter": integer(gpu.get("PCI", "Replays Since Reset")),
    })
    return record


def _version(root: _Node, current: str, deprecated: str) -> str | None:
    """A version by its current name, else by its old one without the note driver 610 appends to it
    ("610.57.04 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]")."""
    value = text_value(root.get(current)) or text_value(root.get(deprecated))
    return without_note(value) if value is not None else None


def parse_smi_text(text: str) -> dict[str, JSONObject]:
    """`{"gpu": ..., "pcie": ...}` from the text of `nvidia-smi -q`; NvidiaFormatError if it is not that."""
    root = _tree(text)
    sections = [(node, m.group(1)) for node in root.children if (m := _GPU_HEADING.match(node.key))]
    if root.get("Driver Version") is None and not sections:
        raise NvidiaFormatError("no 'Driver Version' line and no 'GPU <bus id>' section: not nvidia-smi -q output")
    gpus = [_gpu_record(node, bus_id, index) for index, (node, bus_id) in enumerate(sections)]
    keys = list(keyed_by_identity(gpus))
    attached = integer(root.get("Attached GPUs"))
    return {
        "gpu": {"source": "nvidia-smi-text", "driver_version": _version(root, "KMD Version", "Driver Version"),
                "cuda_driver_version": _version(root, "CUDA UMD Version", "CUDA Version"),
                "gpu_count": attached if attached is not None else len(gpus),
                "gpus": dict(zip(keys, gpus, strict=True))},
        "pcie": {"source": "nvidia-smi",
                 "gpus": {key: _pcie_record(node, bus_id, index)
                          for key, (index, (node, bus_id)) in zip(keys, enumerate(sections), strict=True)},
                 "topology": None, "p2p": None, "sysfs": None},
    }
