"""Reading GPUs through NVML (nvidia-ml-py, imported as `pynvml`) into the `gpu` and `pcie` data shapes.

The reader takes the NVML module as an argument: the probe passes the real `pynvml` (in an isolated
child process, since NVML initialisation can hang), tests pass a fake. Every query that a GPU or
driver does not support leaves its field null instead of failing the whole read.
"""

from __future__ import annotations

import ctypes
from types import ModuleType
from typing import Any

from driftcheck.nvidia.values import (
    CLOCK_EVENT_COUNTERS,
    VIOLATION_POLICIES,
    clock_event_names,
    cpu_list,
    cuda_version_text,
    empty_gpu,
    empty_pcie_gpu,
    empty_remapped_rows,
    keyed_by_identity,
    mig_instances,
    normalize_bus_id,
)
from driftcheck.snapshot.jsontypes import JSONObject, object_or_empty

_COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}
_FABRIC_STATES = {1: "Not Started", 2: "In Progress", 3: "Completed"}
# nvmlDeviceGetTopologyCommonAncestor levels, as `nvidia-smi topo -m` names them.
_TOPOLOGY_LEVELS = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
_P2P_CAPS = (("read", 0), ("write", 1), ("nvlink", 2), ("atomics", 3))
_NVLINK_MAX_LINKS = 18
# nvmlNvLinkErrorCounter_t (NVML_NVLINK_ERROR_DL_REPLAY = 0, _RECOVERY = 1, _CRC_FLIT = 2, _CRC_DATA = 3): counts
# since the driver loaded or the counters were reset; DCGM and nvidia-smi nvlink -e report the same four.
_NVLINK_ERROR_COUNTERS = (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3))
# The field ids (nvmlDeviceGetFieldValues) of the clock-event counters nvidia-smi prints as `Clocks Event
# Reasons Counters`, in CLOCK_EVENT_COUNTERS order: NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP (= the power
# policy counter, 74), _SYNC_BOOST (76), _SW_THERM_SLOWDOWN (269), _HW_THERM_SLOWDOWN (270),
# _HW_POWER_BRAKE_SLOWDOWN (271); each counts nanoseconds. Fixed by the NVML header, so an older binding
# without the constants still asks a newer driver.
_CLOCK_EVENT_FIELDS = dict(zip(CLOCK_EVENT_COUNTERS, (74, 76, 269, 270, 271), strict=True))


