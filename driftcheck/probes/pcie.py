"""`pcie` probe: per GPU link generation/width (current and max) and replay counter, the pairwise
topology and P2P capability, CPU/NUMA affinity, NICs in the matrix, and Linux sysfs link facts."""

from __future__ import annotations

from typing import Any

from driftcheck.hosts import Host
from driftcheck.nvidia.gather import gather_nvidia
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.nvidia.sysfs import gather_sysfs, parse_sysfs
from driftcheck.nvidia.topo import merge_topology, parse_topo
from driftcheck.nvidia.values import NvidiaFormatError
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable


class PcieProbe(Probe):
    """NVML in-process when available, else `nvidia-smi -q -x` plus `nvidia-smi topo -m`; sysfs beside either."""

    name = "pcie"
    description = "PCIe links, GPU topology and P2P, CPU/NUMA affinity (NVML or nvidia-smi, and sysfs)"
    timeout_s = 45.0
    isolated = True

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        sysfs = gather_sysfs(host)
        try:
            raw = gather_nvidia(host, with_topology=True)
        except ProbeUnavailable:
            if not sysfs:
                raise
            raw = {}
        raw["sysfs"] = sysfs
        return raw

    def parse(self, raw: Any) -> dict[str, Any]:
        sysfs = parse_sysfs(raw.get("sysfs") or {})
        if "nvml" in raw:
            data = dict(raw["nvml"]["pcie"])
        elif raw.get("xml") is not None:
            data = parse_smi_xml(raw["xml"])["pcie"]
            if raw.get("topo"):
                try:
                    data = merge_topology(data, parse_topo(raw["topo"]))
                except NvidiaFormatError:
                    data["topology"] = None  # an unreadable matrix leaves the links and sysfs facts standing
        else:
            data = {"source": "sysfs", "gpus": {}, "topology": None, "p2p": None}
        data["sysfs"] = sysfs
        return data
