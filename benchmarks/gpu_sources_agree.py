"""Where NVML and nvidia-smi disagree about the same GPUs, on a machine that has them.

Takes both sources of the gpu and pcie probes on this machine — NVML in-process (nvidia-ml-py) and
`nvidia-smi -q -x` + `nvidia-smi topo -m` parsed by driftcheck — and prints every fact on which they
differ, split into stable facts (a disagreement there is a parser or reader bug) and volatile
readings (expected to move between two reads), plus the time each source took and their ratio.
On a machine without an NVIDIA driver it says so and exits 0.

    python benchmarks/gpu_sources_agree.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from driftcheck.host import LocalHost  # noqa: E402
from driftcheck.nvidia.gather import SMI_TOPO_ARGV, SMI_XML_ARGV, NvmlUnavailable, read_local_nvml  # noqa: E402
from driftcheck.nvidia.smi_xml import parse_smi_xml  # noqa: E402
from driftcheck.nvidia.topo import merge_topology, parse_topo  # noqa: E402
from driftcheck.snapshot.facts import is_volatile  # noqa: E402
from driftcheck.snapshot.paths import format_path  # noqa: E402

# Facts one source cannot read at all: a null there is "unread", not a disagreement.
_ONE_SIDED = ("nvlink", "topology.nics", "topology.gpu_numa_id", "p2p", "source")


def _leaves(data: Any, parts: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if isinstance(data, dict) and data:
        found: dict[tuple[str, ...], Any] = {}
        for key, value in data.items():
            found.update(_leaves(value, (*parts, str(key))))
        return found
    return {parts: data}


def disagreements(probe: str, nvml: dict[str, Any], smi: dict[str, Any]) -> list[dict[str, Any]]:
    """Every leaf whose value differs between the two sources, with whether the facts table calls it volatile."""
    left, right = _leaves(nvml), _leaves(smi)
    rows = []
    for parts in sorted(set(left) | set(right)):
        path = format_path(parts)
        a, b = left.get(parts), right.get(parts)
        if a == b or any(path.startswith(p) or f".{p}" in path for p in _ONE_SIDED):
            continue
        if isinstance(a, float) and isinstance(b, float) and abs(a - b) < 0.01:
            continue
        volatile = is_volatile(("probes", probe, "data", *parts))
        rows.append({"probe": probe, "path": path, "nvml": a, "nvidia_smi": b, "volatile": volatile})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the disagreements as JSON")
    args = parser.parse_args(argv)
    host = LocalHost()
    started = time.perf_counter()
    try:
        nvml = read_local_nvml()
    except NvmlUnavailable as exc:
        print(f"no GPU: NVML unavailable on this machine ({exc}); nothing to compare")
        return 0
    nvml_s = time.perf_counter() - started
    started = time.perf_counter()
    try:
        xml = host.run(list(SMI_XML_ARGV), timeout_s=60.0)
        topo = host.run(list(SMI_TOPO_ARGV), timeout_s=60.0)
    except FileNotFoundError:
        print("no GPU: NVML works but nvidia-smi is not on PATH; nothing to compare")
        return 0
    smi_s = time.perf_counter() - started
    smi = parse_smi_xml(xml.stdout)
    if topo.returncode == 0:
        smi["pcie"] = merge_topology(smi["pcie"], parse_topo(topo.stdout))
    rows = disagreements("gpu", nvml["gpu"], smi["gpu"]) + disagreements("pcie", nvml["pcie"], smi["pcie"])
    stable = [r for r in rows if not r["volatile"]]
    if args.json:
        print(json.dumps({"gpus": nvml["gpu"]["gpu_count"], "nvml_s": nvml_s, "nvidia_smi_s": smi_s,
                          "disagreements": rows}, indent=2, sort_keys=True, default=str))
        return 0
    print(f"GPUs: {nvml['gpu']['gpu_count']} (NVML) / {smi['gpu']['gpu_count']} (nvidia-smi); "
          f"driver {nvml['gpu']['driver_version']}")
    print(f"time: NVML {nvml_s:.3f} s, nvidia-smi -q -x + topo -m {smi_s:.3f} s, "
          f"ratio nvidia-smi/NVML {smi_s / max(nvml_s, 1e-9):.1f}x")
    print(f"disagreements: {len(stable)} stable, {len(rows) - len(stable)} volatile")
    for row in stable + [r for r in rows if r["volatile"]]:
        tag = "volatile" if row["volatile"] else "STABLE  "
        print(f"  {tag} probes.{row['probe']}.data.{row['path']}: nvml={row['nvml']!r} "
              f"nvidia-smi={row['nvidia_smi']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
