"""`driftcheck import` of text reports, and `diff`/`explain` on a pasted file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from driftcheck.reports.importer import parse_text
from tests.conftest import DATA

REPORTS = DATA / "reports"


def test_import_of_text_that_is_no_report_is_one_line_exit_2(cli: Callable[..., Any], tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The model got slower after the upgrade.\nPython: is great\n", "utf-8")
    result = cli("import", str(notes))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "not a report driftcheck can import" in result.stderr


def test_import_marks_tool_format_and_keeps_unclaimed_lines(cli: Callable[..., Any], tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    result = cli("import", str(REPORTS / "vllm_07.txt"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text("utf-8"))
    report = document["host"]["report"]
    assert document["origin"] == "imported" and (report["tool"], report["format"]) == ("vllm", "vllm-collect-env")
    # ROCm's own topology tables are no format driftcheck reads: kept verbatim and counted.
    assert "GPU0   0            XGMI         XGMI         XGMI         XGMI         XGMI         XGMI         XGMI" \
        in report["unclaimed"]
    assert report["unclaimed_count"] == len(report["unclaimed"]) > 40
    assert "no parser understood" in result.stderr


def test_paste_noise_changes_nothing(tmp_path: Path) -> None:
    """Fences, <details>, CRLF, a banner fused into the first line: the same facts, the odd line kept."""
    clean = (REPORTS / "vllm_10.txt").read_text("utf-8")
    body = clean.split("\n", 1)[1]
    noisy = ("<details>\r\n<summary>collect_env</summary>\r\n\r\n```text\r\nCollecting environment information..."
             + body.replace("\n", "\r\n").replace("Is CUDA available", "Some new line nobody prints\r\nIs CUDA "
                                                                      "available", 1)
             + "```\r\n</details>\r\n")
    want = parse_text(clean, "clean").parsed
    got = parse_text(noisy, "noisy").parsed
    assert got.probes == want.probes
    assert "Some new line nobody prints" in got.unclaimed
    assert {"<details>", "```text", "</details>"} <= set(got.noise)


def test_unknown_key_value_lines_become_raw_fields() -> None:
    text = (REPORTS / "torch_23.txt").read_text("utf-8")
    parsed = parse_text(text, "torch_23.txt").parsed
    assert parsed.fields["Caching allocator config"] == "N/A"
    # `CUDA runtime version` is nvcc's version: the toolkit fact, not a raw field.
    assert parsed.probes["kernels"] == {"cuda_toolkit": {"version": "12.9.86", "release": "12.9"}}
    assert "CUDA runtime version" not in parsed.fields


def test_diff_of_two_pasted_reports_ranks_torch_gpu_driver(cli: Callable[..., Any]) -> None:
    result = cli("diff", str(REPORTS / "vllm_10.txt"), str(REPORTS / "vllm_08.txt"))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "~ probes.gpu.data.driver_version: 575.57.08 -> 570.158.01" in out
    assert "~ probes.gpu.data.gpus.GPU0.name: NVIDIA B200 -> NVIDIA GB200" in out
    assert "- probes.gpu.data.gpus.GPU7" in out and "~ probes.gpu.data.gpu_count: 8 -> 4" in out
    assert "~ probes.torch.data.device_count: 8 -> 4" in out
    assert "~ probes.packages.data.packages.torchvision.version: 0.22.0+cu128 -> 0.22.0" in out
    # Ranked: the categories of explain's likeliest causes first (the driver), not alphabetically (cpu_governor).
    categories = [line for line in out.splitlines() if line and line[0].islower() and " " not in line]
    assert categories[:2] == ["driver_version", "hardware_change"] and "cpu_governor" in categories[2:]
    # vllm_08's pip list names no nvidia-* wheel: those of vllm_10 are not in the report, not removed.
    assert "cuda_wheels" not in out and "fact(s) not in the report, not compared" in out


def test_explain_on_a_pasted_file(cli: Callable[..., Any]) -> None:
    result = cli("explain", str(REPORTS / "vllm_10.txt"), str(REPORTS / "vllm_08.txt"), "--format", "json")
    assert result.returncode == 1, result.stderr
    top = json.loads(result.stdout)["explanations"][0]
    assert (top["category"], top["title"]) == ("driver_version", "NVIDIA driver 575.57.08 -> 570.158.01")


def test_report_against_a_full_snapshot_compares_only_what_both_hold(cli: Callable[..., Any],
                                                                     tmp_path: Path) -> None:
    full = DATA / "pairs" / "base.json"
    result = cli("diff", str(REPORTS / "vllm_10.txt"), str(full), "--format", "json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    changes = {c["path"]: c for c in report["changes"]}
    # The snapshot's 600-odd facts the report cannot carry are left out, never reported as added.
    assert not [p for p, c in changes.items() if c["kind"] == "added" and ".packages.packages." in p]
    # The compiled files the report cannot carry, and the toolkit (nvcc's, via `CUDA runtime version`) that no
    # probe reads: both left out.
    assert {"probes.kernels.data.files", "probes.kernels.data.cuda_toolkit"} <= set(report["not_in_report"])
    assert "probes.packages.data.packages.torch.location" in report["not_in_report"]
    # What both hold is compared: the report's CPU is the snapshot's, its OS too.
    assert "probes.system.data.cpu.model" not in changes
    assert "probes.system.data.os.pretty_name" not in changes


def test_a_truncated_snapshot_is_not_mistaken_for_a_report(cli: Callable[..., Any], tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_text((DATA / "pairs" / "base.json").read_text("utf-8")[:2000], "utf-8")
    result = cli("show", str(cut))
    assert result.returncode == 2 and "truncated" in result.stderr


def test_nvidia_smi_table_compares_with_a_probed_snapshot_by_bus_id() -> None:
    from driftcheck.analysis.diff import diff_snapshots
    from driftcheck.analysis.partial import comparable
    from driftcheck.reports.importer import import_files
    from driftcheck.snapshot.model import Snapshot, new_document

    table = import_files([parse_text((REPORTS / "smi_03.txt").read_text("utf-8"), "smi_03.txt")])
    gpu = table.document["probes"]["gpu"]["data"]
    assert "processes" not in gpu["gpus"]["00000000:2A:00.0"]  # the paste stops before the processes box
    probed_gpus = {f"GPU-{i}": {"index": i, "uuid": f"GPU-{i}", "pci_bus_id": bus, "name": "NVIDIA H100 NVL",
                                "persistence_mode": True, "power": {"limit_w": 400.0, "draw_w": 70.0}}
                   for i, bus in enumerate(["00000000:2A:00.0", "00000000:AB:00.0"])}
    data = {"source": "nvml", "driver_version": "575.51.03", "cuda_driver_version": "12.9", "gpu_count": 2,
            "gpus": probed_gpus}
    outcome = {"status": "ok", "error": None, "duration_s": 0.1, "data": data}
    probed = Snapshot(new_document({"name": "node"}, {"gpu": outcome}), "probed")
    a, b, left_out = comparable(table, probed)
    assert set(a.document["probes"]["gpu"]["data"]["gpus"]) == set(b.document["probes"]["gpu"]["data"]["gpus"])
    changes = {c.path: c for c in diff_snapshots(table, probed).changes}
    # Matched by bus id: the same GPUs, their names equal; persistence differs; no GPU added or removed.
    assert changes['probes.gpu.data.gpus["00000000:2A:00.0"].persistence_mode'].after is True
    assert not [p for p in changes if p.endswith((".name", '"]', "}"))]
    assert 'probes.gpu.data.gpus["00000000:2A:00.0"].uuid' in left_out


def test_a_report_and_an_nvidia_smi_table_combine(cli: Callable[..., Any], tmp_path: Path) -> None:
    out = tmp_path / "both.json"
    result = cli("import", str(REPORTS / "sglang_09.txt"), str(REPORTS / "smi_03.txt"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    probes = json.loads(out.read_text("utf-8"))["probes"]
    # GPUs from the richer description, keyed by bus id; packages from the report; its matrix merged in.
    assert set(probes["gpu"]["data"]["gpus"]) == {"00000000:2A:00.0", "00000000:AB:00.0"}
    assert probes["packages"]["data"]["packages"]["sglang"]["version"] == "0.2.12"
    assert probes["pcie"]["data"]["topology"]["pairs"]["GPU0~GPU1"] == "PHB"
    assert probes["pcie"]["data"]["gpus"]["00000000:2A:00.0"]["cpu_affinity"] == "0-15"
    eight = cli("import", str(REPORTS / "vllm_10.txt"), str(REPORTS / "smi_01.txt"))
    assert eight.returncode == 2 and "describes 1 GPUs, the report lists 8" in eight.stderr
