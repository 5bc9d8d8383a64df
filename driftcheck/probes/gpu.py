"""`gpu` probe: per GPU (keyed by UUID) identity, clocks, clock event reasons, power, temperatures,
memory, ECC/retired/remapped, MIG, utilization, processes, NVLink and fabric state."""

from __future__ import annotations

from typing import Any

from driftcheck.hosts import Host
from driftcheck.nvidia.gather import gather_nvidia
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.probes.base import Probe, ProbeOptions

# A GPU key in a data path: a UUID (plain segment) or a PCI bus id (quoted segment).
GPU_KEY = r'(?:\.[A-Za-z0-9_\-]+|\["[^"]*"\])'


class GpuProbe(Probe):
    """NVML in-process when available (isolated: initialisation can hang), else `nvidia-smi -q -x`."""

    name = "gpu"
    description = "GPUs: clocks, power, throttling, temperatures, ECC, MIG, processes (NVML or nvidia-smi)"
    timeout_s = 45.0
    isolated = True
    default_category = "other"
    categories = (
        (r"^driver_version$", "driver_version"),
        (r"^cuda_driver_version$", "cuda_version"),
        (r"^gpu_count$", "hardware_change"),
        (rf"^gpus{GPU_KEY}$", "hardware_change"),
        (rf"^gpus{GPU_KEY}\.(clocks|max_clocks|application_clocks|default_application_clocks|locked_clocks|"
         r"clock_event_reasons|power|performance_state)\b", "gpu_clock_power"),
        (rf"^gpus{GPU_KEY}\.(temperature|fan_speed_pct)\b", "thermal"),
        (rf"^gpus{GPU_KEY}\.(persistence_mode|ecc|retired_pages|remapped_rows|mig)\b", "mig_ecc_persistence"),
        (rf"^gpus{GPU_KEY}\.memory\.total_mib$", "hardware_change"),
        (rf"^gpus{GPU_KEY}\.(processes|utilization|memory|bar1_memory|compute_mode)\b", "gpu_contention"),
        (rf"^gpus{GPU_KEY}\.(nvlink|fabric)\b", "p2p_topology"),
        (rf"^gpus{GPU_KEY}\.(name|serial|vbios_version|uuid|index|pci_bus_id)$", "hardware_change"),
    )
    volatile = (
        rf"^gpus{GPU_KEY}\.power\.draw_w$",
        rf"^gpus{GPU_KEY}\.temperature\.(gpu_c|memory_c)$",
        rf"^gpus{GPU_KEY}\.clocks\.",
        rf"^gpus{GPU_KEY}\.utilization\.",
        rf"^gpus{GPU_KEY}\.(memory|bar1_memory)\.(used_mib|free_mib)$",
        rf"^gpus{GPU_KEY}\.fan_speed_pct$",
        rf"^gpus{GPU_KEY}\.performance_state$",
        rf"^gpus{GPU_KEY}\.processes{GPU_KEY}\.used_memory_mib$",
    )

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return gather_nvidia(host, with_topology=False)

    def parse(self, raw: Any) -> dict[str, Any]:
        if "nvml" in raw:
            return dict(raw["nvml"]["gpu"])
        return parse_smi_xml(raw["xml"])["gpu"]
