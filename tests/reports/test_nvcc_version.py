"""`nvcc --version` pastes from CUDA 7.5 to 12.5: the toolkit's version, release and build, as read by hand."""

from __future__ import annotations

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.partial import comparable
from driftcheck.reports.formats import detect
from driftcheck.reports.formats.nvcc_version import parse
from driftcheck.reports.importer import ImportFormatError, import_texts, parse_text
from tests.conftest import DATA

NVCC = DATA / "reports" / "nvcc"

# version (the `V` number), release, build (absent before CUDA 11.0), the `Built on` date: read off each file.
EXPECTED = {
    "cuda_7_5_nvbio.txt": ("7.5.17", "7.5", None, "Tue_Aug_11_14:27:32_CDT_2015"),
    "cuda_7_5_apex_prompt.txt": ("7.5.17", "7.5", None, "Tue_Aug_11_14:27:32_CDT_2015"),
    "cuda_10_1_k2.txt": ("10.1.243", "10.1", None, "Sun_Jul_28_19:07:16_PDT_2019"),
    "cuda_11_0_k2.txt": ("11.0.194", "11.0", "cuda_11.0_bu.TC445_37.28540450_0", "Thu_Jun_11_22:26:38_PDT_2020"),
    "cuda_11_0_blade.txt": ("11.0.194", "11.0", "cuda_11.0_bu.TC445_37.28540450_0", "Thu_Jun_11_22:26:38_PDT_2020"),
    "cuda_11_0_221_builder.txt": ("11.0.221", "11.0", "cuda_11.0_bu.TC445_37.28845127_0",
                                  "Wed_Jul_22_19:09:09_PDT_2020"),
    "cuda_11_1_builder.txt": ("11.1.105", "11.1", "cuda_11.1.TC455_06.29190527_0", "Mon_Oct_12_20:09:46_PDT_2020"),
    "cuda_12_5_risc0_gcc.txt": ("12.5.82", "12.5", "cuda_12.5.r12.5/compiler.34385749_0",
                                "Thu_Jun__6_02:18:23_PDT_2024"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_paste_gives_the_toolkit_version(name: str) -> None:
    text = (NVCC / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "nvcc"
    parsed = parse(text)
    version, release, build, built = EXPECTED[name]
    toolkit = parsed.probes["kernels"]["cuda_toolkit"]
    assert toolkit == {"version": version, "release": release, **({"build": build} if build else {})}
    assert parsed.fields == {"Built on": built}
    # The `# source:` line this directory adds is all that stays unclaimed, but for another tool's lines.
    assert parsed.unclaimed[0].startswith("# source:")


def test_another_tools_lines_in_the_same_block_stay_unclaimed() -> None:
    parsed = parse((NVCC / "cuda_12_5_risc0_gcc.txt").read_text("utf-8"))
    assert parsed.unclaimed[1:] == [
        " gcc --version", "gcc (Ubuntu 13.1.0-8ubuntu1~22.04) 13.1.0",
        "Copyright (C) 2023 Free Software Foundation, Inc.",
        "This is free software; see the source for copying conditions.  There is NO",
        "warranty; not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.",
        "rustc --version", "rustc 1.77.2 (25ef9e3d8 2024-04-09)"]


def test_a_paste_cut_before_the_release_line_is_refused() -> None:
    lines = (NVCC / "cuda_11_1_builder.txt").read_text("utf-8").splitlines()
    with pytest.raises(ImportFormatError, match="release"):
        parse_text("\n".join(lines[:5]), "cut.txt")  # banner, copyright, `Built on`: no version yet


def test_two_toolkits_diff_as_a_cuda_version_change() -> None:
    old, new = (NVCC / "cuda_11_0_k2.txt", NVCC / "cuda_11_1_builder.txt")
    a, b = (import_texts([(str(p), p.name, p.read_text("utf-8"))]) for p in (old, new))
    changes = {c.path: c for c in diff_snapshots(a, b).changes}
    version = changes["probes.kernels.data.cuda_toolkit.version"]
    assert (version.before, version.after, version.category) == ("11.0.194", "11.1.105", "cuda_version")
    assert changes["probes.kernels.data.cuda_toolkit.release"].after == "11.1"


def test_against_a_probed_snapshot_the_toolkit_is_not_compared() -> None:
    """No probe reads nvcc: a probed snapshot without the toolkit did not look, so it is not "removed"."""
    from driftcheck.snapshot.model import read_snapshot_file

    paste = NVCC / "cuda_12_5_risc0_gcc.txt"
    imported = import_texts([(str(paste), paste.name, paste.read_text("utf-8"))])
    probed = read_snapshot_file(DATA / "pairs" / "base.json")
    a, b, left_out = comparable(imported, probed)
    assert "probes.kernels.data.cuda_toolkit" in left_out
    assert not [c for c in diff_snapshots(a, b).changes if "cuda_toolkit" in c.path]


REPORTS = DATA / "reports"
# nvcc's version as each report quotes it (collect_env's `CUDA runtime version`, check_env's `NVCC:` line), read
# by hand; reports that say `Could not collect`, `No CUDA` or print no line give none.
QUOTED = {
    "sglang_08.txt": "11.7.64", "sglang_09.txt": "12.1.66", "sglang_11.txt": "12.4.131", "sglang_12.txt": "12.4.131",
    "sglang_13.txt": "12.4.131", "sglang_14.txt": "12.8.61", "sglang_15.txt": "12.6.68", "sglang_16.txt": "12.6.20",
    "sglang_17.txt": "13.0.88", "sglang_18.txt": "12.4.131", "sglang_19.txt": "12.1.66", "sglang_10.txt": None,
    "torch_02.txt": "11.8.89", "torch_03.txt": "11.1.105", "torch_04.txt": "11.6.124", "torch_05.txt": "11.7.64",
    "torch_08.txt": "10.2.89", "torch_09.txt": "11.6.55", "torch_10.txt": "11.0.221", "torch_11.txt": "11.1.105",
    "torch_17.txt": "10.0.130", "torch_18.txt": "9.2.88", "torch_19.txt": "9.0.176", "torch_22.txt": "12.6.68",
    "torch_23.txt": "12.9.86", "torch_25.txt": "11.8.89", "torch_26.txt": "12.9.41", "torch_27.txt": "12.4.131",
    "torch_01.txt": None, "torch_12.txt": None,
    "vllm_01.txt": "12.0.140", "vllm_02.txt": "12.3.107", "vllm_05.txt": "12.4.131", "vllm_06.txt": "12.4.131",
    "vllm_08.txt": "12.8.93", "vllm_09.txt": "12.8.93", "vllm_10.txt": "12.8.93", "vllm_12.txt": "12.1.105",
    "vllm_14.txt": "12.2.140", "vllm_15.txt": "12.1.105", "vllm_03.txt": None, "vllm_04.txt": None,
}


@pytest.mark.parametrize("name", sorted(QUOTED))
def test_reports_quoting_nvcc_give_the_same_toolkit_fact(name: str) -> None:
    parsed = parse_text((REPORTS / name).read_text("utf-8"), name).parsed
    toolkit = (parsed.probes.get("kernels") or {}).get("cuda_toolkit")
    expected = QUOTED[name]
    assert toolkit == ({"version": expected, "release": expected.rsplit(".", 1)[0]} if expected else None)


def test_an_nvcc_paste_and_a_collect_env_compare_their_toolkits() -> None:
    """Two tools, two machines: nvcc 12.5 against the toolkit PyTorch's report quotes."""
    a, b = (import_texts([(p.name, p.name, p.read_text("utf-8"))])
            for p in (NVCC / "cuda_12_5_risc0_gcc.txt", REPORTS / "torch_23.txt"))
    compared_a, compared_b, _ = comparable(a, b)
    changes = {c.path: c for c in diff_snapshots(compared_a, compared_b).changes}
    version = changes["probes.kernels.data.cuda_toolkit.version"]
    assert (version.before, version.after, version.category) == ("12.5.82", "12.9.86", "cuda_version")
