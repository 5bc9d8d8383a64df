"""`driftcheck import`: pasted nvidia-smi outputs become a diffable partial snapshot."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.nvidia.helpers import NVIDIA_DATA

XML = NVIDIA_DATA / "xml" / "rtx-3090_590.44.01_v13.xml"
TOPO = NVIDIA_DATA / "topo" / "h100-80gb-hbm3-x1_590.48.01_raw-ansi.txt"
UUID = "GPU-12345678-aaaa-bbbb-cccc-0123456789ab"


def _narrowed_copy(source: Path, target: Path) -> Path:
    """The XML with the link trained at x8 and a lower power limit: what a bad reboot leaves behind."""
    text = source.read_text("utf-8")
    for old, new in (("<current_link_width>16x", "<current_link_width>8x"),
                     ("<current_power_limit>350.00 W", "<current_power_limit>250.00 W"),
                     ("<requested_power_limit>350.00 W", "<requested_power_limit>250.00 W")):
        assert old in text
        text = text.replace(old, new)
    target.write_text(text, "utf-8")
    return target


def test_done_when_scenario_diff_lists_link_width_and_power_limit(cli: Callable[..., Any],
                                                                   tmp_path: Path) -> None:
    a_xml = shutil.copy(XML, tmp_path / "a.xml")
    b_xml = _narrowed_copy(XML, tmp_path / "b.xml")
    a_json, b_json = tmp_path / "a.json", tmp_path / "b.json"
    first = cli("import", str(a_xml), str(TOPO), "-o", str(a_json))
    second = cli("import", str(b_xml), str(TOPO), "-o", str(b_json))
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    diff = cli("diff", str(a_json), str(b_json), "--format", "json")
    assert diff.returncode == 1, diff.stderr
    changes = {c["path"]: c for c in json.loads(diff.stdout)["changes"]}
    width = changes[f"probes.pcie.data.gpus.{UUID}.link.width_current"]
    limit = changes[f"probes.gpu.data.gpus.{UUID}.power.limit_w"]
    assert (width["before"], width["after"], width["category"]) == (16, 8, "pcie_link")
    assert (limit["before"], limit["after"], limit["category"]) == (350.0, 250.0, "gpu_clock_power")
    assert changes[f"probes.gpu.data.gpus.{UUID}.power.enforced_limit_w"]["category"] == "gpu_clock_power"
    assert len(changes) == 3


def test_imported_snapshot_is_marked_combined_and_stored(cli: Callable[..., Any], tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    result = cli("import", str(XML), str(TOPO), "-o", str(out), "--label", "from a bug report")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (f"imported {XML.name} (nvidia-smi -q -x), {TOPO.name} (nvidia-smi topo -m) as snapshot "
                             f"{result.stdout.strip()}, saved to store and {out}\n")
    document = json.loads(out.read_text("utf-8"))
    assert document["origin"] == "imported" and "signature" not in document
    assert [s["format"] for s in document["host"]["sources"]] == ["nvidia-smi -q -x", "nvidia-smi topo -m"]
    pcie = document["probes"]["pcie"]["data"]
    assert pcie["gpus"][UUID]["cpu_affinity"] == "0-19" and pcie["gpus"][UUID]["numa_node"] == 0
    assert document["probes"]["gpu"]["data"]["gpus"][UUID]["name"] == "NVIDIA GeForce RTX 3090"
    log = cli("log", "--format", "json")
    assert json.loads(log.stdout)[0]["id"].startswith(result.stdout.strip())
    assert cli("verify", str(out)).returncode == 1  # unsigned unless asked


def test_sign_on_request(cli: Callable[..., Any], tmp_path: Path) -> None:
    out = tmp_path / "signed.json"
    assert cli("import", str(XML), "--sign", "-o", str(out)).returncode == 0
    assert cli("verify", str(out)).returncode == 0


def test_text_output_and_topology_alone(cli: Callable[..., Any], tmp_path: Path) -> None:
    text = NVIDIA_DATA / "text" / "q_h100-80gb-hbm3-x8_535.161.08.txt"
    out = tmp_path / "t.json"
    assert cli("import", str(text), "-o", str(out), "--no-store").returncode == 0
    gpu = json.loads(out.read_text("utf-8"))["probes"]["gpu"]["data"]
    assert (gpu["source"], gpu["gpu_count"]) == ("nvidia-smi-text", 8)
    topo_only = tmp_path / "topo.json"
    matrix = NVIDIA_DATA / "topo" / "h100-80gb-hbm3-x8_535.161.08_nv18_nic10_vllm-5563.txt"
    assert cli("import", str(matrix), "-o", str(topo_only), "--no-store").returncode == 0
    probes = json.loads(topo_only.read_text("utf-8"))["probes"]
    assert list(probes) == ["pcie"] and probes["pcie"]["data"]["topology"]["pairs"]["GPU0~GPU7"] == "NV18"


def test_query_gpu_csv_imports_and_a_sampling_log_is_refused_in_one_line(cli: Callable[..., Any],
                                                                          tmp_path: Path) -> None:
    out = tmp_path / "csv.json"
    ok = cli("import", str(NVIDIA_DATA / "text" / "query-gpu_l40s_595.80_idle.csv"), "-o", str(out))
    assert ok.returncode == 0, ok.stderr
    gpu = json.loads(out.read_text("utf-8"))["probes"]["gpu"]["data"]
    assert (gpu["source"], next(iter(gpu["gpus"].values()))["power"]["limit_w"]) == ("nvidia-smi-csv", 350.0)
    result = cli("import", str(NVIDIA_DATA / "text" / "query-gpu_power-draw-samples_pkb.csv"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "sampling log" in result.stderr


def test_error_output_and_garbage_are_refused(cli: Callable[..., Any], tmp_path: Path) -> None:
    error = cli("import", str(NVIDIA_DATA / "topo" / "rtx-2080-super-x1_591.86_windows_error.txt"))
    assert error.returncode == 2 and "holds an nvidia-smi error" in error.stderr
    garbage = tmp_path / "notes.txt"
    garbage.write_text("GPU seemed slow yesterday\n", "utf-8")
    assert cli("import", str(garbage)).returncode == 2
    broken = tmp_path / "broken.xml"
    broken.write_text(XML.read_text("utf-8")[:5000], "utf-8")
    result = cli("import", str(broken))
    assert result.returncode == 2 and "looks like nvidia-smi -q -x output but" in result.stderr
    assert cli("import", str(tmp_path / "missing.xml")).returncode == 2


def test_two_gpu_descriptions_and_existing_output_are_refused(cli: Callable[..., Any], tmp_path: Path) -> None:
    text = NVIDIA_DATA / "text" / "q_h200_590.48.01_idle.txt"
    assert "second GPU description" in cli("import", str(XML), str(text)).stderr
    out = tmp_path / "keep.json"
    out.write_text("mine", "utf-8")
    refused = cli("import", str(XML), "-o", str(out))
    assert refused.returncode == 2 and out.read_text("utf-8") == "mine"
    assert cli("import", str(XML), "-o", str(out), "--force").returncode == 0
    assert json.loads(out.read_text("utf-8"))["origin"] == "imported"
