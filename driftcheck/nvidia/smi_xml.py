"""`nvidia-smi -q -x` (XML, every schema from nvsmi_device_v7 to v13, and the DOCTYPE-less output of
old drivers) to the `gpu` and `pcie` data shapes.

Schemas differ by renames rather than structure: `clocks_throttle_reasons` became
`clocks_event_reasons`; `power_readings` (power_limit, enforced_power_limit) became
`gpu_power_readings` (requested_power_limit, current_power_limit); ECC counts moved from
single_bit/double_bit totals to sram/dram counters. Each field therefore lists the paths it may live at.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from driftcheck.nvidia.values import (
    CLOCK_EVENT_COUNTERS,
    CLOCK_REASONS,
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
)
from driftcheck.snapshot.jsontypes import JSONObject

_REASON_TAGS = {f"{prefix}_{name}": name for prefix in ("clocks_event_reason", "clocks_throttle_reason")
                for name in CLOCK_REASONS if name != "idle" and name != "display_clock_setting"}
for _prefix in ("clocks_event_reason", "clocks_throttle_reason"):
    _REASON_TAGS[f"{_prefix}_gpu_idle"] = "idle"
    _REASON_TAGS[f"{_prefix}_display_clocks_setting"] = "display_clock_setting"


def _find(element: ET.Element, *paths: str) -> str | None:
    """The text of the first of `paths` that exists under `element` and holds a value."""
    for path in paths:
        found = element.find(path)
        if found is not None and text_value(found.text) is not None:
            return found.text
    return None


def _power_section(gpu: ET.Element) -> ET.Element | None:
    return gpu.find("gpu_power_readings") if gpu.find("gpu_power_readings") is not None else gpu.find(
        "power_readings")


def _power(gpu: ET.Element) -> dict[str, float | None]:
    section = _power_section(gpu)
    if section is None:
        return empty_power()
    # Older schemas: power_limit (what was set) and enforced_power_limit; newer: requested and current.
    return {
        "draw_w": watts(_find(section, "instant_power_draw", "power_draw", "average_power_draw")),
        "limit_w": watts(_find(section, "requested_power_limit", "power_limit")),
        "default_limit_w": watts(_find(section, "default_power_limit")),
        "enforced_limit_w": watts(_find(section, "current_power_limit", "enforced_power_limit")),
        "min_limit_w": watts(_find(section, "min_power_limit")),
        "max_limit_w": watts(_find(section, "max_power_limit")),
    }


def _clock_reasons(gpu: ET.Element) -> list[str] | None:
    section = gpu.find("clocks_event_reasons")
    if section is None:
        section = gpu.find("clocks_throttle_reasons")
    if section is None:
        return None
    active = {_REASON_TAGS[child.tag] for child in section if child.tag in _REASON_TAGS and flag(child.text)}
    readable = [child for child in section if flag(child.text) is not None]
    return sorted(active) if readable else None


# Tags of `clocks_event_reasons_counters` (schema v13) by the counter they hold.
_COUNTER_TAGS = dict(zip(CLOCK_EVENT_COUNTERS, ("sw_power_cap", "sync_boost", "sw_therm_slowdown",
                                                "hw_therm_slowdown", "hw_power_brake"), strict=True))


def _clock_event_time(gpu: ET.Element) -> dict[str, int | None] | None:
    """Microseconds spent in each clock-event reason since the driver loaded; None on older drivers."""
    section = gpu.find("clocks_event_reasons_counters")
    if section is None:
        return None
    return {name: integer(_find(section, f"clocks_event_reasons_counters_{tag}"))
            for name, tag in _COUNTER_TAGS.items()}


def _ecc_counts(section: ET.Element | None) -> dict[str, int | None]:
    if section is None:
        return {"corrected": None, "uncorrected": None}
    if section.find("single_bit") is not None:
        return {"corrected": integer(_find(section, "single_bit/total")),
                "uncorrected": integer(_find(section, "double_bit/total"))}
    corrected = total(integer(_find(section, tag)) for tag in ("sram_correctable", "dram_correctable"))
    uncorrected = total(integer(_find(section, tag)) for tag in (
        "sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable"))
    return {"corrected": corrected, "uncorrected": uncorrected}


def _processes(gpu: ET.Element) -> JSONObject:
    processes: JSONObject = {}
    for info in gpu.findall("processes/process_info"):
        pid = integer(_find(info, "pid"))
        if pid is None:
            continue
        processes[str(pid)] = {"pid": pid, "name": text_value(_find(info, "process_name")),
                               "type": text_value(_find(info, "type")),
                               "used_memory_mib": mebibytes(_find(info, "used_memory"))}
    return processes


def _mig(gpu: ET.Element) -> JSONObject:
    devices = []
    for device in gpu.findall("mig_devices/mig_device"):
        gi, ci = integer(_find(device, "gpu_instance_id")), integer(_find(device, "compute_instance_id"))
        if gi is None or ci is None:
            continue
        devices.append({"gpu_instance_id": gi, "compute_instance_id": ci, "profile": None,
                        "device_index": integer(_find(device, "index")),
                        "multiprocessor_count": integer(_find(device, "device_attributes/shared/multiprocessor_count")),
                        "memory_total_mib": mebibytes(_find(device, "fb_memory_usage/total"))})
    return {"mode_current": text_value(_find(gpu, "mig_mode/current_mig")),
            "mode_pending": text_value(_find(gpu, "mig_mode/pending_mig")),
            "instances": mig_instances(devices)}


def _fabric(gpu: ET.Element) -> dict[str, str | None] | None:
    state = text_value(_find(gpu, "fabric/state"))
    if state is None:
        return None
    return {"state": state, "status": text_value(_find(gpu, "fabric/status"))}


def _gpu_record(gpu: ET.Element, index: int) -> JSONObject:
    record = empty_gpu()
    record.update({
        "index": index,
        "uuid": text_value(_find(gpu, "uuid")),
        "pci_bus_id": normalize_bus_id(_find(gpu, "pci/pci_bus_id") or gpu.get("id")),
        "name": text_value(_find(gpu, "product_name")),
        "serial": text_value(_find(gpu, "serial")),
        "vbios_version": text_value(_find(gpu, "vbios_version")),
        "firmware": {"gsp_mode": None, "gsp_version": text_value(_find(gpu, "gsp_firmware_version")),
                     "inforom_image": text_value(_find(gpu, "inforom_version/img_version"))},
        "persistence_mode": flag(_find(gpu, "persistence_mode")),
        "compute_mode": text_value(_find(gpu, "compute_mode")),
        "performance_state": text_value(_find(gpu, "performance_state")),
        "fan_speed_pct": integer(_find(gpu, "fan_speed")),
        "clocks": {"sm_mhz": integer(_find(gpu, "clocks/sm_clock")),
                   "memory_mhz": integer(_find(gpu, "clocks/mem_clock")),
                   "graphics_mhz": integer(_find(gpu, "clocks/graphics_clock")),
                   "video_mhz": integer(_find(gpu, "clocks/video_clock"))},
        "max_clocks": {"sm_mhz": integer(_find(gpu, "max_clocks/sm_clock")),
                       "memory_mhz": integer(_find(gpu, "max_clocks/mem_clock")),
                       "graphics_mhz": integer(_find(gpu, "max_clocks/graphics_clock"))},
        "application_clocks": {"graphics_mhz": integer(_find(gpu, "applications_clocks/graphics_clock")),
                               "memory_mhz": integer(_find(gpu, "applications_clocks/mem_clock"))},
        "default_application_clocks": {
            "graphics_mhz": integer(_find(gpu, "default_applications_clocks/graphics_clock")),
            "memory_mhz": integer(_find(gpu, "default_applications_clocks/mem_clock"))},
        "clock_event_reasons": _clock_reasons(gpu),
        "clock_event_time_us": _clock_event_time(gpu),
        "power": _power(gpu),
        "temperature": {"gpu_c": integer(_find(gpu, "temperature/gpu_temp")),
                        "memory_c": integer(_find(gpu, "temperature/memory_temp")),
                        "slowdown_c": integer(_find(gpu, "temperature/gpu_temp_slow_threshold")),
                        "shutdown_c": integer(_find(gpu, "temperature/gpu_temp_max_threshold")),
                        "max_operating_c": integer(_find(gpu, "temperature/gpu_temp_max_gpu_threshold"))},
        "memory": {"total_mib": mebibytes(_find(gpu, "fb_memory_usage/total")),
                   "used_mib": mebibytes(_find(gpu, "fb_memory_usage/used")),
                   "free_mib": mebibytes(_find(gpu, "fb_memory_usage/free"))},
        "bar1_memory": {"total_mib": mebibytes(_find(gpu, "bar1_memory_usage/total")),
                        "used_mib": mebibytes(_find(gpu, "bar1_memory_usage/used"))},
        "ecc": {"mode_current": text_value(_find(gpu, "ecc_mode/current_ecc")),
                "mode_pending": text_value(_find(gpu, "ecc_mode/pending_ecc")),
                "volatile": _ecc_counts(gpu.find("ecc_errors/volatile")),
                "aggregate": _ecc_counts(gpu.find("ecc_errors/aggregate"))},
        "retired_pages": {
            "single_bit": integer(_find(gpu, "retired_pages/multiple_single_bit_retirement/retired_count")),
            "double_bit": integer(_find(gpu, "retired_pages/double_bit_retirement/retired_count")),
            "pending": flag(_find(gpu, "retired_pages/pending_retirement", "retired_pages/pending_blacklist"))},
        "remapped_rows": {"correctable": integer(_find(gpu, "remapped_rows/remapped_row_corr")),
                          "uncorrectable": integer(_find(gpu, "remapped_rows/remapped_row_unc")),
                          "pending": flag(_find(gpu, "remapped_rows/remapped_row_pending")),
                          "failure": flag(_find(gpu, "remapped_rows/remapped_row_failure"))},
        "mig": _mig(gpu),
        "utilization": {"gpu_pct": integer(_find(gpu, "utilization/gpu_util")),
                        "memory_pct": integer(_find(gpu, "utilization/memory_util"))},
        "processes": _processes(gpu),
        "fabric": _fabric(gpu),
        "vgpu": vgpu_licence(_find(gpu, "vgpu_software_licensed_product/licensed_product_name"),
                             _find(gpu, "vgpu_software_licensed_product/license_status")),
    })
    return record


def _pcie_record(gpu: ET.Element, index: int) -> JSONObject:
    record = empty_pcie_gpu()
    link = "pci/pci_gpu_link_info"
    record.update({
        "index": index,
        "pci_bus_id": normalize_bus_id(_find(gpu, "pci/pci_bus_id") or gpu.get("id")),
        "link": {"gen_current": integer(_find(gpu, f"{link}/pcie_gen/current_link_gen")),
                 "gen_max": integer(_find(gpu, f"{link}/pcie_gen/max_link_gen")),
                 "width_current": integer(_find(gpu, f"{link}/link_widths/current_link_width")),
                 "width_max": integer(_find(gpu, f"{link}/link_widths/max_link_width"))},
        "replay_counter": integer(_find(gpu, "pci/replay_counter")),
    })
    return record


def parse_smi_xml(text: str) -> dict[str, JSONObject]:
    """`{"gpu": ..., "pcie": ...}` from the text of `nvidia-smi -q -x`; NvidiaFormatError if it is not that."""
    try:
        # The inline DTD of old schemas is skipped by ElementTree; no entity is expanded.
        root = ET.fromstring(text.lstrip("\ufeff"))
    except ET.ParseError as exc:
        raise NvidiaFormatError(f"not readable as nvidia-smi XML: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise NvidiaFormatError(f"XML root is <{root.tag}>, not <nvidia_smi_log> (nvidia-smi -q -x)")
    elements = root.findall("gpu")
    gpus = [_gpu_record(element, index) for index, element in enumerate(elements)]
    keys = list(keyed_by_identity(gpus))
    attached = integer(_find(root, "attached_gpus"))
    gpu_data: JSONObject = {
        "source": "nvidia-smi-xml",
        "driver_version": text_value(_find(root, "driver_version")),
        "cuda_driver_version": text_value(_find(root, "cuda_version")),
        "gpu_count": attached if attached is not None else len(gpus),
        "gpus": dict(zip(keys, gpus, strict=True)),
    }
    pcie_data: JSONObject = {
        "source": "nvidia-smi",
        "gpus": {key: _pcie_record(element, index) for key, (index, element) in zip(keys, enumerate(elements),
                                                                                     strict=True)},
        "topology": None,
        "p2p": None,
        "sysfs": None,
    }
    return {"gpu": gpu_data, "pcie": pcie_data}
