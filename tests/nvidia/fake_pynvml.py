"""A stand-in for the `pynvml` module (the one mock allowed: NVML cannot run without a GPU).

It answers the NVML calls driftcheck makes for two GPUs described by plain dicts, with NVML's own
conventions: milliwatts, bytes, enum integers, bit masks, structs with attributes, and NVMLError
("Not Supported") for what a GPU lacks. The default machine mirrors the recorded dual RTX 2070 XML
(tests/data/nvidia/xml/rtx-2070-x2_590.44.01_v13.xml), so both paths can be compared.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any


class NVMLError(Exception):
    """pynvml's base error."""


NOT_SUPPORTED = NVMLError("Not Supported")

RTX_2070 = {
    "uuid": "GPU-12345678-aaaa-bbbb-cccc-0123456789ab", "bus_id": "00000000:01:00.0",
    "name": "NVIDIA GeForce RTX 2070", "serial": None, "vbios": "90.06.18.00.3A", "persistence": 1, "compute_mode": 0,
    "pstate": 8, "fan": 35, "clocks": {1: 300, 2: 405, 0: 300, 3: 540}, "max_clocks": {1: 2100, 2: 7001, 0: 2100},
    "app_clocks": None, "reasons": 0x1, "power_mw": 9230, "limit_mw": 175000, "default_limit_mw": 175000,
    "enforced_limit_mw": 175000, "constraints_mw": (125000, 200000), "temp": 14, "thresholds": {0: 94, 1: 91, 3: 89},
    "memory": (8192 * 2**20, 1 * 2**20, 7786 * 2**20), "bar1": (256 * 2**20, 3 * 2**20), "ecc": None,
    "mig": None, "mig_devices": [], "utilization": (0, 0), "processes": [], "nvlinks": {},
    "link": (1, 3, 8, 16), "replay": 0, "affinity": [0xFFFF], "numa": None, "fabric_state": None,
    # nvmlDeviceGetViolationStatus by policy and nvmlDeviceGetFieldValues by field id, in nanoseconds;
    # None: the driver supports neither (before 570 for the fields).
    "violations": None, "fields": None,
    # The XML's <gsp_firmware_version> and <inforom_version><img_version>; it prints no compute capability
    # and no GSP mode (None: Not Supported here; tests that need them take a recorded --query-gpu's).
    "gsp_version": "590.44.01", "inforom_image": "G001.0000.02.04", "compute_cap": None, "gsp_mode": None,
}


def dual_rtx_2070() -> list[dict[str, Any]]:
    """The two GPUs of the recorded dual RTX 2070 machine, as the fake serves them."""
    second = copy.deepcopy(RTX_2070)
    second.update({"uuid": "GPU-12345678-aaaa-bbbb-cccc-0123456789cd", "bus_id": "00000000:02:00.0", "fan": 34,
                   "power_mw": 11820, "temp": 13})
    return [copy.deepcopy(RTX_2070), second]


