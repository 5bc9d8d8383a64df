"""`nvidia-smi --query-gpu=FIELD,... --format=csv` to the `gpu` and `pcie` data shapes.

Only the queried fields are known; every other fact stays null. The header names the fields (a unit
in brackets when the values are printed bare: `memory.used [MiB]`). A sampling log (`-l`/`-lms`)
repeats rows for the same GPU: that is a time series, not a state, and is refused.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable

from driftcheck.nvidia.values import (
    NvidiaFormatError,
    empty_gpu,
    empty_pcie_gpu,
    flag,
    integer,
    keyed_by_identity,
    mebibytes,
    normalize_bus_id,
    text_value,
    watts,
)
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, member_object

_UNIT = re.compile(r"\s*\[[^\]]*\]\s*$")
_REASONS = {"gpu_idle": "idle", "applications_clocks_setting": "applications_clocks_setting",
            "sw_power_cap": "sw_power_cap", "hw_slowdown": "hw_slowdown", "hw_thermal_slowdown": "hw_thermal_slowdown",
            "hw_power_brake_slowdown": "hw_power_brake_slowdown", "sw_thermal_slowdown": "sw_thermal_slowdown",
            "sync_boost": "sync_boost", "display_clock_setting": "display_clock_setting"}

# query field -> (path in the gpu record, reader); "pcie." paths go to the pcie record.
_FIELDS: dict[str, tuple[str, Callable[[str | None], JSONValue]]] = {
    "name": ("name", text_value), "uuid": ("uuid", text_value), "serial": ("serial", text_value),
    "vbios_version": ("vbios_version", text_value), "compute_cap": ("compute_capability", text_value),
    "inforom.img": ("firmware.inforom_image", text_value), "gsp.mode.current": ("firmware.gsp_mode", text_value),
    "persistence_mode": ("persistence_mode", flag),
    "compute_mode": ("compute_mode", text_value), "pstate": ("performance_state", text_value),
    "fan.speed": ("fan_speed_pct", integer),
    "clocks.current.sm": ("clocks.sm_mhz", integer), "clocks.sm": ("clocks.sm_mhz", integer),
    "clocks.current.memory": ("clocks.memory_mhz", integer), "clocks.mem": ("clocks.memory_mhz", integer),
    "clocks.current.graphics": ("clocks.graphics_mhz", integer), "clocks.gr": ("clocks.graphics_mhz", integer),
    "clocks.current.video": ("clocks.video_mhz", integer), "clocks.video": ("clocks.video_mhz", integer),
    "clocks.max.sm": ("max_clocks.sm_mhz", integer), "clocks.max.memory": ("max_clocks.memory_mhz", integer),
    "clocks.max.graphics": ("max_clocks.graphics_mhz", integer),
    "clocks.applications.graphics": ("application_clocks.graphics_mhz", integer),
    "clocks.applications.memory": ("application_clocks.memory_mhz", integer),
    "clocks.default_applications.graphics": ("default_application_clocks.graphics_mhz", integer),
    "clocks.default_applications.memory": ("default_application_clocks.memory_mhz", integer),
    "power.draw.instant": ("power.draw_w", watts), "power.limit": ("power.limit_w", watts),
    "power.default_limit": ("power.default_limit_w", watts), "enforced.power.limit": ("power.enforced_limit_w", watts),
    "power.min_limit": ("power.min_limit_w", watts), "power.max_limit": ("power.max_limit_w", watts),
    "temperature.gpu": ("temperature.gpu_c", integer), "temperature.memory": ("temperature.memory_c", integer),
    "memory.total": ("memory.total_mib", mebibytes), "memory.used": ("memory.used_mib", mebibytes),
    "memory.free": ("memory.free_mib", mebibytes),
    "ecc.mode.current": ("ecc.mode_current", text_value), "ecc.mode.pending": ("ecc.mode_pending", text_value),
    "ecc.errors.corrected.volatile.total": ("ecc.volatile.corrected", integer),
    "ecc.errors.uncorrected.volatile.total": ("ecc.volatile.uncorrected", integer),
    "ecc.errors.corrected.aggregate.total": ("ecc.aggregate.corrected", integer),
    "ecc.errors.uncorrected.aggregate.total": ("ecc.aggregate.uncorrected", integer),
    "retired_pages.single_bit_ecc.count": ("retired_pages.single_bit", integer),
    "retired_pages.double_bit.count": ("retired_pages.double_bit", integer),
    "retired_pages.pending": ("retired_pages.pending", flag),
    "remapped_rows.correctable": ("remapped_rows.correctable", integer),
    "remapped_rows.uncorrectable": ("remapped_rows.uncorrectable", integer),
    "remapped_rows.pending": ("remapped_rows.pending", flag), "remapped_rows.failure": ("remapped_rows.failure", flag),
    "mig.mode.current": ("mig.mode_current", text_value), "mig.mode.pending": ("mig.mode_pending", text_value),
    "utilization.gpu": ("utilization.gpu_pct", integer), "utilization.memory": ("utilization.memory_pct", integer),
    "pcie.link.gen.current": ("pcie.link.gen_current", integer), "pcie.link.gen.max": ("pcie.link.gen_max", integer),
    "pcie.link.width.current": ("pcie.link.width_current", integer),
    "pcie.link.width.max": ("pcie.link.width_max", integer),
}


def _set(record: JSONObject, path: str, value: JSONValue) -> None:
    *parents, leaf = path.split(".")
    for parent in parents:
        record = member_object(record, parent)
    record[leaf] = value


def _fill(gpu: JSONObject, pcie: JSONObject, row: dict[str, str]) -> None:
    reasons: dict[str, bool | None] = {}
    for field, raw in row.items():
        if field.startswith(("clocks_event_reasons.", "clocks_throttle_reasons.")):
            name = _REASONS.get(field.split(".", 1)[1])
            if name:
                reasons[name] = flag(raw)
        elif field in _FIELDS:
            path, read = _FIELDS[field]
            if path.startswith("pcie."):
                _set(pcie, path.removeprefix("pcie."), read(raw))
            else:
                _set(gpu, path, read(raw))
    # power.draw is the instant reading on old drivers, an average on new ones that also print .instant
    power = member_object(gpu, "power")
    if power["draw_w"] is None and "power.draw" in row:
        power["draw_w"] = watts(row["power.draw"])
    if any(active is not None for active in reasons.values()):
        gpu["clock_event_reasons"] = sorted(name for name, active in reasons.items() if active)


def parse_query_csv(text: str) -> dict[str, JSONObject]:
    """`{"gpu": ..., "pcie": ...}` from `nvidia-smi --query-gpu ... --format=csv` output."""
    rows = list(csv.reader(io.StringIO(text.strip()), skipinitialspace=True))
    if len(rows) < 2 or not any(_UNIT.sub("", name) in _FIELDS or name == "index" for name in rows[0]):
        raise NvidiaFormatError("no nvidia-smi --query-gpu header line followed by rows")
    header = [_UNIT.sub("", name.strip()) for name in rows[0]]
    records = []
    for position, cells in enumerate(rows[1:]):
        if len(cells) != len(header):
            raise NvidiaFormatError(f"row {position + 2} has {len(cells)} cells for {len(header)} fields")
        row = dict(zip(header, cells, strict=True))
        gpu, pcie = empty_gpu(), empty_pcie_gpu()
        index = integer(row.get("index"))
        gpu["index"] = pcie["index"] = index if index is not None else position
        gpu["pci_bus_id"] = pcie["pci_bus_id"] = normalize_bus_id(row.get("pci.bus_id"))
        _fill(gpu, pcie, row)
        records.append((gpu, pcie))
    identities = [(g["uuid"], g["pci_bus_id"], g["index"]) for g, _ in records]
    if len(set(identities)) < len(identities):
        raise NvidiaFormatError("the same GPU appears in several rows: a sampling log (-l/-lms), not one query")
    keys = list(keyed_by_identity([gpu for gpu, _ in records]))
    first = dict(zip(header, rows[1], strict=True))
    return {
        "gpu": {"source": "nvidia-smi-csv", "driver_version": text_value(first.get("driver_version")),
                "cuda_driver_version": None, "gpu_count": integer(first.get("count")) or len(records),
                "gpus": dict(zip(keys, (gpu for gpu, _ in records), strict=True))},
        "pcie": {"source": "nvidia-smi", "gpus": dict(zip(keys, (pcie for _, pcie in records), strict=True)),
                 "topology": None, "p2p": None, "sysfs": None},
    }
