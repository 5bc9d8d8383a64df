"""Reading nvidia-smi's value strings ("350.00 W", "16x", "N/A", "Enabled") and the shared record shapes.

Every source (NVML, `nvidia-smi -q -x`, `nvidia-smi -q`) fills the same empty records built here, so
the shapes of docs/data-shapes.md cannot drift apart between sources: a field a source cannot read
stays null.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

# nvidia-smi's ways of saying "no value": not supported, not applicable, deprecated, masked.
_NO_VALUE = {"", "n/a", "[n/a]", "na", "not available", "not supported", "[not supported]", "unknown",
             "unknown error", "requested functionality has been deprecated", "insufficient permissions",
             "[insufficient permissions]", "not found", "none"}
_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*([A-Za-z%/]*)\s*$")
_MEMORY_UNITS = {"b": 1 / 2**20, "kib": 1 / 1024, "kb": 1 / 1024, "mib": 1, "mb": 1, "gib": 1024, "gb": 1024}

CLOCK_REASONS = ("idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown", "sw_thermal_slowdown", "sync_boost", "display_clock_setting")


# The clock-event reasons whose accumulated time newer drivers count (`Clocks Event Reasons Counters`).
CLOCK_EVENT_COUNTERS = ("sw_power_cap", "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                        "hw_power_brake_slowdown")
# NVML's performance policies (nvmlPerfPolicyType_t) whose violation time nvmlDeviceGetViolationStatus
# counts, in nanoseconds since the driver loaded: the time the clocks were held below their target by each.
VIOLATION_POLICIES = (("power", 0), ("thermal", 1), ("sync_boost", 2), ("board_limit", 3),
                      ("low_utilization", 4), ("reliability", 5), ("total_app_clocks", 10),
                      ("total_base_clocks", 11))


def vgpu_licence(product: str | None, status: str | None) -> JSONObject | None:
    """A vGPU guest's licence: {licensed_product, license_status, licensed}; None where no licence is
    reported (bare metal, passthrough). `license_status` carries the expiry, renewed as the VM runs."""
    product, status = text_value(product), text_value(status)
    if product is None and status is None:
        return None
    licensed = None if status is None else status.lower().startswith("licensed")
    return {"licensed_product": product, "license_status": status, "licensed": licensed}


class NvidiaFormatError(ValueError):
    """Text that is not (or not a readable) output of the NVIDIA tool it was taken for."""


# NVML's clock event (throttle) reason bits (nvmlClocksEventReason*), in the names of docs/data-shapes.md.
CLOCK_EVENT_BITS = ((0x1, "idle"), (0x2, "applications_clocks_setting"), (0x4, "sw_power_cap"),
                    (0x8, "hw_slowdown"), (0x10, "sync_boost"), (0x20, "sw_thermal_slowdown"),
                    (0x40, "hw_thermal_slowdown"), (0x80, "hw_power_brake_slowdown"),
                    (0x100, "display_clock_setting"))
# The reasons that take speed away under load (idle, sync boost and settings are not a slowdown).
SLOWDOWN_REASONS = frozenset({"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                              "hw_power_brake_slowdown"})


def clock_event_names(mask: int) -> list[str]:
    """Names of the reasons set in an NVML clock-event bitmask, sorted by name (as the gpu probe keeps them)."""
    return sorted(name for bit, name in CLOCK_EVENT_BITS if mask & bit)


def text_value(raw: str | None) -> str | None:
    """`raw` stripped, or None when nvidia-smi says there is no value."""
    if raw is None:
        return None
    value = " ".join(raw.split())
    return None if value.lower() in _NO_VALUE else value


_TRAILING_NOTE = re.compile(r"\s*\[[^\]]*\]\s*$")


def without_note(value: str) -> str:
    """`value` without the bracketed note nvidia-smi may append ("13.3 [Deprecated; ...]")."""
    return _TRAILING_NOTE.sub("", value) or value


def number(raw: str | None) -> int | float | None:
    """The number in "350.00 W", "16x", "0 %", "1980 MHz"; None when there is none."""
    value = text_value(raw)
    if value is None:
        return None
    match = _NUMBER.match(value.rstrip("x") if value.endswith("x") else value)
    if not match:
        return None
    return _digits(match.group(1))


# No reading of nvidia-smi has this many digits; a longer one would overflow a float to infinity.
_MAX_DIGITS = 40


def _digits(digits: str) -> int | float:
    """The number `digits` spells; ValueError (the importer's "looks like ... but") for an absurd length."""
    if len(digits) > _MAX_DIGITS:
        raise ValueError(f"a value of {len(digits)} digits is no reading")
    return float(digits) if "." in digits else int(digits)


def integer(raw: str | None) -> int | None:
    """An integer value ("24 C", "0", "16x"), or None."""
    value = number(raw)
    return int(value) if value is not None else None


def watts(raw: str | None) -> float | None:
    """A power reading in watts as a float ("350.00 W" -> 350.0), or None."""
    value = number(raw)
    return float(value) if value is not None else None


def mebibytes(raw: str | None) -> int | None:
    """A memory size in MiB ("24576 MiB", "1 GiB"), or None."""
    value = text_value(raw)
    if value is None:
        return None
    match = _NUMBER.match(value)
    if not match:
        return None
    factor = _MEMORY_UNITS.get(match.group(2).lower() or "mib")
    return None if factor is None else int(float(_digits(match.group(1))) * factor)


def flag(raw: str | None) -> bool | None:
    """Enabled/Yes/Active -> True, Disabled/No/Not Active -> False, anything else -> None."""
    value = text_value(raw)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in ("enabled", "yes", "active", "on", "true"):
        return True
    if lowered in ("disabled", "no", "not active", "off", "false"):
        return False
    return None


def total(values: Iterable[int | None]) -> int | None:
    """The sum of the readable values, None when none is readable."""
    readable = [v for v in values if v is not None]
    return sum(readable) if readable else None


def normalize_bus_id(raw: str | None) -> str | None:
    """A PCI bus id in nvidia-smi's long form: 8-digit domain, upper case ("00000000:09:00.0")."""
    value = text_value(raw)
    if value is None:
        return None
    parts = value.split(":")
    if len(parts) == 3:
        domain, bus, rest = parts
        return f"{int(domain, 16):08X}:{bus.upper()}:{rest.upper()}"
    return value.upper()


def cuda_version_text(version: int | None) -> str | None:
    """NVML's CUDA driver version integer (12020) as nvidia-smi prints it ("12.2")."""
    if not version:
        return None
    return f"{version // 1000}.{(version % 1000) // 10}"


def empty_gpu() -> JSONObject:
    """One GPU of the `gpu` probe with every field unread (null)."""
    return {
        "index": None, "uuid": None, "pci_bus_id": None, "name": None, "serial": None, "vbios_version": None,
        "compute_capability": None, "firmware": empty_firmware(),
        "persistence_mode": None, "compute_mode": None, "performance_state": None, "fan_speed_pct": None,
        "clocks": {"sm_mhz": None, "memory_mhz": None, "graphics_mhz": None, "video_mhz": None},
        "max_clocks": {"sm_mhz": None, "memory_mhz": None, "graphics_mhz": None},
        "application_clocks": {"graphics_mhz": None, "memory_mhz": None},
        "default_application_clocks": {"graphics_mhz": None, "memory_mhz": None},
        "locked_clocks": None,
        "clock_event_reasons": None,
        "clock_event_time_us": None,
        "violation_time_us": None,
        "power": empty_power(),
        "temperature": {"gpu_c": None, "memory_c": None, "slowdown_c": None, "shutdown_c": None,
                        "max_operating_c": None},
        "memory": {"total_mib": None, "used_mib": None, "free_mib": None},
        "bar1_memory": {"total_mib": None, "used_mib": None},
        "ecc": {"mode_current": None, "mode_pending": None,
                "volatile": {"corrected": None, "uncorrected": None},
                "aggregate": {"corrected": None, "uncorrected": None}},
        "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "remapped_rows": empty_remapped_rows(),
        "mig": {"mode_current": None, "mode_pending": None, "instances": {}},
        "utilization": {"gpu_pct": None, "memory_pct": None},
        "processes": {},
        "nvlink": None,
        "fabric": None,
        "vgpu": None,
    }


def empty_firmware() -> dict[str, str | None]:
    """A GPU's firmware: GSP mode (Enabled/Disabled) and version, InfoROM image version, every one unread."""
    return {"gsp_mode": None, "gsp_version": None, "inforom_image": None}


def empty_power() -> dict[str, float | None]:
    """The power readings of one GPU, every one unread."""
    return {"draw_w": None, "limit_w": None, "default_limit_w": None, "enforced_limit_w": None,
            "min_limit_w": None, "max_limit_w": None}


def empty_remapped_rows() -> dict[str, int | bool | None]:
    """The row-remapping counters of one GPU, every one unread."""
    return {"correctable": None, "uncorrectable": None, "pending": None, "failure": None}


def empty_pcie_gpu() -> JSONObject:
    """One GPU of the `pcie` probe with every field unread (null)."""
    return {"index": None, "pci_bus_id": None,
            "link": {"gen_current": None, "gen_max": None, "width_current": None, "width_max": None},
            "replay_counter": None, "cpu_affinity": None, "numa_node": None}


def identity_key(uuid: str | None, bus_id: str | None, index: object) -> str:
    """The one spelling of a GPU's key, in probe data and in run telemetry alike: its UUID, else its PCI
    bus id, else `index-<N>`."""
    return str(uuid or bus_id or f"index-{index}")


def gpu_key(gpu: Mapping[str, object], duplicated_uuids: set[str]) -> str:
    """The identity a GPU is keyed by: its UUID, or its PCI bus id when the UUID is absent or not unique."""
    uuid, bus_id = gpu.get("uuid"), gpu.get("pci_bus_id")
    return identity_key(str(uuid) if uuid and uuid not in duplicated_uuids else None,
                        bus_id if isinstance(bus_id, str) else None, gpu.get("index"))


def keyed_by_identity(gpus: list[JSONObject]) -> dict[str, JSONObject]:
    """GPU records keyed by UUID (masked or copied outputs repeat UUIDs: those fall back to bus id)."""
    seen: dict[str, int] = {}
    for gpu in gpus:
        uuid = gpu.get("uuid")
        if isinstance(uuid, str) and uuid:
            seen[uuid] = seen.get(uuid, 0) + 1
    duplicated = {uuid for uuid, count in seen.items() if count > 1}
    return {gpu_key(gpu, duplicated): gpu for gpu in gpus}


def mig_instances(devices: Iterable[Mapping[str, JSONValue]]) -> JSONObject:
    """MIG devices (gi, ci, device index, SM count, memory) grouped by GPU instance id."""
    instances: dict[str, JSONObject] = {}
    compute_instances: dict[str, JSONObject] = {}
    for device in devices:
        gi = str(device["gpu_instance_id"])
        if gi not in instances:
            compute_instances[gi] = {}
            instances[gi] = {"profile": device.get("profile"), "memory_total_mib": None,
                             "compute_instances": compute_instances[gi]}
        if device.get("memory_total_mib") is not None:
            instances[gi]["memory_total_mib"] = device["memory_total_mib"]
        compute_instances[gi][str(device["compute_instance_id"])] = {
            "device_index": device.get("device_index"), "multiprocessor_count": device.get("multiprocessor_count")}
    return dict(instances)


def cpu_list(masks: Iterable[int], bits_per_mask: int = 64) -> str | None:
    """CPU affinity bit masks (NVML's words, lowest first) as a list string ("0-47,96-143")."""
    cpus = [word_index * bits_per_mask + bit for word_index, word in enumerate(masks)
            for bit in range(bits_per_mask) if word >> bit & 1]
    if not cpus:
        return None
    ranges: list[str] = []
    start = previous = cpus[0]
    for cpu in cpus[1:] + [-2]:
        if cpu != previous + 1:
            ranges.append(f"{start}-{previous}" if previous != start else str(start))
            start = cpu
        previous = cpu
    return ",".join(ranges)
