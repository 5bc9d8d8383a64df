"""`numactl -H` (`numactl --hardware`): the NUMA nodes of a machine, with their CPUs.

It prints `available: N nodes (0-N)`, then per node its CPUs (`node 0 cpus: 0 1 2 ...`), size and free
memory in MB, then the distance matrix. The CPUs land in the `system` probe's NUMA nodes, written as the
kernel writes a cpulist (`0-17,36-53`), so a paste and a live probe of one machine agree. Sizes are kept
as raw fields: numactl rounds them to MB, and the probe holds kB, so turning one into the other would
claim a precision the paste does not have. The node list is complete when every node `available` names
is listed; a paste that stops earlier is cut there.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste

_AVAILABLE = re.compile(r"^\s*available:\s*(?P<count>\d+) nodes?\s*\((?P<nodes>[^)]*)\)\s*$")
_NODE = re.compile(r"^\s*node (?P<node>\d+) (?P<what>cpus|size|free):\s*(?P<value>.*?)\s*$")
_DISTANCES = re.compile(r"^\s*node distances:\s*$")
_DISTANCE_ROW = re.compile(r"^\s*(node(\s+\d+)+|\d+:(\s+\d+)+)\s*$")
_COMMAND = re.compile(r"^.*\bnumactl (-H|--hardware)\s*$")
NODES = "probes.system.data.numa.nodes"


def detect(text: str) -> bool:
    """numactl's `available: N nodes` line and at least one `node N cpus:` line."""
    lines = text.replace("\r", "").splitlines()
    return any(_AVAILABLE.match(line) for line in lines) and any(
        (m := _NODE.match(line)) and m["what"] == "cpus" for line in lines)


def starts(lines: list[str], i: int) -> bool:
    """numactl's first line, `available: N nodes (...)`."""
    return bool(_AVAILABLE.match(lines[i]))


def _cpulist(value: str) -> str | None:
    """`0 1 2 3 24 25` → `0-3,24-25`; `` (a node without CPUs) → ``; None for anything else."""
    if not value:
        return ""
    if not re.fullmatch(r"\d+( \d+)*", value):
        return None
    return facts.kernel_cpulist(",".join(value.split()))


def parse(text: str) -> Parsed:
    """The `system` probe's NUMA nodes (their CPUs) of a pasted `numactl -H`."""
    paste = Paste.of(text)
    count: int | None = None
    nodes: dict[str, dict[str, str]] = {}
    fields: dict[str, str] = {}
    distances: list[str] = []
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        available, node = _AVAILABLE.match(line), _NODE.match(line)
        if available:
            count = int(available["count"])
        elif node and node["what"] == "cpus" and (cpus := _cpulist(node["value"])) is not None:
            nodes[node["node"]] = {"cpus": cpus}
        elif node and node["what"] != "cpus":
            fields[f"node {node['node']} {node['what']}"] = node["value"]
        elif _DISTANCES.match(line) or (distances and _DISTANCE_ROW.match(line)):
            distances.append(line.strip())
        elif _COMMAND.match(line):
            paste.noise.append(i)
        else:
            continue
        paste.claim(i)
    if count is None or not nodes:
        raise ValueError("a numactl -H output without its `available:` line or any node's CPUs")
    if distances:
        fields["node distances"] = "\n".join(distances[1:])
    whole = len(nodes) == count
    return Parsed(probes={"system": {"numa": {"nodes": dict(sorted(nodes.items(), key=lambda kv: int(kv[0])))}}},
                  variant="numactl -H", fields=fields, unclaimed=paste.unclaimed(), noise=paste.noise_lines(),
                  complete=[NODES] if whole else [], cut=[] if whole else [NODES])


FORMAT = Format("numactl-hardware", "numactl -H", "numactl", detect, parse, starts,
                start_hint=r"\s*available:")
