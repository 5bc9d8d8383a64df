"""`numactl -H` pastes: each node's CPUs into the system probe's NUMA nodes, as the kernel writes a cpulist.

Values read off the files by hand (the `node N cpus:` lines, written as ranges).
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.numactl_hardware import NODES, parse
from tests.conftest import DATA

NUMACTL = DATA / "reports" / "numactl"

EXPECTED = {
    "one_node_2014.txt": {"0": "0-1"},
    # Nodes 0 and 3 have CPUs and no memory (a Threadripper in NPS4).
    "four_nodes_memoryless_2023.txt": {"0": "0-5,24-29", "1": "6-11,30-35", "2": "12-17,36-41", "3": "18-23,42-47"},
    "two_nodes_c5n.txt": {"0": "0-17,36-53", "1": "18-35,54-71"},
    "two_nodes_indented.txt": {"0": "0-15,32-47", "1": "16-31,48-63"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_node_keeps_its_cpus_and_the_list_is_whole(name: str) -> None:
    text = (NUMACTL / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "numactl-hardware"
    parsed = parse(text)
    nodes = parsed.probes["system"]["numa"]["nodes"]
    assert {node: entry["cpus"] for node, entry in nodes.items()} == EXPECTED[name]
    assert parsed.complete == [NODES] and parsed.cut == [] and parsed.unclaimed == []


def test_sizes_stay_raw_fields_never_a_rounded_fact() -> None:
    parsed = parse((NUMACTL / "four_nodes_memoryless_2023.txt").read_text("utf-8"))
    assert parsed.fields["node 0 size"] == "0 MB" and parsed.fields["node 1 size"] == "64307 MB"
    assert all("memory_total_kib" not in entry for entry in parsed.probes["system"]["numa"]["nodes"].values())
    assert parsed.fields["node distances"].splitlines()[1] == "0:  10  12  12  12"


def test_a_paste_that_stops_before_the_last_node_is_cut() -> None:
    lines = (NUMACTL / "four_nodes_memoryless_2023.txt").read_text("utf-8").splitlines()
    cut = "\n".join(lines[:9])  # ends after node 1's lines
    parsed = parse(cut)
    assert sorted(parsed.probes["system"]["numa"]["nodes"]) == ["0", "1"]
    assert parsed.complete == [] and parsed.cut == [NODES]
