"""`nvidia-smi --query-gpu=... --format=csv`: the fields the user queried, one row per GPU."""

from __future__ import annotations

import re

from driftcheck.nvidia.smi_csv import parse_query_csv
from driftcheck.reports.formats.base import Format, Parsed

_HEADER = re.compile(r"^\s*[a-z][\w.]*(\s*\[[^\]]*\])?(\s*,\s*[A-Za-z][\w.]*(\s*\[[^\]]*\])?)+\s*$")
_KNOWN = ("name", "uuid", "index", "pci.bus_id", "driver_version", "power.draw", "memory.used", "pstate")


def detect(text: str) -> bool:
    """Whether the first line is a --query-gpu header naming at least one field nvidia-smi knows."""
    first = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
    return bool(_HEADER.match(first)) and any(f.split("[")[0].strip() in _KNOWN for f in first.split(","))


def parse(text: str) -> Parsed:
    """The `gpu` and `pcie` probes, with the queried fields filled."""
    return Parsed(probes=dict(parse_query_csv(text)), role="gpu")


FORMAT = Format("nvidia-smi-csv", "nvidia-smi --query-gpu --format=csv", "nvidia-smi", detect, parse)
