"""`nvidia-smi -q` (whole or `-d SECTION`): the text GPU description."""

from __future__ import annotations

import re

from driftcheck.nvidia.smi_text import parse_smi_text
from driftcheck.reports.formats.base import Format, Parsed, gpu_completeness

# The per-GPU `Processes` section (`Processes : None` when none run).
_PROCESSES = re.compile(r"^\s+Processes\s*:?", re.MULTILINE)
_MARK = re.compile(r"^(=+NVSMI LOG=+|(?:Driver|KMD) Version\s+:.*)$", re.MULTILINE)


def detect(text: str) -> bool:
    """Whether `text` holds nvidia-smi -q's banner or its `Driver Version  : ...` line."""
    return bool(_MARK.search(text))


def starts(lines: list[str], i: int) -> bool:
    """The `==NVSMI LOG==` banner."""
    return bool(re.match(r"^=+NVSMI LOG=+$", lines[i].strip()))


def parse(text: str) -> Parsed:
    """The `gpu` and `pcie` probes of the text."""
    probes = dict(parse_smi_text(text))
    return Parsed(probes=probes, role="gpu", complete=gpu_completeness(probes, len(_PROCESSES.findall(text))))


FORMAT = Format("nvidia-smi-text", "nvidia-smi -q", "nvidia-smi", detect, parse, starts,
                start_hint=r"\s*=+NVSMI LOG")
