"""`nvidia-smi topo -m`: the connection matrix alone."""

from __future__ import annotations

import re

from driftcheck.nvidia.topo import parse_topo, topology_devices
from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed

_ROW = re.compile(r"^\S*GPU0\s+X\s", re.MULTILINE)
_LEGEND = re.compile(r"^\s*X\s+=\s+Self\s*$", re.MULTILINE)


def detect(text: str) -> bool:
    """Whether `text` holds the matrix's legend or its first row."""
    return bool(_LEGEND.search(text) or _ROW.search(text))


def parse(text: str) -> Parsed:
    """The `pcie` probe's topology (merged into a GPU description of the same machine when one is given).

    A matrix the paste cuts short (a header of 8 GPUs, 3 rows) is refused, kept as text: its rows would read as
    a smaller machine, and the header's columns past the rows as CPU and NUMA affinity."""
    topology = parse_topo(text)
    named, rows = facts.header_devices(text), len(topology_devices(topology))
    if rows < named:
        raise ValueError(f"the matrix is cut: its header names {named} devices, {rows} rows follow")
    return Parsed(probes={"pcie": {"topology": topology}}, role="topology")


FORMAT = Format("nvidia-smi-topo", "nvidia-smi topo -m", "nvidia-smi", detect, parse)
