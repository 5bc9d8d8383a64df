"""xFormers' `python -m xformers.info`: real pastes from public issue threads (see SOURCES.md, xformers/).

Every expected value below was read off the file by hand: the `xFormers` line, `pytorch.version`,
`pytorch.cuda`, `gpu.name` and `gpu.compute_capability`; the operator and build lines stay raw fields.
Five of the eight pastes end inside the list, as the stored thread stops mid-line.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.xformers_info import FIELDS, parse
from driftcheck.reports.importer import import_texts, parse_text
from tests.conftest import DATA, CliResult

XF = DATA / "reports" / "xformers"

# file: (xformers version, torch version or None, CUDA available or None, (GPU name, capability) or None, cut)
EXPECTED: dict[str, tuple[str, str | None, bool | None, tuple[str, str] | None, bool]] = {
    "info_0_0_15_630": ("0.0.15+6cd1b36.d20230110", "1.12.1+cu113", True, ("NVIDIA GeForce GTX 1060 6GB", "6.1"),
                        False),
    # Ends on a name whose value never came: the list is cut there.
    "info_0_0_16_678": ("0.0.16", "1.13.1+cu117", True, ("NVIDIA GeForce RTX 3090", "8.6"), True),
    "info_0_0_22_939": ("0.0.22.post7+cu118", "2.0.1+cu118", True, ("Tesla P100-PCIE", "6.0"), False),
    # Cut inside the operator list: torch and the GPU were never printed, so they are not facts of this paste.
    "info_0_0_26_firefly_258": ("0.0.26.post1", None, None, None, True),
    "info_0_0_28_10070": ("0.0.28.post3", None, None, None, True),
    "info_0_0_28_1176": ("0.0.28.post3", None, None, None, True),
    "info_0_0_35_1388": ("0.0.35", None, None, None, True),
    # Cut after the GPU lines, inside a name (`dc`).
    "info_0_0_35_1399": ("0.0.35+42fc265.d20260623", "2.12.1+cu130", True, ("NVIDIA GeForce RTX 5070", "12.0"), True),
}


def _read(name: str) -> str:
    return (XF / f"{name}.txt").read_text("utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_paste_reads_its_versions_gpu_and_whether_it_is_cut(name: str) -> None:
    xformers, torch, cuda_available, gpu, cut = EXPECTED[name]
    text = _read(name)
    assert (found := detect(text)) is not None and found.name == "xformers-info"
    parsed = parse(text)
    packages = {key: entry["version"] for key, entry in parsed.probes["packages"]["packages"].items()}
    assert packages == {"xformers": xformers, **({"torch": torch} if torch else {})}
    assert parsed.probes.get("torch", {}).get("version") == torch
    assert parsed.probes.get("torch", {}).get("cuda_available") == cuda_available
    gpus = parsed.probes.get("gpu", {}).get("gpus", {})
    assert (gpus["GPU0"]["name"], gpus["GPU0"]["compute_capability"]) == gpu if gpu else gpus == {}
    # xformers names only the device in use: never how many there are.
    assert "gpu_count" not in parsed.probes.get("gpu", {}) and parsed.complete == []
    assert parsed.cut == ([FIELDS] if cut else [])


def test_a_name_padded_past_forty_columns_keeps_its_value() -> None:
    # Paste cleaning splits a line at 40 blanks or more; xformers pads names to 50 columns.
    parsed = parse(_read("info_0_0_16_678"))
    assert parsed.fields["xformers build.info"] == "available"
    assert parsed.fields["xformers build.env.TORCH_CUDA_ARCH_LIST"] == "5.0+PTX 6.0 6.1 7.0 7.5 8.0 8.6"
    assert parsed.fields["xformers build.torch_version"] == "1.13.1+cu117"
    assert "xformers build.env.XFORMERS_BUILD_TYPE" not in parsed.fields and parsed.unclaimed == []


def test_a_paste_cut_mid_name_keeps_every_whole_line_and_records_the_cut() -> None:
    parsed = parse(_read("info_0_0_28_10070"))
    assert len(parsed.fields) == 17
    assert parsed.fields["xformers memory_efficient_attention.fa2F@v2.6.3-24-gbdf733b"] == "available"
    assert parsed.fields["xformers sequence_parallel_fused.cuda_memset_32b_async"] == "available"
    assert parsed.unclaimed == ["sp24.sparse24_spar"] and parsed.cut == [FIELDS]
    host = import_texts([("10070", "10070", _read("info_0_0_28_10070"))]).document["host"]
    assert host["cut"] == [FIELDS] and host["sources"][0]["cut"] == [FIELDS]


def test_warnings_before_the_version_stay_unclaimed_and_the_prompt_is_noise() -> None:
    parsed = parse(_read("info_0_0_26_firefly_258"))
    assert parsed.unclaimed[0].startswith("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions")
    assert parsed.unclaimed[-1] == "memory" and parsed.noise == [" python3 -m xformers.info："]
    assert parsed.fields["xformers memory_efficient_attention.decoderF"] == "unavailable"


def test_in_an_issue_body_the_paste_is_found_after_prose() -> None:
    body = "I upgraded and now attention is slow.\n\n" + _read("info_0_0_22_939") + "\n```\nAny idea?\n"
    host = import_texts([("issue", "issue", body)]).document["host"]
    assert [source["format"] for source in host["sources"]] == ["python -m xformers.info"]


def test_text_without_the_version_line_is_not_claimed() -> None:
    assert detect("pytorch.version:  2.0.1\npytorch.cuda:  available\n") is None
    assert parse_text(_read("info_0_0_15_630"), "x.txt").parsed.variant == "xformers.info"


def test_a_whole_paste_and_a_cut_one_diff_by_version_and_the_cut_is_not_a_removal(
        cli: Callable[..., CliResult]) -> None:
    done = cli("diff", str(XF / "info_0_0_15_630.txt"), str(XF / "info_0_0_35_1388.txt"), "--format", "json")
    report = json.loads(done.stdout)
    changed = {c["path"]: (c["before"], c["after"]) for c in report["changes"] if c["kind"] == "changed"}
    assert changed["probes.packages.data.packages.xformers.version"] == ("0.0.15+6cd1b36.d20230110", "0.0.35")
    # The cut paste never printed torch or the GPU: not taken, so neither is a change.
    assert not any(c["path"].startswith(("probes.torch", "probes.gpu")) for c in report["changes"])
    assert report["not_compared"]["cut"] == [FIELDS]
    text = cli("explain", str(XF / "info_0_0_15_630.txt"), str(XF / "info_0_0_35_1388.txt")).stdout
    assert "xformers upgraded 0.0.15+6cd1b36.d20230110 -> 0.0.35" in text
    assert f"the paste ends inside {FIELDS}: cut there, not removed" in text
