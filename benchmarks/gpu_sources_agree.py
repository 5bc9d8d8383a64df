"""Where NVML and nvidia-smi disagree about the same GPUs, on a machine that has them.

Prints the comparison of `driftcheck.probes.gpu_sources.compare_sources` (the same one
`benchmarks/gpu_check.py` runs): every fact on which the two sources differ, split into stable facts
(a disagreement there is a parser or reader bug) and volatile readings, plus the time each source
took and their ratio. On a machine without an NVIDIA driver it says so and exits 0.

    python benchmarks/gpu_sources_agree.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from driftcheck.probes.gpu_sources import SourcesUnavailable, compare_sources  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the disagreements as JSON")
    args = parser.parse_args(argv)
    try:
        found = compare_sources()
    except SourcesUnavailable as exc:
        print(f"no GPU: {exc}; nothing to compare")
        return 0
    if args.json:
        print(json.dumps(found, indent=2, sort_keys=True, default=str))
        return 0
    rows = found["disagreements"]
    stable = [r for r in rows if not r["volatile"]]
    print(f"GPUs: {found['gpus']} (NVML) / {found['gpus_smi']} (nvidia-smi); driver {found['driver_version']}")
    print(f"time: NVML {found['nvml_s']:.3f} s, nvidia-smi -q -x + topo -m {found['nvidia_smi_s']:.3f} s, "
          f"ratio nvidia-smi/NVML {found['nvidia_smi_s'] / max(found['nvml_s'], 1e-9):.1f}x")
    print(f"disagreements: {len(stable)} stable, {len(rows) - len(stable)} volatile")
    for row in stable + [r for r in rows if r["volatile"]]:
        tag = "volatile" if row["volatile"] else "STABLE  "
        print(f"  {tag} probes.{row['probe']}.data.{row['path']}: nvml={row['nvml']!r} "
              f"nvidia-smi={row['nvidia_smi']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
