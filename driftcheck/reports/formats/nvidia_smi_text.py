"""`nvidia-smi -q` (whole or `-d SECTION`): the text GPU description."""

from __future__ import annotations

import re

from driftcheck.nvidia.smi_text import parse_smi_text
from driftcheck.reports.formats.base import Format, Parsed

_MARK = re.compile(r"^(=+NVSMI LOG=+|Driver Version\s+:.*)$", re.MULTILINE)


def detect(text: str) -> bool:
    """Whether `text` holds nvidia-smi -q's banner or its `Driver Version  : ...` line."""
    return bool(_MARK.search(text))


def parse(text: str) -> Parsed:
    """The `gpu` and `pcie` probes of the text."""
    return Parsed(probes=dict(parse_smi_text(text)), role="gpu")


FORMAT = Format("nvidia-smi-text", "nvidia-smi -q", "nvidia-smi", detect, parse)
