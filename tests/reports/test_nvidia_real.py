"""Real nvidia-smi captures of real machines (tests/data/nvidia-real, SOURCES.md names each one's origin).

Every capture imports; the layouts that were misread are pinned by the values the files print, read off them by
hand: driver 610's `-q` and table, the table's power cap (the enforced limit), an empty CPU Affinity cell of
`topo -m`, the MIG mode in both table layouts, and a row whose compute mode holds a blank.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.errors import UsageError
from driftcheck.nvidia.smi_text import parse_smi_text
from driftcheck.nvidia.topo import parse_topo
from driftcheck.reports.formats.nvidia_smi_table import parse as parse_table
from driftcheck.reports.importer import import_snapshot
from tests.conftest import DATA

REAL = DATA / "nvidia-real"
# The nvidia-smi captures (kernel-log/ holds a kernel log, read by tests/nvidia/test_xid.py).
CAPTURES = sorted(p for p in REAL.rglob("*")
                  if p.is_file() and p.name != "SOURCES.md" and p.parent.name != "kernel-log")


def _table_gpus(name: str) -> dict[str, Any]:
    gpus: dict[str, Any] = parse_table((REAL / "table" / name).read_text("utf-8")).probes["gpu"]["gpus"]
    return gpus


def test_the_captures_are_all_listed_in_their_sources() -> None:
    listed = (REAL / "SOURCES.md").read_text("utf-8")
    assert len(CAPTURES) == 48
    assert [p for p in CAPTURES if f"`{p.relative_to(REAL)}`" not in listed] == []


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: str(p.relative_to(REAL)))
def test_every_capture_imports_with_clean_versions(capture: Path) -> None:
    document = import_snapshot([capture]).document
    gpu = document["probes"].get("gpu", {}).get("data") or {}
    for field in ("driver_version", "cuda_driver_version"):
        assert "[" not in str(gpu.get(field) or ""), (field, gpu.get(field))


def test_driver_610_q_reads_the_kmd_version_and_the_ceiling_power_limits() -> None:
    data = parse_smi_text((REAL / "text" / "q_rtx-2080-super-x1_610.57.04_idle_exporter.txt").read_text("utf-8"))
    gpu = data["gpu"]
    assert (gpu["driver_version"], gpu["cuda_driver_version"]) == ("610.57.04", "13.3")
    power = next(iter(gpu["gpus"].values()))["power"]
    assert (power["limit_w"], power["enforced_limit_w"], power["default_limit_w"]) == (250.0, 250.0, 250.0)
    assert (power["min_limit_w"], power["max_limit_w"]) == (105.0, 350.0)
    laptop = parse_smi_text((REAL / "text" / "q_rtx-3060-laptop_610.88_windows-wddm_samruddhi.txt")
                            .read_text("utf-8"))["gpu"]
    assert (laptop["driver_version"], laptop["cuda_driver_version"]) == ("610.88", "13.3")
    power = next(iter(laptop["gpus"].values()))["power"]
    # "Requested Power Limit : N/A" on that laptop: no requested limit, the enforced and default ones read.
    assert (power["limit_w"], power["enforced_limit_w"], power["default_limit_w"]) == (None, 80.0, 80.0)


def test_two_610_outputs_of_one_machine_explain_no_driver_change(cli: Callable[..., Any]) -> None:
    # The query CSV and the -q of one capture run (utkuozdemir/nvidia_gpu_exporter, RTX 2080 SUPER, 610.57.04).
    csv = REAL / "csv" / "query-gpu_rtx-2080-super_610.57.04_idle_exporter.csv"
    query = REAL / "text" / "q_rtx-2080-super-x1_610.57.04_idle_exporter.txt"
    result = cli("explain", str(csv), str(query), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    titles = [e["title"] for e in json.loads(result.stdout)["explanations"]]
    assert not [t for t in titles if "driver" in t.lower()], titles


def test_the_driver_610_table_header_is_read() -> None:
    parsed = parse_table((REAL / "table" / "smi_rtx-2080-super-x1_610.57.04_idle_exporter.txt").read_text("utf-8"))
    gpu = parsed.probes["gpu"]
    assert (gpu["driver_version"], gpu["cuda_driver_version"], gpu["gpu_count"]) == ("610.57.04", "13.3", 1)
    assert gpu["gpus"]["00000000:0C:00.0"]["power"] == {"draw_w": 38.0, "enforced_limit_w": 250.0}


def test_the_table_cap_is_the_enforced_limit_not_the_requested_one() -> None:
    gh200 = _table_gpus("smi_gh200-480gb-x1_550.127.05_thamada.txt")
    assert next(iter(gh200.values()))["power"] == {"draw_w": 87.0, "enforced_limit_w": 700.0}


def test_a_table_and_the_q_of_one_gh200_rank_no_power_limit_change(cli: Callable[..., Any]) -> None:
    # The same GH200 (thamada/gls GH200_smi.py): the table's Cap 700 W; -a: Current 700 W, Requested 900 W.
    table = REAL / "table" / "smi_gh200-480gb-x1_550.127.05_thamada.txt"
    query = REAL / "text" / "q_gh200-480gb-x1_550.127.05_thamada.txt"
    result = cli("explain", str(table), str(query), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert not [e["title"] for e in report["explanations"] if "power" in e["title"].lower()]
    assert "nvidia-smi -i 0 -pl" not in result.stdout


def test_an_empty_cpu_affinity_cell_keeps_the_columns_after_it() -> None:
    topology = parse_topo((REAL / "topo" / "h100-x8_nv18_nic6_empty-cpu-affinity_princeton-della-k17g3.txt")
                          .read_text("utf-8"))
    cpu, numa, gpu_numa = topology["cpu_affinity"], topology["numa_affinity"], topology["gpu_numa_id"]
    assert [cpu[f"GPU{i}"] for i in range(8)] == [None, None, None, None, "1", "1", "1", "1"]
    assert [numa[f"GPU{i}"] for i in range(8)] == ["0", "0", "0", "0", "1", "1", "1", "1"]
    assert set(gpu_numa.values()) == {None}  # every row says N/A
    assert topology["pairs"]["GPU0~NIC0"] == "PIX" and topology["pairs"]["GPU3~NIC2"] == "PIX"


def test_a_tab_separated_matrix_reads_its_gpu_numa_id_column() -> None:
    topology = parse_topo((REAL / "topo" / "nv18-x8_nic10_glm52fp8.txt").read_text("utf-8"))
    assert topology["cpu_affinity"]["GPU0"] == "0-63,128-191" and topology["numa_affinity"]["GPU0"] == "0"
    assert topology["gpu_numa_id"]["GPU0"] is None


def test_mig_mode_is_read_in_both_table_layouts() -> None:
    mig = _table_gpus("smi_h100-80gb-hbm3-mig_590.48.01_idle_exporter.txt")["00000000:00:09.0"]
    assert mig["mig"] == {"mode_current": "Enabled"}  # not the "ECC|" of the MIG devices' box header
    for name, count in (("smi_h100-80gb-hbm3-x1_545.23.08_princeton.txt", 1),
                        ("smi_h100-80gb-hbm3-x8_550.90.07_gpud.txt", 8),
                        ("smi_a100-80gb-pcie-x4_525.105.17_princeton.txt", 4)):
        gpus = _table_gpus(name)
        assert len(gpus) == count and {g["mig"]["mode_current"] for g in gpus.values()} == {"Disabled"}, name


def test_a_row_with_err_fan_and_e_process_compute_mode_keeps_its_values() -> None:
    gpu = _table_gpus("smi_rtx-4090-x1_525.125.06_err-fan_gpud.txt")["00000000:01:00.0"]
    assert "fan_speed_pct" not in gpu  # ERR!: no value, not a lost row
    assert gpu["power"] == {"draw_w": 49.0, "enforced_limit_w": 450.0}
    assert gpu["memory"] == {"used_mib": 2021, "total_mib": 23028}
    assert (gpu["performance_state"], gpu["compute_mode"], gpu["temperature"]) == ("P5", "E. Process", {"gpu_c": 38})


def test_the_summary_shows_the_enforced_limit_and_the_request_beside_it(cli: Callable[..., Any]) -> None:
    result = cli("show", str(REAL / "text" / "q_gh200-480gb-x1_550.127.05_thamada.txt"))
    assert result.returncode == 0, result.stderr
    assert "limit 700 W (requested 900 W, default 900 W)" in result.stdout
    table = cli("show", str(REAL / "table" / "smi_gh200-480gb-x1_550.127.05_thamada.txt"))
    assert "limit 700 W;" in table.stdout


def test_an_enforced_cap_lowered_alone_is_not_undone_with_pl(cli: Callable[..., Any], tmp_path: Path) -> None:
    # The GH200's -a with its enforced limit lowered and its requested one kept: a cap set elsewhere.
    query = REAL / "text" / "q_gh200-480gb-x1_550.127.05_thamada.txt"
    capped = tmp_path / "capped.txt"
    text = query.read_text("utf-8")
    capped.write_text(text.replace("Current Power Limit               : 700.00 W",
                                   "Current Power Limit               : 500.00 W"), "utf-8")
    result = cli("explain", str(query), str(capped), "--format", "json")
    top = json.loads(result.stdout)["explanations"][0]
    assert top["title"] == "GPU enforced power limit 700 W -> 500 W on GPU 0"
    assert "nvidia-smi -i 0 -pl" not in top["fix"] and "900 W on both sides" in top["fix"]
    # The request lowered too: one cause, the request's, undone with -pl.
    both = tmp_path / "both.txt"
    both.write_text(capped.read_text("utf-8").replace("Requested Power Limit             : 900.00 W",
                                                      "Requested Power Limit             : 500.00 W"), "utf-8")
    result = cli("explain", str(query), str(both), "--format", "json")
    power = [e for e in json.loads(result.stdout)["explanations"] if "power" in e["title"]]
    assert [(e["title"], e["fix"]) for e in power] == [
        ("GPU power limit (requested) 900 W -> 500 W on GPU 0", "sudo nvidia-smi -i 0 -pl 900")]


def _pasted(*parts: Path) -> str:
    return "\n".join(part.read_text("utf-8") for part in parts)


DELLA_TABLE = REAL / "table" / "smi_h100-80gb-hbm3-x1_545.23.08_princeton.txt"
DELLA_Q = REAL / "text" / "q_h100-80gb-hbm3-x1_545.23.08_princeton-della-j11g1.txt"


def test_a_table_and_the_q_of_one_machine_pasted_together_are_one_description(tmp_path: Path) -> None:
    # Both of one H100 node (PrincetonUniversity/gpu_programming_intro pli.md): the paste issues hold most often.
    paste = tmp_path / "issue.txt"
    paste.write_text(_pasted(DELLA_TABLE, DELLA_Q), "utf-8")
    document = import_snapshot([paste]).document
    gpu = document["probes"]["gpu"]["data"]
    assert list(gpu["gpus"]) == ["GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1"]
    record = gpu["gpus"]["GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1"]
    assert (record["pci_bus_id"], record["power"]["enforced_limit_w"], record["power"]["limit_w"]) == (
        "00000000:19:00.0", 700.0, 700.0)
    assert (gpu["driver_version"], gpu["gpu_count"]) == ("545.23.08", 1)
    assert list(document["probes"]["pcie"]["data"]["gpus"]) == ["GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1"]
    assert [s["format"] for s in document["host"]["sources"]] == ["nvidia-smi", "nvidia-smi -q"]
    assert "conflicts" not in document["host"]  # readings differ (draw 72 W / 72.02 W), no setting does
    # Two files of the machine, not one paste: merged the same way.
    separate = import_snapshot([DELLA_TABLE, DELLA_Q]).document
    assert list(separate["probes"]["gpu"]["data"]["gpus"]) == ["GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1"]


def test_a_setting_the_two_descriptions_disagree_on_is_kept_from_q_and_shown(tmp_path: Path) -> None:
    paste = tmp_path / "issue.txt"
    # EDITED: the table's persistence cell turned Off, as it reads after a reboot between the two commands.
    table = DELLA_TABLE.read_text("utf-8").replace("HBM3          On  |", "HBM3          Off |")
    paste.write_text(table + "\n" + DELLA_Q.read_text("utf-8"), "utf-8")
    document = import_snapshot([paste]).document
    assert document["host"]["conflicts"] == [{
        "path": 'probes.gpu.data.gpus.GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1.persistence_mode', "kept": True,
        "kept_from": "issue.txt lines 24-226", "other": False, "other_from": "issue.txt lines 2-23"}]


def test_descriptions_of_two_machines_are_refused(tmp_path: Path) -> None:
    paste = tmp_path / "issue.txt"
    paste.write_text(_pasted(REAL / "table" / "smi_gh200-480gb-x1_550.127.05_thamada.txt", DELLA_Q), "utf-8")
    with pytest.raises(UsageError, match="a second GPU description .* other GPUs"):
        import_snapshot([paste])


GH200_DELLA = REAL / "text" / "q_gh200-480gb-x1_545.23.08_princeton-della-gh.txt"
GH200_THAMADA = REAL / "text" / "q_gh200-480gb-x1_550.127.05_thamada.txt"


def test_two_gh200_boards_are_compared_setting_by_setting(cli: Callable[..., Any]) -> None:
    # Two machines, one GH200 each (other UUIDs, other bus ids): enforced 900 W on one, 700 W on the other.
    result = cli("explain", str(GH200_DELLA), str(GH200_THAMADA), "--format", "json")
    titles = [e["title"] for e in json.loads(result.stdout)["explanations"]]
    assert "GPU enforced power limit 900 W -> 700 W on GPU 0" in titles
    boards = [t for t in titles if " is another board " in t or t.endswith(("added", "removed"))]
    assert boards == ["GPU 0 is another board (UUID GPU-1986864f-4424-33ea-42a0-3ef03cc494ed -> "
                      "GPU-35d58415-1094-5ad1-64d1-b797587d33a7)"]
