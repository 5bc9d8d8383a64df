"""Text Generation Inference's `text-generation-launcher --env`: real pastes (SOURCES.md, tgi/).

Every expected value below was read off the file by hand. Each stored paste ends inside its nvidia-smi
table: the GPUs it shows whole are read, and the GPU list is said to be cut.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.tgi_env import parse
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA

TGI = DATA / "reports" / "tgi"
GPUS = "probes.gpu.data.gpus"

# file: (Commit sha, Docker label, Cargo version, driver, GPU names shown)
EXPECTED: dict[str, tuple[str, str, str, str, list[str]]] = {
    "env_0_9_574": ("31b36cca21fcd0e6b7db477a7545063e1b860156", "sha-31b36cc", "1.70.0", "520.61.05",
                    ["NVIDIA GeForce ...", "NVIDIA GeForce ..."]),
    "env_1_1_1156": ("3af1a1140141245c20df20a787831ec71b124eae", "sha-3af1a11", "1.70.0", "535.104.05",
                     ["GRID A100D-20C"]),
    "env_1_3_1402": ("630800eed37b15c4b0c9eb8e6ab47212026720f7", "sha-630800e", "1.70.0", "525.147.05",
                     ["NVIDIA GeForce ..."]),
    "env_2_4_2828": ("82c24f742087cf96da17eee7a91d90f3d7ddf212", "N/A", "1.80.1", "560.35.05",
                     ["NVIDIA GeForce RTX 3090"]),
}


def _read(name: str) -> str:
    return (TGI / f"{name}.txt").read_text("utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_paste_keeps_the_launcher_build_and_reads_the_gpus_it_shows(name: str) -> None:
    sha, label, cargo, driver, gpus = EXPECTED[name]
    text = _read(name)
    # The embedded nvidia-smi table alone claimed these before, and the launcher's lines were lost.
    assert (found := detect(text)) is not None and found.name == "tgi-env"
    parsed = parse(text)
    assert parsed.role == "report"
    assert parsed.fields == {"Target": "x86_64-unknown-linux-gnu", "Cargo version": cargo, "Commit sha": sha,
                             "Docker label": label}
    assert parsed.probes["gpu"]["driver_version"] == driver
    assert [gpu["name"] for gpu in parsed.probes["gpu"]["gpus"].values()] == gpus
    # Cut inside the table: the GPUs shown are kept, their count is not claimed, the list is said to be cut.
    assert "gpu_count" not in parsed.probes["gpu"] and parsed.complete == [] and parsed.cut == [GPUS]
    assert parsed.unclaimed == []


def test_imported_the_launcher_lines_are_the_reports_fields_and_the_cut_is_recorded() -> None:
    host = import_texts([("1156", "1156", _read("env_1_1_1156"))]).document["host"]
    assert host["sources"][0]["format"] == "text-generation-launcher --env" and host["cut"] == [GPUS]
    assert host["report"]["fields"]["Commit sha"] == "3af1a1140141245c20df20a787831ec71b124eae"


def test_in_an_issue_body_the_dump_is_found_after_prose() -> None:
    body = "### System Info\n\n" + _read("env_2_4_2828") + "\n\n### Reproduction\n\nRun the model.\n"
    host = import_texts([("issue", "issue", body)]).document["host"]
    assert [source["format"] for source in host["sources"]] == ["text-generation-launcher --env"]


def test_a_tool_that_is_not_installed_is_kept_as_na() -> None:
    # A real paste's launcher lines, then what launcher/src/env_runtime.rs prints when a tool is missing.
    parsed = parse(_read("env_2_4_2828").split("nvidia-smi:")[0] + "nvidia-smi:\nN/A\nxpu-smi:\nN/A\n")
    assert parsed.fields["nvidia-smi"] == "N/A" and parsed.fields["xpu-smi"] == "N/A" and parsed.probes == {}
