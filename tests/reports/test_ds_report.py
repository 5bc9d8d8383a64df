"""DeepSpeed's `ds_report`: torch and DeepSpeed versions from its environment block, the ops as raw fields.

Values read off the files by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.ds_report import parse
from driftcheck.reports.importer import ImportFormatError, import_texts, parse_text
from tests.conftest import DATA

DS = DATA / "reports" / "deepspeed"


def _read(name: str) -> str:
    return (DS / name).read_text("utf-8")


def test_the_environment_block_gives_torch_its_cuda_and_deepspeed() -> None:
    text = _read("env_0_15.txt")
    assert (found := detect(text)) is not None and found.name == "ds-report"
    parsed = parse(text)
    assert parsed.probes["torch"] == {"version": "2.3.0+cu121", "cuda_version": "12.1"}
    packages = parsed.probes["packages"]["packages"]
    assert {k: v["version"] for k, v in packages.items()} == {"torch": "2.3.0+cu121", "deepspeed": "0.15.5+46d7d0d1"}
    # nvcc's version is no torch fact: kept raw, as is what the wheel was compiled with.
    assert parsed.fields["nvcc version"] == "12.0"
    assert parsed.fields["deepspeed wheel compiled w."] == "torch 0.0, cuda 0.0"
    assert parsed.unclaimed == []


def test_a_rocm_build_gives_hip_and_no_cuda() -> None:
    parsed = parse(_read("env_rocm_0_6.txt"))
    assert parsed.probes["torch"] == {"version": "1.10.0a0+git539d476", "hip_version": "5.1.20531-cacfa990"}
    assert parsed.probes["packages"]["packages"]["deepspeed"]["version"] == "0.6.2+ef17c89"
    assert parsed.fields["deepspeed info"] == "0.6.2+ef17c89, ef17c89, master"


def test_the_op_table_alone_is_kept_as_fields_and_gives_no_fact() -> None:
    parsed = parse(_read("ops_2022.txt"))
    assert parsed.probes == {}
    assert parsed.fields["op cpu_adam"] == "installed [NO], compatible [OKAY]"
    assert parsed.fields["op stochastic_transformer"] == "installed [NO], compatible [OKAY]"
    assert parsed.fields["ninja"] == "[OKAY]" and len([k for k in parsed.fields if k.startswith("op ")]) == 11
    with pytest.raises(ImportFormatError, match="holds no fact driftcheck reads"):
        parse_text(_read("ops_2022.txt"), "ops.txt")


def test_in_an_issue_body_the_op_table_is_an_unread_section_and_the_block_is_read(tmp_path: Path) -> None:
    body = _read("ops_2022.txt") + "\n" + _read("env_0_15.txt")
    host = import_texts([("b", "b", body)]).document["host"]
    assert [s["format"] for s in host["sources"]] == ["ds_report"]
    assert host["unread_sections"][0]["reason"].endswith("holds no fact driftcheck reads")
