"""A bare `nvidia-smi topo -m` the paste cuts short is refused and kept as text, never read as a smaller machine.

`topo/cut_8gpu_2017.txt` (real): a header of 8 GPUs and a NIC, then 5 rows. Read as it stood, the rows made a
5-device machine whose last header columns (GPU5..GPU7, mlx4_0) became its CPU and NUMA affinity.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.importer import ImportFormatError, import_texts, parse_text
from tests.conftest import DATA

CUT = DATA / "reports" / "topo" / "cut_8gpu_2017.txt"


def test_a_cut_matrix_is_refused_with_what_it_holds() -> None:
    with pytest.raises(ImportFormatError, match="the matrix is cut: its header names 9 devices, 5 rows follow"):
        parse_text(CUT.read_text("utf-8"), CUT.name)


def test_in_an_issue_body_a_cut_matrix_is_an_unread_section() -> None:
    pip_list = (DATA / "reports" / "pip" / "list_small.txt").read_text("utf-8")
    body = f"```\n{CUT.read_text('utf-8')}```\n\n```\n{pip_list}```\n"
    host = import_texts([("body", "body", body)]).document["host"]
    assert [s["format"] for s in host["sources"]] == ["pip freeze / pip list"]
    assert "the matrix is cut" in host["unread_sections"][0]["reason"]


# Whole matrices pasted on their own (tabs, spaces, indented with a legend wrapped at 80 columns): devices, every
# pair, CPU and NUMA affinity, as read by hand.
WHOLE = {
    "tabs_2gpu_phb_2026.txt": (["GPU0", "GPU1"], {"GPU0~GPU1": "PHB"}, {"GPU0": "0-63", "GPU1": "0-63"},
                               {"GPU0": "0", "GPU1": "0"}),
    "indented_wrapped_legend_2026.txt": (["GPU0", "GPU1"], {"GPU0~GPU1": "NODE"}, {"GPU0": "0-15", "GPU1": "0-15"},
                                         {"GPU0": "0", "GPU1": "0"}),
    "five_gpus_two_numa_2026.txt": (
        ["GPU0", "GPU1", "GPU2", "GPU3", "GPU4"],
        {"GPU0~GPU1": "SYS", "GPU0~GPU2": "SYS", "GPU0~GPU3": "SYS", "GPU0~GPU4": "SYS", "GPU1~GPU2": "PHB",
         "GPU1~GPU3": "NODE", "GPU1~GPU4": "NODE", "GPU2~GPU3": "NODE", "GPU2~GPU4": "NODE", "GPU3~GPU4": "PHB"},
        {"GPU0": "8-15,24-31", **{f"GPU{i}": "0-7,16-23" for i in range(1, 5)}},
        {"GPU0": "1", **{f"GPU{i}": "0" for i in range(1, 5)}}),
}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_a_whole_matrix_gives_every_pair_and_affinity(name: str) -> None:
    imported = parse_text((CUT.parent / name).read_text("utf-8"), name)
    assert imported.format.name == "nvidia-smi-topo" and imported.parsed.role == "topology"
    topology = imported.parsed.probes["pcie"]["topology"]
    devices, pairs, cpus, numa = WHOLE[name]
    assert topology["devices"] == devices and topology["pairs"] == pairs
    assert topology["cpu_affinity"] == cpus and topology["numa_affinity"] == numa
    # `GPU NUMA ID` says N/A on these machines: unreadable, not a node.
    assert set(topology["gpu_numa_id"].values()) == {None}


@pytest.mark.parametrize(("name", "reason"), [
    ("cut_16gpu_nv6_mlx5_2021.txt", "the matrix is cut: its header names 26 devices, 5 rows follow"),
    ("cut_8gpu_10nic_pix_2025.txt", "row 'GPU6' does not hold one level per device"),
])
def test_matrices_cut_mid_row_are_refused_never_a_smaller_machine(name: str, reason: str) -> None:
    with pytest.raises(ImportFormatError, match=reason):
        parse_text((CUT.parent / name).read_text("utf-8"), name)
