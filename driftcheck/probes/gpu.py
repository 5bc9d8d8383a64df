"""`gpu` probe: per GPU (keyed by UUID) identity, clocks, clock event reasons, power, temperatures,
memory, ECC/retired/remapped, MIG, utilization, processes, NVLink and fabric state."""

from __future__ import annotations

from driftcheck.hosts import Host
from driftcheck.nvidia.driver import missing_driver
from driftcheck.nvidia.gather import gather_nvidia, smi_text
from driftcheck.nvidia.xid import CURRENT_BOOT, PREVIOUS_BOOT, attach_xids, read_kernel_xid_log
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at


class GpuProbe(Probe):
    """NVML in-process when available (isolated: initialisation can hang), else `nvidia-smi -q -x`."""

    name = "gpu"
    description = "GPUs: clocks, power, throttling, temperatures, ECC, MIG, processes (NVML or nvidia-smi)"
    timeout_s = 45.0
    isolated = True

    def unavailable_on(self, host: Host) -> str | None:
        """No driver on this machine: see `driftcheck.nvidia.driver`."""
        return missing_driver(host)

    def gather(self, host: Host, options: ProbeOptions) -> JSONObject:
        raw = gather_nvidia(host, with_topology=False)
        raw["kernel_xid_log"] = read_kernel_xid_log(host, CURRENT_BOOT)
        raw["kernel_xid_log_previous_boot"] = read_kernel_xid_log(host, PREVIOUS_BOOT)
        return raw

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict):
            raise ValueError("gpu raw material is not an object")
        if "nvml" in raw:
            data = dict(object_or_empty(value_at(raw, "nvml", "gpu")))
        else:
            # Imported here: a machine read through NVML, or without a driver, never parses XML.
            from driftcheck.nvidia.smi_xml import parse_smi_xml

            data = parse_smi_xml(smi_text(raw, "xml"))["gpu"]
        # Raw material recorded before the kernel log was read holds no key: unknown, as an unreadable log.
        for key, field in (("kernel_xid_log", "xid_since_boot"), ("kernel_xid_log_previous_boot",
                                                                   "xid_previous_boot")):
            log = raw.get(key)
            attach_xids(object_or_empty(data.get("gpus")), log if isinstance(log, str) else None, field)
        return data
