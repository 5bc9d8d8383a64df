"""`nvidia-smi topo -m`: the connection matrix alone."""

from __future__ import annotations

import re

from driftcheck.nvidia.topo import cut_among_gpus, header_device_names, parse_topo, rows_read
from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed

_ROW = re.compile(r"^\S*GPU0\s+X\s", re.MULTILINE)
_ROW_START = re.compile(r"\S*GPU0\s+X(?:\s|$)")
_LEGEND = re.compile(r"^\s*X\s+=\s+Self\s*$", re.MULTILINE)


def detect(text: str) -> bool:
    """Whether `text` holds the matrix's legend or its first row."""
    return bool(_LEGEND.search(text) or _ROW.search(text))


def parse(text: str) -> Parsed:
    """The `pcie` probe's topology (merged into a GPU description of the same machine when one is given).

    A matrix the paste cuts short among its GPU rows (a header of 8 GPUs, 3 rows) is refused, kept as text:
    its rows would read as a smaller machine. One cut only after its GPU rows (some NIC rows and the legend
    missing) is read: every GPU row holds its level to every device, so every pair of a GPU is there; what the
    cut took (pairs of two NICs, the NIC legend) is said (`cut`), not taken as removed."""
    topology = parse_topo(text)
    named = facts.header_devices(text)
    if cut_among_gpus(topology, named):
        raise ValueError(f"the matrix is cut: its header names {named} devices, {rows_read(topology)} rows follow")
    # Cut after the GPU rows: the pairs of NICs among themselves and the NIC legend are what the cut took.
    cut = ["probes.pcie.data.topology.nics", "probes.pcie.data.topology.pairs"] if rows_read(topology) < named else []
    return Parsed(probes={"pcie": {"topology": topology}}, role="topology", cut=cut)


def starts(lines: list[str], i: int) -> bool:
    """The matrix's header line: it names GPU0 first, and the next line is GPU0's row (`GPU0  X ...`). An
    output pasted right after another's (ibstat's adapters, then the matrix) is cut there."""
    names = header_device_names(lines[i])
    return bool(names) and names[0] == "GPU0" and i + 1 < len(lines) and bool(_ROW_START.match(lines[i + 1]))


FORMAT = Format("nvidia-smi-topo", "nvidia-smi topo -m", "nvidia-smi", detect, parse, starts,
                start_hint=r"\s*\S*GPU0\s")
