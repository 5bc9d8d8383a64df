"""`gpu` probe: per GPU (keyed by UUID) identity, clocks, clock event reasons, power, temperatures,
memory, ECC/retired/remapped, MIG, utilization, processes, NVLink and fabric state."""

from __future__ import annotations

from typing import Any

from driftcheck.hosts import Host
from driftcheck.nvidia.gather import gather_nvidia
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.probes.base import Probe, ProbeOptions


class GpuProbe(Probe):
    """NVML in-process when available (isolated: initialisation can hang), else `nvidia-smi -q -x`."""

    name = "gpu"
    description = "GPUs: clocks, power, throttling, temperatures, ECC, MIG, processes (NVML or nvidia-smi)"
    timeout_s = 45.0
    isolated = True

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return gather_nvidia(host, with_topology=False)

    def parse(self, raw: Any) -> dict[str, Any]:
        if "nvml" in raw:
            return dict(raw["nvml"]["gpu"])
        return parse_smi_xml(raw["xml"])["gpu"]