class FakeNvml:
    """The subset of pynvml driftcheck calls, over `gpus`; `p2p` maps (i, j, cap) to an NVML P2P status."""

    NVMLError = NVMLError
    NVML_FI_DEV_MEMORY_TEMP = 82

    def __init__(self, gpus: list[dict[str, Any]], driver: str = "590.44.01", cuda: int = 13010,
                 common_ancestor: int = 30, p2p_status: int = 0) -> None:
        self.gpus = gpus
        self.driver, self.cuda = driver, cuda
        self.common_ancestor, self.p2p_status = common_ancestor, p2p_status
        self.process_names: dict[int, str] = {}
        self.initialised = False

    def nvmlInit(self) -> None:
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.initialised = False

    def _gpu(self, handle: int) -> dict[str, Any]:
        return self.gpus[handle]

    @staticmethod
    def _supported(value: Any) -> Any:
        if value is None:
            raise NOT_SUPPORTED
        return value

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlSystemGetDriverVersion(self) -> str:
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return self.cuda

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return str(self._gpu(h)["uuid"])

    def nvmlDeviceGetPciInfo(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(busId=self._gpu(h)["bus_id"].encode())

    def nvmlDeviceGetName(self, h: int) -> str:
        return str(self._gpu(h)["name"])

    def nvmlDeviceGetSerial(self, h: int) -> str:
        return str(self._supported(self._gpu(h)["serial"]))

    def nvmlDeviceGetVbiosVersion(self, h: int) -> str:
        return str(self._gpu(h)["vbios"])

    def nvmlDeviceGetGspFirmwareVersion(self, h: int) -> bytes:
        return str(self._supported(self._gpu(h)["gsp_version"])).encode()

    def nvmlDeviceGetGspFirmwareMode(self, h: int) -> list[int]:
        return [int(self._supported(self._gpu(h)["gsp_mode"])), 1]

    def nvmlDeviceGetInforomImageVersion(self, h: int) -> bytes:
        return str(self._supported(self._gpu(h)["inforom_image"])).encode()

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        major, minor = self._supported(self._gpu(h)["compute_cap"])
        return int(major), int(minor)

    def nvmlDeviceGetPersistenceMode(self, h: int) -> int:
        return int(self._gpu(h)["persistence"])

    def nvmlDeviceGetComputeMode(self, h: int) -> int:
        return int(self._gpu(h)["compute_mode"])

    def nvmlDeviceGetPerformanceState(self, h: int) -> int:
        return int(self._gpu(h)["pstate"])

    def nvmlDeviceGetFanSpeed(self, h: int) -> int:
        return int(self._supported(self._gpu(h)["fan"]))

    def nvmlDeviceGetClockInfo(self, h: int, kind: int) -> int:
        return int(self._gpu(h)["clocks"][kind])

    def nvmlDeviceGetMaxClockInfo(self, h: int, kind: int) -> int:
        return int(self._gpu(h)["max_clocks"][kind])

    def nvmlDeviceGetApplicationsClock(self, h: int, kind: int) -> int:
        return int(self._supported(self._gpu(h)["app_clocks"])[kind])

    def nvmlDeviceGetDefaultApplicationsClock(self, h: int, kind: int) -> int:
        return int(self._supported(self._gpu(h)["app_clocks"])[kind])

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return int(self._gpu(h)["reasons"])

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return int(self._gpu(h)["power_mw"])

    def nvmlDeviceGetPowerManagementLimit(self, h: int) -> int:
        return int(self._gpu(h)["limit_mw"])

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h: int) -> int:
        return int(self._gpu(h)["default_limit_mw"])

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return int(self._gpu(h)["enforced_limit_mw"])

    def nvmlDeviceGetPowerManagementLimitConstraints(self, h: int) -> tuple[int, int]:
        low, high = self._gpu(h)["constraints_mw"]
        return int(low), int(high)

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return int(self._gpu(h)["temp"])

    def nvmlDeviceGetTemperatureThreshold(self, h: int, kind: int) -> int:
        return int(self._supported(self._gpu(h)["thresholds"].get(kind)))

    def nvmlDeviceGetFieldValues(self, h: int, field_ids: list[int]) -> list[SimpleNamespace]:
        fields = self._supported(self._gpu(h).get("fields"))
        # Per field, as NVML: the call succeeds and an unknown field says NOT_SUPPORTED (3) in nvmlReturn.
        return [SimpleNamespace(fieldId=f, nvmlReturn=0 if f in fields else 3,
                                value=SimpleNamespace(ullVal=int(fields.get(f, 0)), uiVal=int(fields.get(f, 0))))
                for f in field_ids]

    def nvmlDeviceGetViolationStatus(self, h: int, policy: int) -> SimpleNamespace:
        violations = self._supported(self._gpu(h).get("violations"))
        return SimpleNamespace(referenceTime=0, violationTime=int(self._supported(violations.get(policy))))

    def nvmlDeviceGetMemoryInfo(self, h: int) -> SimpleNamespace:
        total, used, free = self._gpu(h)["memory"]
        return SimpleNamespace(total=total, used=used, free=free)

    def nvmlDeviceGetBAR1MemoryInfo(self, h: int) -> SimpleNamespace:
        total, used = self._gpu(h)["bar1"]
        return SimpleNamespace(bar1Total=total, bar1Used=used, bar1Free=total - used)

    def nvmlDeviceGetEccMode(self, h: int) -> tuple[int, int]:
        ecc = self._supported(self._gpu(h)["ecc"])
        return ecc["mode"]

    def nvmlDeviceGetTotalEccErrors(self, h: int, error_type: int, counter: int) -> int:
        ecc = self._supported(self._gpu(h)["ecc"])
        return int(ecc["counts"][(error_type, counter)])

    def nvmlDeviceGetRetiredPages(self, h: int, cause: int) -> list[int]:
        ecc = self._supported(self._gpu(h)["ecc"])
        return list(ecc["retired"][cause])

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h: int) -> int:
        return int(self._supported(self._gpu(h)["ecc"])["retired_pending"])

    def nvmlDeviceGetRemappedRows(self, h: int) -> tuple[int, int, int, int]:
        return tuple(self._supported(self._gpu(h)["ecc"])["remapped"])  # type: ignore[return-value]

    def nvmlDeviceGetMigMode(self, h: int) -> tuple[int, int]:
        return tuple(self._supported(self._gpu(h)["mig"]))  # type: ignore[return-value]

    def nvmlDeviceGetMaxMigDeviceCount(self, h: int) -> int:
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, h: int, index: int) -> tuple[int, int]:
        if index >= len(self._gpu(h)["mig_devices"]):
            raise NVMLError("Not Found")
        return (h, index)

    def nvmlDeviceGetGpuInstanceId(self, mig: tuple[int, int]) -> int:
        return int(self._gpu(mig[0])["mig_devices"][mig[1]]["gi"])

    def nvmlDeviceGetComputeInstanceId(self, mig: tuple[int, int]) -> int:
        return int(self._gpu(mig[0])["mig_devices"][mig[1]]["ci"])

    def nvmlDeviceGetAttributes(self, mig: tuple[int, int]) -> SimpleNamespace:
        device = self._gpu(mig[0])["mig_devices"][mig[1]]
        return SimpleNamespace(multiprocessorCount=device["sms"], memorySizeMB=device["memory_mib"])

    def nvmlDeviceGetUtilizationRates(self, h: int) -> SimpleNamespace:
        gpu, memory = self._gpu(h)["utilization"]
        return SimpleNamespace(gpu=gpu, memory=memory)

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list[SimpleNamespace]:
        return [SimpleNamespace(pid=p["pid"], usedGpuMemory=p["bytes"]) for p in self._gpu(h)["processes"]]

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: int) -> list[SimpleNamespace]:
        return []

    def nvmlSystemGetProcessName(self, pid: int) -> bytes:
        return self.process_names.get(pid, "python").encode()

    def nvmlDeviceGetNvLinkState(self, h: int, link: int) -> int:
        return int(self._supported(self._gpu(h)["nvlinks"].get(link))["state"])

    def nvmlDeviceGetNvLinkVersion(self, h: int, link: int) -> int:
        return int(self._gpu(h)["nvlinks"][link]["version"])

    def nvmlDeviceGetNvLinkErrorCounter(self, h: int, link: int, counter: int) -> int:
        """A link's error counter by nvmlNvLinkErrorCounter_t; Not Supported for a link given no `errors`."""
        return int(self._supported(self._gpu(h)["nvlinks"][link].get("errors"))[counter])

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h: int, link: int) -> SimpleNamespace:
        return SimpleNamespace(busId=self._gpu(h)["nvlinks"][link]["remote"])

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        return int(self._gpu(h)["link"][0])

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return int(self._gpu(h)["link"][1])

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        return int(self._gpu(h)["link"][2])

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return int(self._gpu(h)["link"][3])

    def nvmlDeviceGetPcieReplayCounter(self, h: int) -> int:
        return int(self._gpu(h)["replay"])

    def nvmlDeviceGetCpuAffinity(self, h: int, size: int) -> list[int]:
        return list(self._gpu(h)["affinity"])

    def nvmlDeviceGetNumaNodeId(self, h: int) -> int:
        return int(self._supported(self._gpu(h)["numa"]))

    def nvmlDeviceGetTopologyCommonAncestor(self, a: int, b: int) -> int:
        return self.common_ancestor

    def nvmlDeviceGetP2PStatus(self, a: int, b: int, cap: int) -> int:
        return self.p2p_status
