"""`gpu` probe: per GPU (keyed by UUID) identity, clocks, clock event reasons, power, temperatures,
memory, ECC/retired/remapped, MIG, utilization, processes, NVLink and fabric state."""

from __future__ import annotations

from driftcheck.hosts import Host
from driftcheck.nvidia.gather import gather_nvidia, smi_text
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at

# Present wherever the NVIDIA kernel module is loaded, containers included.
_DRIVER_DIRECTORY = "/proc/driver/nvidia"


class GpuProbe(Probe):
    """NVML in-process when available (isolated: initialisation can hang), else `nvidia-smi -q -x`."""

    name = "gpu"
    description = "GPUs: clocks, power, throttling, temperatures, ECC, MIG, processes (NVML or nvidia-smi)"
    timeout_s = 45.0
    isolated = True

    def unavailable_on(self, host: Host) -> str | None:
        """On this machine, no NVIDIA driver when it has neither /proc/driver/nvidia nor a /dev/nvidia* node:
        then loading NVML (which searches the library path) and spawning nvidia-smi in a child of its own
        only take time (half a second of every snapshot) to say so. Elsewhere (SSH, a replay) nvidia-smi
        runs there and answers for itself."""
        if not host.capabilities.in_process or host.exists(_DRIVER_DIRECTORY):
            return None
        try:
            devices = host.list_dir("/dev")
        except OSError:
            return None  # cannot tell: let NVML and nvidia-smi say
        if any(name.startswith("nvidia") for name in devices):
            return None
        return f"no NVIDIA driver on this host (no {_DRIVER_DIRECTORY}, no /dev/nvidia*): NVML and nvidia-smi not tried"

    def gather(self, host: Host, options: ProbeOptions) -> JSONObject:
        return gather_nvidia(host, with_topology=False)

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict):
            raise ValueError("gpu raw material is not an object")
        if "nvml" in raw:
            return dict(object_or_empty(value_at(raw, "nvml", "gpu")))
        return parse_smi_xml(smi_text(raw, "xml"))["gpu"]
