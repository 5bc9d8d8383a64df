"""TensorRT-LLM's version line: the tensorrt_llm package's version. Values read off the files by hand."""

from __future__ import annotations

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.reports.formats import detect, tensorrt_llm_version
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA

TRTLLM = DATA / "reports" / "trtllm"

TRTLLM_EXPECTED = {
    "version_0_8_fused_traceback.txt": "0.8.0",  # `0.8.0Traceback (most recent call last):` on one line, twice
    "version_0_9_dev_printed_twice.txt": "0.9.0.dev2024031900",
    "version_0_11_traceback.txt": "0.11.0",
    "version_0_12_dev_vgpu.txt": "0.12.0.dev2024070200",
    "version_0_14_dev_continued_command.txt": "0.14.0.dev2024100800",
}


@pytest.mark.parametrize("name", sorted(TRTLLM_EXPECTED))
def test_tensorrt_llm_logs_give_the_package_version(name: str) -> None:
    text = (TRTLLM / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "tensorrt-llm"
    parsed = tensorrt_llm_version.parse(text)
    assert parsed.probes["packages"]["packages"] == {"tensorrt-llm": {"name": "tensorrt_llm",
                                                                      "version": TRTLLM_EXPECTED[name]}}
    # The bare version the scripts print again is the same fact, claimed; the rest of the log stays unclaimed.
    assert TRTLLM_EXPECTED[name] not in parsed.unclaimed


def test_a_fused_traceback_is_split_off_and_kept() -> None:
    parsed = tensorrt_llm_version.parse((TRTLLM / "version_0_8_fused_traceback.txt").read_text("utf-8"))
    assert parsed.unclaimed.count("Traceback (most recent call last):") == 2


def test_digits_running_past_the_version_make_no_version() -> None:
    """`0.8.00.8.0` (a version printed twice without a newline) is not read as one version."""
    with pytest.raises(ValueError, match="no version"):
        tensorrt_llm_version.parse("[TensorRT-LLM] TensorRT-LLM version: 0.8.00.8.0\n")


def test_two_logs_diff_on_the_tensorrt_llm_version() -> None:
    a, b = (import_texts([(p.name, p.name, p.read_text("utf-8"))])
            for p in (TRTLLM / "version_0_11_traceback.txt", TRTLLM / "version_0_12_dev_vgpu.txt"))
    changes = {c.path: c for c in diff_snapshots(a, b).changes}
    change = changes["probes.packages.data.packages.tensorrt-llm.version"]
    assert (change.before, change.after) == ("0.11.0", "0.12.0.dev2024070200")