def clock_event_reasons(mask: int) -> list[str]:
    """The names of the clock event (throttle) reasons set in a bit mask of NVML or of nvidia-smi's
    `clocks_event_reasons.active` field, sorted (decoded once, in `driftcheck.nvidia.values`)."""
    return clock_event_names(mask)


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class _Reader:
    def __init__(self, nv: ModuleType) -> None:
        self.nv = nv

    # pynvml has no type information: an answer is whatever the binding returns (an int, bytes, a ctypes
    # structure or array), read by the caller that knows which function it asked.
    def call(self, name: str, *args: object) -> Any:
        """NVML function `name` applied to `args`; None when it is missing or the GPU does not support it."""
        function = getattr(self.nv, name, None)
        if function is None:
            return None
        try:
            return function(*args)
        except self.nv.NVMLError:
            return None

    def mib(self, value: int | None) -> int | None:
        return None if value is None else int(value) // 2**20

    def watts(self, milliwatts: float | None) -> float | None:
        return None if milliwatts is None else round(float(milliwatts) / 1000.0, 2)

    def clocks(self, handle: object, name: str, *kinds: tuple[str, int]) -> dict[str, int | None]:
        return {key: self.call(name, handle, kind) for key, kind in kinds}

    def reasons(self, handle: object) -> list[str] | None:
        mask = self.call("nvmlDeviceGetCurrentClocksEventReasons", handle)
        if mask is None:
            mask = self.call("nvmlDeviceGetCurrentClocksThrottleReasons", handle)
        if mask is None:
            return None
        return clock_event_names(int(mask))

    def violation_time_us(self, handle: object) -> dict[str, int | None] | None:
        """Microseconds the clocks were held below target by each performance policy since the driver
        loaded (nvmlDeviceGetViolationStatus counts nanoseconds); None where no policy is supported."""
        found: dict[str, int | None] = {}
        for name, policy in VIOLATION_POLICIES:
            status = self.call("nvmlDeviceGetViolationStatus", handle, policy)
            violation = getattr(status, "violationTime", None)
            found[name] = None if violation is None else int(violation) // 1000
        return found if any(value is not None for value in found.values()) else None

    def clock_event_time_us(self, handle: object) -> dict[str, int | None] | None:
        """The `Clocks Event Reasons Counters` of nvidia-smi, read as NVML field values (ns -> us); None
        where the driver answers none of them (drivers before 570)."""
        values = self.call("nvmlDeviceGetFieldValues", handle, list(_CLOCK_EVENT_FIELDS.values()))
        if not values:
            return None
        found: dict[str, int | None] = {}
        for name, value in zip(_CLOCK_EVENT_FIELDS, values, strict=False):
            ok = getattr(value, "nvmlReturn", 1) == 0
            found[name] = int(value.value.ullVal) // 1000 if ok else None
        return found if any(v is not None for v in found.values()) else None

    def ecc(self, handle: object) -> JSONObject:
        modes = self.call("nvmlDeviceGetEccMode", handle)
        current, pending = modes if modes else (None, None)

        def count(error_type: int, counter: int) -> int | None:
            value = self.call("nvmlDeviceGetTotalEccErrors", handle, error_type, counter)
            return None if value is None else int(value)

        return {"mode_current": _enabled(current), "mode_pending": _enabled(pending),
                "volatile": {"corrected": count(0, 0), "uncorrected": count(1, 0)},
                "aggregate": {"corrected": count(0, 1), "uncorrected": count(1, 1)}}

    def retired_pages(self, handle: object) -> dict[str, int | bool | None]:
        single = self.call("nvmlDeviceGetRetiredPages", handle, 0)
        double = self.call("nvmlDeviceGetRetiredPages", handle, 1)
        pending = self.call("nvmlDeviceGetRetiredPagesPendingStatus", handle)
        return {"single_bit": None if single is None else len(single),
                "double_bit": None if double is None else len(double),
                "pending": None if pending is None else bool(pending)}

    def remapped_rows(self, handle: object) -> dict[str, int | bool | None]:
        rows = self.call("nvmlDeviceGetRemappedRows", handle)
        if not rows:
            return empty_remapped_rows()
        correctable, uncorrectable, pending, failure = rows[:4]
        return {"correctable": int(correctable), "uncorrectable": int(uncorrectable), "pending": bool(pending),
                "failure": bool(failure)}

    def mig(self, handle: object) -> JSONObject:
        modes = self.call("nvmlDeviceGetMigMode", handle)
        current, pending = modes if modes else (None, None)
        devices: list[JSONObject] = []
        slots = (self.call("nvmlDeviceGetMaxMigDeviceCount", handle) or 0) if current else 0
        for index in range(slots):
            device = self.call("nvmlDeviceGetMigDeviceHandleByIndex", handle, index)
            if device is None:
                continue
            attributes = self.call("nvmlDeviceGetAttributes", device)
            devices.append({"gpu_instance_id": self.call("nvmlDeviceGetGpuInstanceId", device),
                            "compute_instance_id": self.call("nvmlDeviceGetComputeInstanceId", device),
                            "device_index": index, "profile": None,
                            "multiprocessor_count": getattr(attributes, "multiprocessorCount", None),
                            "memory_total_mib": getattr(attributes, "memorySizeMB", None)})
        return {"mode_current": _enabled(current), "mode_pending": _enabled(pending),
                "instances": mig_instances(d for d in devices if d["gpu_instance_id"] is not None)}

    def processes(self, handle: object) -> dict[str, JSONObject]:
        found: dict[str, JSONObject] = {}
        for kind, name in (("C", "nvmlDeviceGetComputeRunningProcesses"),
                           ("G", "nvmlDeviceGetGraphicsRunningProcesses")):
            for process in self.call(name, handle) or []:
                pid = int(process.pid)
                entry = found.get(str(pid))
                if entry is not None:
                    entry["type"] = "C+G"
                    continue
                found[str(pid)] = {"pid": pid, "name": _text(self.call("nvmlSystemGetProcessName", pid)),
                                   "type": kind, "used_memory_mib": self.mib(process.usedGpuMemory)}
        return found

    def nvlink(self, handle: object) -> dict[str, JSONObject]:
        links: dict[str, JSONObject] = {}
        for link in range(_NVLINK_MAX_LINKS):
            state = self.call("nvmlDeviceGetNvLinkState", handle, link)
            if state is None:
                continue
            remote = self.call("nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
            links[str(link)] = {"state": "Active" if state else "Inactive",
                                "version": self.call("nvmlDeviceGetNvLinkVersion", handle, link),
                                "remote_pci_bus_id": normalize_bus_id(_text(getattr(remote, "busId", None)))}
            errors = {name: self.call("nvmlDeviceGetNvLinkErrorCounter", handle, link, counter)
                      for name, counter in _NVLINK_ERROR_COUNTERS}
            if any(count is not None for count in errors.values()):
                links[str(link)]["errors"] = errors
        return links

    def fabric(self, handle: object) -> dict[str, str | None] | None:
        structure = getattr(self.nv, "c_nvmlGpuFabricInfo_t", None)
        if structure is None:
            return None
        info = structure()
        if self.call("nvmlDeviceGetGpuFabricInfo", handle, ctypes.byref(info)) is None:
            return None
        state = _FABRIC_STATES.get(int(info.state))
        if state is None:
            return None
        return {"state": state, "status": "Success" if int(info.status) == 0 else f"NVML error {int(info.status)}"}

    def gpu(self, index: int, handle: object) -> JSONObject:
        record = empty_gpu()
        pci = self.call("nvmlDeviceGetPciInfo", handle)
        constraints = self.call("nvmlDeviceGetPowerManagementLimitConstraints", handle)
        memory = self.call("nvmlDeviceGetMemoryInfo", handle)
        bar1 = self.call("nvmlDeviceGetBAR1MemoryInfo", handle)
        utilization = self.call("nvmlDeviceGetUtilizationRates", handle)
        pstate = self.call("nvmlDeviceGetPerformanceState", handle)
        persistence = self.call("nvmlDeviceGetPersistenceMode", handle)
        record.update({
            "index": index,
            "uuid": _text(self.call("nvmlDeviceGetUUID", handle)),
            "pci_bus_id": normalize_bus_id(_text(getattr(pci, "busId", None))),
            "name": _text(self.call("nvmlDeviceGetName", handle)),
            "serial": _text(self.call("nvmlDeviceGetSerial", handle)),
            "vbios_version": _text(self.call("nvmlDeviceGetVbiosVersion", handle)),
            "compute_capability": self.compute_capability(handle),
            "firmware": self.firmware(handle),
            "persistence_mode": None if persistence is None else bool(persistence),
            "compute_mode": _COMPUTE_MODES.get(self.call("nvmlDeviceGetComputeMode", handle)),
            "performance_state": None if pstate is None or pstate == 32 else f"P{pstate}",
            "fan_speed_pct": self.call("nvmlDeviceGetFanSpeed", handle),
            "clocks": self.clocks(handle, "nvmlDeviceGetClockInfo", ("sm_mhz", 1), ("memory_mhz", 2),
                                  ("graphics_mhz", 0), ("video_mhz", 3)),
            "max_clocks": self.clocks(handle, "nvmlDeviceGetMaxClockInfo", ("sm_mhz", 1), ("memory_mhz", 2),
                                      ("graphics_mhz", 0)),
            "application_clocks": self.clocks(handle, "nvmlDeviceGetApplicationsClock", ("graphics_mhz", 0),
                                              ("memory_mhz", 2)),
            "default_application_clocks": self.clocks(handle, "nvmlDeviceGetDefaultApplicationsClock",
                                                      ("graphics_mhz", 0), ("memory_mhz", 2)),
            "clock_event_reasons": self.reasons(handle),
            "clock_event_time_us": self.clock_event_time_us(handle),
            "violation_time_us": self.violation_time_us(handle),
            "power": {"draw_w": self.watts(self.call("nvmlDeviceGetPowerUsage", handle)),
                      "limit_w": self.watts(self.call("nvmlDeviceGetPowerManagementLimit", handle)),
                      "default_limit_w": self.watts(self.call("nvmlDeviceGetPowerManagementDefaultLimit", handle)),
                      "enforced_limit_w": self.watts(self.call("nvmlDeviceGetEnforcedPowerLimit", handle)),
                      "min_limit_w": self.watts(constraints[0]) if constraints else None,
                      "max_limit_w": self.watts(constraints[1]) if constraints else None},
            "temperature": {"gpu_c": self.call("nvmlDeviceGetTemperature", handle, 0),
                            "memory_c": self.memory_temperature(handle),
                            "slowdown_c": self.call("nvmlDeviceGetTemperatureThreshold", handle, 1),
                            "shutdown_c": self.call("nvmlDeviceGetTemperatureThreshold", handle, 0),
                            "max_operating_c": self.call("nvmlDeviceGetTemperatureThreshold", handle, 3)},
            "memory": {"total_mib": self.mib(getattr(memory, "total", None)),
                       "used_mib": self.mib(getattr(memory, "used", None)),
                       "free_mib": self.mib(getattr(memory, "free", None))},
            "bar1_memory": {"total_mib": self.mib(getattr(bar1, "bar1Total", None)),
                            "used_mib": self.mib(getattr(bar1, "bar1Used", None))},
            "ecc": self.ecc(handle),
            "retired_pages": self.retired_pages(handle),
            "remapped_rows": self.remapped_rows(handle),
            "mig": self.mig(handle),
            "utilization": {"gpu_pct": getattr(utilization, "gpu", None),
                            "memory_pct": getattr(utilization, "memory", None)},
            "processes": self.processes(handle),
            "nvlink": self.nvlink(handle),
            "fabric": self.fabric(handle),
        })
        return record

    def compute_capability(self, handle: object) -> str | None:
        """`major.minor`, as nvidia-smi's `compute_cap` prints it."""
        found = self.call("nvmlDeviceGetCudaComputeCapability", handle)
        return f"{found[0]}.{found[1]}" if found else None

    def firmware(self, handle: object) -> dict[str, str | None]:
        """GSP mode and version, InfoROM image: nvmlDeviceGetGspFirmwareMode answers [enabled, default]."""
        mode = self.call("nvmlDeviceGetGspFirmwareMode", handle)
        return {"gsp_mode": _enabled(mode[0]) if mode else None,
                "gsp_version": _text(self.call("nvmlDeviceGetGspFirmwareVersion", handle)),
                "inforom_image": _text(self.call("nvmlDeviceGetInforomImageVersion", handle))}

    def memory_temperature(self, handle: object) -> int | None:
        field_id = getattr(self.nv, "NVML_FI_DEV_MEMORY_TEMP", None)
        values = self.call("nvmlDeviceGetFieldValues", handle, [field_id]) if field_id is not None else None
        if not values or getattr(values[0], "nvmlReturn", 1) != 0:
            return None
        return int(values[0].value.uiVal) or None

    def pcie_gpu(self, index: int, handle: object, bus_id: str | None) -> JSONObject:
        record = empty_pcie_gpu()
        affinity = self.call("nvmlDeviceGetCpuAffinity", handle, 64)
        record.update({
            "index": index, "pci_bus_id": bus_id,
            "link": {"gen_current": self.call("nvmlDeviceGetCurrPcieLinkGeneration", handle),
                     "gen_max": self.call("nvmlDeviceGetMaxPcieLinkGeneration", handle),
                     "width_current": self.call("nvmlDeviceGetCurrPcieLinkWidth", handle),
                     "width_max": self.call("nvmlDeviceGetMaxPcieLinkWidth", handle)},
            "replay_counter": self.call("nvmlDeviceGetPcieReplayCounter", handle),
            "cpu_affinity": cpu_list(int(word) for word in affinity) if affinity else None,
            "numa_node": self.call("nvmlDeviceGetNumaNodeId", handle),
        })
        return record

    def topology(self, handles: list[object], gpus: list[JSONObject],
                 pcie: list[JSONObject]) -> tuple[JSONObject, dict[str, dict[str, bool | None]]]:
        names = [f"GPU{i}" for i in range(len(handles))]
        pairs: dict[str, str] = {}
        p2p: dict[str, dict[str, bool | None]] = {}
        for i in range(len(handles)):
            for j in range(i + 1, len(handles)):
                key = f"{names[i]}~{names[j]}"
                links = sum(1 for link in map(object_or_empty, object_or_empty(gpus[i]["nvlink"]).values())
                            if link["state"] == "Active" and link["remote_pci_bus_id"] == gpus[j]["pci_bus_id"])
                level = self.call("nvmlDeviceGetTopologyCommonAncestor", handles[i], handles[j])
                pairs[key] = f"NV{links}" if links else _TOPOLOGY_LEVELS.get(level, "N/A") if level is not None \
                    else "N/A"
                p2p[key] = {}
                for cap, index in _P2P_CAPS:
                    status = self.call("nvmlDeviceGetP2PStatus", handles[i], handles[j], index)
                    p2p[key][cap] = None if status is None else status == 0
        topology: JSONObject = {"devices": names, "pairs": pairs,
                                "cpu_affinity": {names[i]: entry["cpu_affinity"] for i, entry in enumerate(pcie)},
                                "numa_affinity": {names[i]: None if entry["numa_node"] is None
                                                  else str(entry["numa_node"]) for i, entry in enumerate(pcie)},
                                "gpu_numa_id": None, "nics": None}
        return topology, p2p


def time_counters_us(nv: ModuleType, handle: object) -> dict[str, int] | None:
    """The accumulated slowdown counters of one GPU in microseconds since the driver loaded, for sampling
    during a run: the clock-event counters by reason (field values, else the power and sync-boost policy
    violations that count the same), and the thermal, board-limit and reliability policy violations. None
    where the driver counts none (their growth over a run is the time the GPU was held back)."""
    reader = _Reader(nv)
    found = {name: value for name, value in (reader.clock_event_time_us(handle) or {}).items() if value is not None}
    violation = reader.violation_time_us(handle) or {}
    for name, policy in (("sw_power_cap", "power"), ("sync_boost", "sync_boost"), ("thermal", "thermal"),
                         ("board_limit", "board_limit"), ("reliability", "reliability")):
        if name not in found and violation.get(policy) is not None:
            found[name] = int(violation[policy])  # type: ignore[arg-type]
    return found or None


def _enabled(mode: int | None) -> str | None:
    return None if mode is None else "Enabled" if int(mode) else "Disabled"


def read_nvml(nv: ModuleType) -> dict[str, JSONObject]:
    """`{"gpu": ..., "pcie": ...}` read through the NVML module `nv`, which must be initialised already."""
    reader = _Reader(nv)
    count = int(nv.nvmlDeviceGetCount())
    handles = [nv.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    gpus = [reader.gpu(i, handle) for i, handle in enumerate(handles)]
    pcie = [reader.pcie_gpu(i, handle, _text(gpus[i]["pci_bus_id"])) for i, handle in enumerate(handles)]
    keys = list(keyed_by_identity(gpus))
    topology, p2p = reader.topology(handles, gpus, pcie)
    return {
        "gpu": {"source": "nvml", "driver_version": _text(reader.call("nvmlSystemGetDriverVersion")),
                "cuda_driver_version": cuda_version_text(reader.call("nvmlSystemGetCudaDriverVersion")),
                "gpu_count": count, "gpus": dict(zip(keys, gpus, strict=True))},
        "pcie": {"source": "nvml", "gpus": dict(zip(keys, pcie, strict=True)), "topology": topology, "p2p": p2p,
                 "sysfs": None},
    }
