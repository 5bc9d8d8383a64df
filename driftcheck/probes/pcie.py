"""`pcie` probe: per GPU link generation/width (current and max) and replay counter, the pairwise
topology and P2P capability, CPU/NUMA affinity, NICs in the matrix, and Linux sysfs link facts."""

from __future__ import annotations

from driftcheck.hosts import Host
from driftcheck.nvidia.driver import missing_driver
from driftcheck.nvidia.gather import gather_nvidia, smi_text
from driftcheck.nvidia.sysfs import gather_sysfs, parse_sysfs
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at


class PcieProbe(Probe):
    """NVML in-process when available, else `nvidia-smi -q -x` plus `nvidia-smi topo -m`; sysfs beside either."""

    name = "pcie"
    description = "PCIe links, GPU topology and P2P, CPU/NUMA affinity (NVML or nvidia-smi, and sysfs)"
    timeout_s = 45.0
    isolated = True

    def unavailable_on(self, host: Host) -> str | None:
        """No driver on this machine (`driftcheck.nvidia.driver`) and no NVIDIA display device in sysfs
        either: nothing that `gather` could read. With a device in sysfs, its link facts are still read."""
        reason = missing_driver(host)
        return reason if reason is not None and not gather_sysfs(host) else None

    def gather(self, host: Host, options: ProbeOptions) -> JSONObject:
        sysfs = gather_sysfs(host)
        try:
            raw = gather_nvidia(host, with_topology=True)
        except ProbeUnavailable:
            if not sysfs:
                raise
            raw = {}
        raw["sysfs"] = sysfs
        return raw

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict):
            raise ValueError("pcie raw material is not an object")
        sysfs = parse_sysfs({bdf: entry for bdf, entry in object_or_empty(raw.get("sysfs")).items()
                             if isinstance(entry, dict)})
        data: JSONObject
        if "nvml" in raw:
            data = dict(object_or_empty(value_at(raw, "nvml", "pcie")))
        elif raw.get("xml") is not None:
            # Imported here: a machine read through NVML, or without a driver, never parses nvidia-smi's text.
            from driftcheck.nvidia.smi_xml import parse_smi_xml
            from driftcheck.nvidia.topo import merge_topology, parse_topo
            from driftcheck.nvidia.values import NvidiaFormatError

            data = parse_smi_xml(smi_text(raw, "xml"))["pcie"]
            if raw.get("topo"):
                try:
                    data = merge_topology(data, parse_topo(smi_text(raw, "topo")))
                except NvidiaFormatError:
                    data["topology"] = None  # an unreadable matrix leaves the links and sysfs facts standing
        else:
            data = {"source": "sysfs", "gpus": {}, "topology": None, "p2p": None}
        data["sysfs"] = sysfs
        return data
