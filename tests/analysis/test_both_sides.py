"""Evidence on both sides, or say so: "checked and unchanged" names only facts both sides hold, every report
says what was not compared, a cut list is cut (never "removed"), a complete one still yields its additions,
and a claim of the same GPUs compares their identities.

Real recorded outputs: this machine's own `collect_env` and snapshot taken the same minute
(tests/data/reports/own), public `nvidia-smi -q` / `-q -x` logs (tests/data/nvidia) and collect_env
pastes (tests/data/reports).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.render import explain_text
from driftcheck.analysis.partial import comparable, cpu_set, same_cpu_set
from driftcheck.reports.importer import read_snapshot_or_report
from tests.conftest import CliResult

DATA = Path(__file__).resolve().parents[1] / "data"
OWN = DATA / "reports" / "own"
SMI_TEXT = DATA / "nvidia" / "text"
SMI_XML = DATA / "nvidia" / "xml"


def test_own_collect_env_against_own_snapshot_passes_and_names_what_was_not_compared(
        cli: Callable[..., CliResult]) -> None:
    paste, snapshot = str(OWN / "collect_env_vm.txt"), str(OWN / "snapshot_vm.json")
    text = cli("explain", paste, snapshot)
    assert text.returncode == 0, text.stdout
    assert "No relevant difference" in text.stdout
    # The paste holds no huge pages, governor or container limits: nothing may be claimed about them.
    for unheld in ("huge pages", "CPU governor", "container limits"):
        assert unheld not in text.stdout
    line = next(row for row in text.stdout.splitlines() if row.startswith("not compared:"))
    assert re.match(r"not compared: \d+ facts? only in A, \d+ only in B \(", line), line
    report = json.loads(cli("explain", paste, snapshot, "--format", "json").stdout)
    assert report["explanations"] == []
    assert not [row for row in report["changes"] if "numa" in row["path"] or "cpu" in row["path"]]
    summary = report["not_compared"]
    # The paste's `CUDA runtime version` (nvcc's, 13.0.88) is a toolkit no probe reads: not compared either.
    assert summary["only_in_b"] > 100 and \
        {"system.thp", "system.cgroup", "kernels.files", "kernels.cuda_toolkit"} <= set(summary["families"])
    titles = {row["title"] for row in report["unchanged"]}
    assert "torch 2.13.0+cpu: same version, compiled files not recorded" in titles
    assert len(titles) == int(re.search(r"held by both sides \((\d+)\)", text.stdout).group(1))  # type: ignore[union-attr]


def test_cpu_lists_are_compared_as_sets() -> None:
    assert cpu_set("0,1") == cpu_set("0-1") == frozenset({0, 1})
    assert cpu_set("0-3,8") == frozenset({0, 1, 2, 3, 8})
    assert same_cpu_set("cpus", "0,1", "0-1")
    assert not same_cpu_set("cpus", "0,1", "0-2")
    assert not same_cpu_set("version", "1,2", "1-2")  # not a CPU list, whatever it looks like


def _cut_after_gpu(source: Path, index: int, directory: Path) -> Path:
    """`source` as a paste that ends right after its `GPU <index>` line."""
    lines = source.read_text("utf-8").splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith(f"GPU {index}:"))
    cut = directory / f"{source.stem}_cut.txt"
    cut.write_text("".join(lines[:end + 1]), "utf-8")
    return cut


def test_a_paste_cut_mid_gpu_list_is_cut_never_removed(tmp_path: Path) -> None:
    whole = DATA / "reports" / "torch_03.txt"  # 8x RTX A5000
    a = read_snapshot_or_report(whole)
    b = read_snapshot_or_report(_cut_after_gpu(whole, 2, tmp_path))
    assert "gpu_count" not in (b.probe_data("gpu") or {})
    result = explain(diff_snapshots(a, b))
    assert not [c for c in result.diff.changes if c.kind == "removed" or c.path.endswith("gpu_count")]
    assert result.explanations == []
    report = result.to_json()
    assert report["not_compared"]["only_in_a"] > 0 and "gpu.gpus" in report["not_compared"]["families"]
    assert report["not_compared"]["cut"] == ["probes.gpu.data.gpus"]
    assert "the paste ends inside probes.gpu.data.gpus: cut there, not removed" in explain_text(result)
    assert not [row for row in report["unchanged"] if "GPUs present" in row["title"]]


def test_a_real_paste_that_ends_inside_its_gpu_list_holds_no_gpu_count() -> None:
    # vllm_15 ends with "GPU" after its GPU 0 line: the reporter's paste was cut there.
    gpu = read_snapshot_or_report(DATA / "reports" / "vllm_15.txt").probe_data("gpu") or {}
    assert len(gpu["gpus"]) == 1 and "gpu_count" not in gpu


def test_two_different_boards_are_not_the_same_gpus(cli: Callable[..., CliResult]) -> None:
    a, b = SMI_TEXT / "q_h100-80gb-hbm3-x8_535.161.08.txt", SMI_TEXT / "q_h100-80gb-hbm3-x8_535.183.01.txt"
    report = json.loads(cli("explain", str(a), str(b), "--format", "json").stdout)
    assert not [row for row in report["unchanged"] if "GPUs present" in row["title"]]
    hardware = [row for row in report["explanations"] if row["category"] == "hardware_change"]
    # Each board told once as another board in its place (it was told as added and as removed, in two probes).
    boards = [row["title"] for row in hardware if " is another board (UUID " in row["title"]]
    assert len(boards) == 8 and not [row for row in hardware if row["title"].endswith(("added", "removed"))]


def test_the_same_board_names_only_the_identities_both_sides_hold() -> None:
    board = SMI_XML / "a10g_515.105.01_v11.xml"
    result = explain(diff_snapshots(read_snapshot_or_report(board), read_snapshot_or_report(board)))
    assert {"category": "hardware_change",
            "title": "GPUs present (same UUIDs, serials, boards, firmware): identical"} in result.unchanged


def test_a_complete_process_list_yields_its_addition_ranked(tmp_path: Path) -> None:
    after = SMI_XML / "a10g_515.105.01_v11.xml"  # runs /usr/lib/xorg/Xorg (pid 725) on its GPU
    before = tmp_path / "before.xml"
    before.write_text(re.sub(r"<process_info>.*?</process_info>\s*", "", after.read_text("utf-8"), flags=re.S),
                      "utf-8")
    a, b = read_snapshot_or_report(before), read_snapshot_or_report(after)
    assert "probes.gpu.data.gpus.*.processes" in b.document["host"]["complete"]
    _, _, left_out = comparable(a, b)
    assert left_out == []
    result = explain(diff_snapshots(a, b))
    top = result.explanations[0]
    assert top.category == "gpu_contention" and "pid 725" in top.title
    assert top.evidence[0].endswith(".processes.725")


def test_a_section_without_processes_declares_nothing_about_them() -> None:
    clocks_only = read_snapshot_or_report(SMI_TEXT / "q-d-clock_tesla-k80_375.66.txt")
    assert "probes.gpu.data.gpus.*.processes" not in clocks_only.document["host"].get("complete", [])
    trimmed = read_snapshot_or_report(SMI_XML / "a100-sxm4-80gb_mig-enabled_1of4_535.54.03_v12.xml")
    # attached_gpus=4 but one <gpu>: the GPU list is not whole.
    assert "probes.gpu.data.gpus" not in trimmed.document["host"].get("complete", [])
