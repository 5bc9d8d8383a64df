"""AMD's `rocm-smi` concise table: the GPUs' indexes and count, vendor named; readings kept as raw rows.

Values read off the files by hand (the rows between the header and the closing rule).
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.rocm_smi import GPUS, parse
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA

ROCM = DATA / "reports" / "rocm"

EXPECTED = {
    # An MI250X node: 8 GCDs, a job runner's prefix on every line.
    "concise_8gcd_prefixed_2023.txt": [0, 1, 2, 3, 4, 5, 6, 7],
    # One row, index 1: the indexes are rocm-smi's own, not renumbered.
    "concise_one_gpu_index1_2020.txt": [1],
    "concise_two_gpus_2019.txt": [0, 1],
    "concise_rocm_1_9.txt": [0],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_table_gives_its_gpus_and_their_count(name: str) -> None:
    text = (ROCM / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "rocm-smi"
    parsed = parse(text)
    gpu = parsed.probes["gpu"]
    assert gpu["vendor"] == "AMD" and gpu["source"] == "rocm-smi"
    assert [entry["index"] for entry in gpu["gpus"].values()] == EXPECTED[name]
    assert gpu["gpu_count"] == len(EXPECTED[name]) and parsed.complete == [GPUS]


def test_readings_stay_in_the_raw_rows() -> None:
    parsed = parse((ROCM / "concise_8gcd_prefixed_2023.txt").read_text("utf-8"))
    assert parsed.fields["GPU1 concise"] == "1 46.0c N/A 800Mhz 1600Mhz 0% auto 0.0W 0% 0%"
    assert set(parsed.probes["gpu"]["gpus"]["GPU0"]) == {"index"}


def test_a_table_cut_before_its_closing_rule_gives_no_count() -> None:
    lines = (ROCM / "concise_two_gpus_2019.txt").read_text("utf-8").splitlines()
    parsed = parse("\n".join(lines[:5]))  # banner, rule, header, GPU 0: the paste stops there
    assert list(parsed.probes["gpu"]["gpus"]) == ["GPU0"] and "gpu_count" not in parsed.probes["gpu"]
    assert parsed.cut == [GPUS] and parsed.complete == []


def test_with_a_report_that_names_the_gpus_the_two_merge() -> None:
    """A mechanism test of two real pastes of one-GPU AMD machines: check_env names the GPU, rocm-smi counts it."""
    sglang, rocm = DATA / "reports" / "sglang_10.txt", ROCM / "concise_rocm_1_9.txt"
    document = import_texts([(str(p), p.name, p.read_text("utf-8")) for p in (sglang, rocm)]).document
    gpu = document["probes"]["gpu"]["data"]
    assert gpu["vendor"] == "AMD" and gpu["gpu_count"] == 1
    assert gpu["gpus"]["GPU0"] == {"index": 0, "name": "AMD Radeon RX 7900 XT"}


def test_against_a_probed_snapshot_the_vendor_is_not_compared() -> None:
    """NVML records no vendor: a probed snapshot did not look, so `vendor: AMD` is not "removed" against it."""
    from driftcheck.analysis.diff import diff_snapshots
    from driftcheck.analysis.partial import comparable
    from driftcheck.snapshot.model import read_snapshot_file

    paste = ROCM / "concise_two_gpus_2019.txt"
    imported = import_texts([(str(paste), paste.name, paste.read_text("utf-8"))])
    a, b, left_out = comparable(imported, read_snapshot_file(DATA / "pairs" / "base.json"))
    assert "probes.gpu.data.vendor" in left_out
    assert not [c for c in diff_snapshots(a, b).changes if c.path.endswith(".vendor")]
