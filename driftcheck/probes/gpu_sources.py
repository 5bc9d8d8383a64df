"""Do the two sources of the gpu and pcie probes agree? NVML in-process against `nvidia-smi -q -x`
(+ `topo -m`), parsed by the same code, on the machine that has the GPUs.

A disagreement on a stable fact is a reader or parser bug; on a volatile reading (clocks,
temperature, power) it is expected between two reads. `benchmarks/gpu_sources_agree.py` prints this
comparison, and `benchmarks/gpu_check.py` includes it; both call `compare_sources`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from driftcheck.hosts import Host, LocalHost
from driftcheck.nvidia.gather import SMI_TOPO_ARGV, SMI_XML_ARGV, NvmlUnavailable, read_local_nvml
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.nvidia.topo import merge_topology, parse_topo
from driftcheck.snapshot.facts import is_reading
from driftcheck.snapshot.jsontypes import JSONValue
from driftcheck.snapshot.paths import format_path, leaves

# Facts one source cannot read at all (NVML's policy violation time has no nvidia-smi field): a null there is
# "unread", not a disagreement.
_ONE_SIDED = ("nvlink", "topology.nics", "topology.gpu_numa_id", "p2p", "source", "violation_time_us")


class SourcesUnavailable(Exception):
    """One of the two sources cannot be read here (no driver, no nvidia-smi): nothing to compare."""


def disagreements(probe: str, nvml: Mapping[str, JSONValue], smi: Mapping[str, JSONValue]) -> list[dict[str, object]]:
    """Every leaf whose value differs between the two sources, with whether the facts table calls it a reading."""
    left, right = dict(leaves(nvml)), dict(leaves(smi))
    rows: list[dict[str, object]] = []
    for parts in sorted(set(left) | set(right)):
        path = format_path(parts)
        a, b = left.get(parts), right.get(parts)
        if a == b or any(path.startswith(p) or f".{p}" in path for p in _ONE_SIDED):
            continue
        if isinstance(a, float) and isinstance(b, float) and abs(a - b) < 0.01:
            continue
        volatile = is_reading(("probes", probe, "data", *parts))
        rows.append({"probe": probe, "path": path, "nvml": a, "nvidia_smi": b, "volatile": volatile})
    return rows


def compare_sources(host: Host | None = None) -> dict[str, object]:
    """Read both sources here and compare them: {gpus, gpus_smi, driver_version, nvml_s, nvidia_smi_s,
    disagreements, stable_disagreements}. SourcesUnavailable when either source cannot be read."""
    host = host or LocalHost()
    started = time.perf_counter()
    try:
        nvml = read_local_nvml()
    except NvmlUnavailable as exc:
        raise SourcesUnavailable(f"NVML unavailable on this machine ({exc})") from None
    nvml_s = time.perf_counter() - started
    started = time.perf_counter()
    try:
        xml = host.run(list(SMI_XML_ARGV), timeout_s=60.0)
        topo = host.run(list(SMI_TOPO_ARGV), timeout_s=60.0)
    except FileNotFoundError:
        raise SourcesUnavailable("NVML works but nvidia-smi is not on PATH") from None
    smi_s = time.perf_counter() - started
    smi = parse_smi_xml(xml.stdout)
    if topo.returncode == 0:
        smi["pcie"] = merge_topology(smi["pcie"], parse_topo(topo.stdout))
    rows = disagreements("gpu", nvml["gpu"], smi["gpu"]) + disagreements("pcie", nvml["pcie"], smi["pcie"])
    return {"gpus": nvml["gpu"].get("gpu_count"), "gpus_smi": smi["gpu"].get("gpu_count"),
            "driver_version": nvml["gpu"].get("driver_version"), "nvml_s": round(nvml_s, 4),
            "nvidia_smi_s": round(smi_s, 4), "disagreements": rows,
            "stable_disagreements": sum(1 for r in rows if not r["volatile"])}
