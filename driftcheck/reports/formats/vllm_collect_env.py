"""vLLM's `vllm collect-env` / `python collect_env.py`: PyTorch's report plus vLLM's own facts.

The classic form appends `vLLM Version`, `vLLM Build Flags`, the `GPU Topology` matrix and the
environment variables that matter (`NAME=value`) to PyTorch's lines; the 2025 form groups everything
under `=====` section banners with padded keys (`OS        : ...`).
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats import collect_env_scan as collect_env
from driftcheck.reports.formats.base import Format, Parsed

_MARK = re.compile(r"^\s*vLLM (Version|Build Flags)\s*:", re.MULTILINE)
# The 2025 form's section banners; PyTorch's own report has none.
_SECTIONED = re.compile(r"^=+\n\s*(System Info|PyTorch Info|Python Environment|CUDA / GPU Info|CPU Info|vLLM Info|"
                        r"Environment Variables)\s*\n=+$", re.MULTILINE)


def detect(text: str) -> bool:
    """Whether `text` holds vLLM's version or build-flags line."""
    text = text.replace("\r", "")
    return bool(_MARK.search(text) or _SECTIONED.search(text))


def _vllm_version(value: str | None) -> str | None:
    """`0.9.2.dev29+gc7ea0b56c (git sha: c7ea0b56c)` → `0.9.2.dev29+gc7ea0b56c`."""
    known = facts.known(value)
    return known.split(" (")[0].strip() if known else None


def parse(text: str) -> Parsed:
    """PyTorch's facts, plus vLLM's version (as the vllm package when the pip list lacks it)."""
    scan = collect_env.scan(text)
    version = _vllm_version(scan.fields.get("vLLM Version"))
    if version and not any(facts.package_key(name) == "vllm" for name, _ in scan.pip):
        scan.pip.append(("vllm", version))
    variant = "sectioned (2025)" if scan.sections else "classic"
    probes = collect_env.common_probes(scan, FORMAT.name)
    return collect_env.parsed(scan, probes, variant, (*collect_env.COMMON_MAPPED, "vLLM Version"))


FORMAT = Format("vllm-collect-env", "vllm collect-env", "vllm", detect, parse)
