"""PyTorch's `python -m torch.utils.collect_env`, every generation.

Before 2023 it printed no CPU block; later ones add `CPU:` (lscpu) and, in 2.x, the nvidia-* wheels in
the "Versions of relevant libraries" pip list. All share the `Key: value` lines the scanner reads.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats import collect_env_scan as collect_env
from driftcheck.reports.formats.base import Format, Parsed

_VERSION_LINE = re.compile(r"PyTorch version\s*:")
_SECOND = re.compile(r"(Is debug build|CUDA used to build PyTorch|Versions of relevant libraries)\s*:")
# Lines only collect_env prints: a paste that lost its first lines still shows several of them.
_OWN_LINES = re.compile(r"^(GPU models and configuration|Nvidia driver version|cuDNN version|HIP runtime version|"
                        r"MIOpen runtime version|Is XNNPACK available|CUDA_MODULE_LOADING set to|"
                        r"CUDA runtime version|Is CUDA available)\s*:", re.MULTILINE)


def detect(text: str) -> bool:
    """Whether `text` holds collect_env's torch version line and one more of its own lines, or (cut at the top)
    at least three lines only collect_env prints."""
    if _VERSION_LINE.search(text) and _SECOND.search(text):
        return True
    return len({m.group(1) for m in _OWN_LINES.finditer(text.replace("\r", ""))}) >= 3


def starts(lines: list[str], i: int) -> bool:
    """collect_env's first line (vLLM's fork prints it too; detection tells them apart)."""
    return lines[i].strip().startswith("Collecting environment information")


def parse(text: str) -> Parsed:
    """The python, env, packages, torch, gpu, pcie, nccl and system facts the report holds."""
    scan = collect_env.scan(text)
    variant = "with CPU block" if scan.cpu_block else "short form (no CPU block)"
    probes = collect_env.common_probes(scan, FORMAT.name)
    return collect_env.parsed(scan, probes, variant, collect_env.COMMON_MAPPED)


FORMAT = Format("pytorch-collect-env", "python -m torch.utils.collect_env", "pytorch", detect, parse, starts,
                start_hint=r"\s*Collecting environment information")
