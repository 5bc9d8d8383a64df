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
