"""Evidence that holds, through the command line: a fact one side never took is not a change, a reading is
never a cause, and the readings list holds only values that move on their own.

Live cases take real snapshots of this machine into a fresh store (the `driftcheck_home` fixture); the
others edit the snapshot pair base (tests/data/pairs/base.json, its sources in that folder's README).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
BASE = PAIRS / "base.json"


def _base() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(BASE.read_text("utf-8"))
    return document


def _first_gpu(document: dict[str, Any]) -> dict[str, Any]:
    gpu: dict[str, Any] = next(iter(document["probes"]["gpu"]["data"]["gpus"].values()))
    return gpu


def _explain_json(cli: Callable[..., CliResult], tmp_path: Path, before: dict[str, Any],
                  after: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    (tmp_path / "a.json").write_text(json.dumps(before), "utf-8")
    (tmp_path / "b.json").write_text(json.dumps(after), "utf-8")
    done = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, report


# ---- a fact one side never took is not a change ----------------------------------------------------

def test_runtime_facts_taken_on_one_side_only_are_not_a_hardware_cause(cli: Callable[..., CliResult]) -> None:
    pytest.importorskip("torch")
    assert cli("snapshot", "--probe", "torch", "--probe", "python", "-q").returncode == 0
    assert cli("snapshot", "--probe", "torch", "--probe", "python", "--deep", "-q").returncode == 0
    done = cli("explain", "@1", "@0", "--format", "json")
    report = json.loads(done.stdout)
    # Before: "[0.70] hardware_change: GPU count none -> 0", and "0 facts only in B".
    assert done.returncode == 0, report["explanations"]
    assert report["explanations"] == []
    assert not any(row["path"].startswith("probes.torch.data.device_count") for row in report["changes"])
    assert report["not_compared"]["only_in_a"] == 0
    assert report["not_compared"]["only_in_b"] > 0
    assert "torch.device_count" in report["not_compared"]["families"]
    text = cli("explain", "@1", "@0").stdout
    assert "not compared: 0 facts only in A, 0 only in B" not in text
    assert "hardware_change" not in text


def test_probes_taken_on_one_side_only_are_counted_as_not_compared(cli: Callable[..., CliResult]) -> None:
    assert cli("snapshot", "--probe", "env", "--probe", "python", "--probe", "system", "-q").returncode == 0
    assert cli("snapshot", "--probe", "env", "-q").returncode == 0
    report = json.loads(cli("explain", "@1", "@0", "--format", "json").stdout)
    # Before: "not compared: 0 facts only in A, 0 only in B" beside two probes taken on one side only.
    assert report["not_compared"]["only_in_a"] > 10
    assert {"python", "system"} <= {family.split(".")[0] for family in report["not_compared"]["families"]}
    assert report["explanations"] == []
    # Nothing the one side alone holds is claimed unchanged either.
    assert not any(row["title"].startswith(("Python interpreter", "kernel and OS")) for row in report["unchanged"])


# ---- readings are never causes ----------------------------------------------------------------------

def test_a_fan_that_spun_up_is_a_reading_never_a_cause(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    before = _base()
    after = copy.deepcopy(before)
    _first_gpu(before)["fan_speed_pct"] = 0
    _first_gpu(after)["fan_speed_pct"] = 46
    _first_gpu(after)["temperature"]["gpu_c"] += 6
    _first_gpu(after)["power"]["draw_w"] = 120.0
    code, report = _explain_json(cli, tmp_path, before, after)
    # Before: "[0.15] thermal: fan speed 0 -> 46 %", exit 1, while the fan was listed among the readings.
    assert code == 0 and report["explanations"] == []
    assert [note["rule"] for note in report["notes"]] == ["gpu-fan-speed"]
    assert "never a cause" in report["notes"][0]["title"]
    assert any(row["path"].endswith("fan_speed_pct") for row in report["readings"])


def test_a_clock_read_lower_under_load_is_context_and_explain_exits_0(cli: Callable[..., CliResult]) -> None:
    pair = PAIRS / "gpu-clock-under-load"
    done = cli("explain", str(pair / "a.json"), str(pair / "b.json"))
    assert done.returncode == 0, done.stdout
    assert "No relevant difference explains a performance shift." in done.stdout
    assert "clock under load SM 1980 -> 1410 MHz on GPU 0 (readings: context, never a cause)" in done.stdout


def test_the_readings_list_holds_only_values_that_move_on_their_own(cli: Callable[..., CliResult],
                                                                    tmp_path: Path) -> None:
    before = _base()
    after = copy.deepcopy(before)
    before["label"], after["label"] = "before", "after"
    after["probes"]["system"]["data"]["boot_id"] = "0b7e9c52-41d6-4a8e-b2f3-6c1d0e9a7f48"
    after["probes"]["system"]["data"]["uptime_s"] = 120.5
    before["probes"]["env"]["data"]["vars"]["_"] = "/usr/bin/python3"
    after["probes"]["env"]["data"]["vars"]["_"] = "/opt/venv/bin/python"
    after["probes"]["env"]["data"]["groups"] = {"omp": ["OMP_NUM_THREADS"]}
    before["probes"]["kernels"]["data"]["hash_cache"] = {"hits": 0, "hashed": 13}
    after["probes"]["kernels"]["data"]["hash_cache"] = {"hits": 13, "hashed": 0}
    # 4 KiB less free memory: 1907.3 GiB on both sides once written.
    after["probes"]["system"]["data"]["memory"]["available_kib"] -= 4
    code, report = _explain_json(cli, tmp_path, before, after)
    # Before: the label, the boot id, `_`, the env group, the hash-cache counters and "1907.3 GiB -> 1907.3 GiB"
    # were all listed as readings.
    assert [row["path"] for row in report["readings"]] == ["probes.system.data.uptime_s"]
    assert code == 0 and report["explanations"] == []
    text = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json")).stdout
    assert "hash cache" not in text and "GiB -> " not in text and "label" not in text


# ---- an "unchanged" title needs the facts it names on both sides -------------------------------------

HOSTS = Path(__file__).resolve().parent.parent / "data" / "hosts"


@pytest.mark.parametrize(("recording", "claimed"), [
    # A real VM with no cpufreq: a CPU model and core count are no evidence about a governor.
    ("debian12-vm-docker", False),
    # The same VM recorded with a cpufreq governor (performance) and its frequency range: the claim holds.
    ("debian12-vm-docker-cpufreq-performance", True),
])
def test_cpu_governor_unchanged_needs_a_governor_on_both_sides(cli: Callable[..., CliResult], tmp_path: Path,
                                                               recording: str, claimed: bool) -> None:
    for side in ("a", "b"):
        done = cli("snapshot", "--replay", str(HOSTS / recording), "-o", str(tmp_path / f"{side}.json"),
                   "--no-store", "--no-sign", "-q")
        assert done.returncode == 0, done.stderr
    done = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    titles = [row["title"] for row in json.loads(done.stdout)["unchanged"]]
    # Before: "CPU governor and frequency: identical" where neither side recorded a governor.
    assert ("CPU governor and frequency: identical" in titles) is claimed, titles


# ---- one underlying change is one cause -------------------------------------------------------------

def test_packages_of_one_release_are_one_cause(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    before, after = _base(), _base()
    # The three distributions flashinfer ships one release as (flashinfer-python, -cubin, -jit-cache).
    record = before["probes"]["packages"]["data"]["packages"]["pyyaml"]
    for side, version in ((before, "0.5.3"), (after, "0.6.1")):
        for name in ("flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"):
            side["probes"]["packages"]["data"]["packages"][name] = {
                **record, "name": name, "version": version, "wheel_tags": ["py3-none-any"], "compiled_files": 0}
    code, report = _explain_json(cli, tmp_path, before, after)
    # Before: the three packages filled the top 3, each with a pin that restored one of them.
    assert code == 1 and len(report["explanations"]) == 1, [e["title"] for e in report["explanations"]]
    top = report["explanations"][0]
    assert "0.5.3 -> 0.6.1 (one release with" in top["title"]
    assert len(top["evidence"]) == 3
    assert all(f"{name}==0.5.3" in top["fix"] for name in ("flashinfer-python", "flashinfer-cubin",
                                                          "flashinfer-jit-cache"))


def test_packages_of_one_name_and_different_versions_stay_apart(cli: Callable[..., CliResult],
                                                                tmp_path: Path) -> None:
    before, after = _base(), _base()
    record = before["probes"]["packages"]["data"]["packages"]["pyyaml"]
    for side, versions in ((before, ("0.5.3", "1.0")), (after, ("0.6.1", "1.1"))):
        for name, version in zip(("flashinfer-python", "flashinfer-bench"), versions, strict=True):
            side["probes"]["packages"]["data"]["packages"][name] = {**record, "name": name, "version": version}
    code, report = _explain_json(cli, tmp_path, before, after)
    assert code == 1 and len(report["explanations"]) == 2


def test_one_topology_change_across_gpu_pairs_is_one_cause(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    before, after = _base(), _base()
    devices = ["GPU0", "GPU1", "GPU2", "GPU3"]
    pairs = [f"{x}~{y}" for i, x in enumerate(devices) for y in devices[i + 1:]]
    before["probes"]["pcie"]["data"]["topology"]["pairs"] = {pair: "SYS" for pair in pairs}
    after["probes"]["pcie"]["data"]["topology"]["pairs"] = {pair: "PHB" for pair in pairs}
    code, report = _explain_json(cli, tmp_path, before, after)
    # Before: "GPU pair GPU0~GPU1 connection SYS -> PHB", once per pair (6 times).
    assert code == 1 and len(report["explanations"]) == 1, [e["title"] for e in report["explanations"]]
    top = report["explanations"][0]
    assert top["category"] == "p2p_topology" and "SYS -> PHB" in top["title"] and len(top["evidence"]) == 6


def test_a_board_swapped_in_one_slot_is_one_cause(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    before, after = _base(), _base()
    old = next(iter(after["probes"]["gpu"]["data"]["gpus"]))
    new = "GPU-11111111-2222-3333-4444-555555555555"
    board = after["probes"]["gpu"]["data"]["gpus"].pop(old)
    after["probes"]["gpu"]["data"]["gpus"][new] = {**board, "uuid": new, "serial": "1650000000000"}
    after["probes"]["pcie"]["data"]["gpus"][new] = after["probes"]["pcie"]["data"]["gpus"].pop(old)
    code, report = _explain_json(cli, tmp_path, before, after)
    # Before: "GPU 1 added" twice and "GPU 1 removed" twice (gpu and pcie probes).
    assert code == 1 and len(report["explanations"]) == 1, [e["title"] for e in report["explanations"]]
    top = report["explanations"][0]
    # The boards are paired by slot before the diff (analysis/gpu_pairing.py): one change, the UUID.
    assert top["category"] == "hardware_change" and " is another board " in top["title"]
    assert old in top["title"] and new in top["title"]


# ---- relevance weighs what the machine has ----------------------------------------------------------

def _knobs_set(document: dict[str, Any]) -> dict[str, Any]:
    after = copy.deepcopy(document)
    after["probes"]["env"]["data"]["vars"].update(
        {"CUDA_VISIBLE_DEVICES": "1", "NCCL_P2P_DISABLE": "1", "OMP_NUM_THREADS": "1"})
    return after


def test_gpu_only_knobs_rank_low_where_neither_side_has_a_gpu(cli: Callable[..., CliResult],
                                                              tmp_path: Path) -> None:
    # A real recorded VM with no GPU (its gpu probe finds no driver).
    done = cli("snapshot", "--replay", str(HOSTS / "debian12-vm-docker"), "-o", str(tmp_path / "cpu.json"),
               "--no-store", "--no-sign", "-q")
    assert done.returncode == 0, done.stderr
    before = json.loads((tmp_path / "cpu.json").read_text("utf-8"))
    assert before["probes"]["gpu"]["status"] == "unavailable"
    code, report = _explain_json(cli, tmp_path, before, _knobs_set(before))
    # Before: CUDA_VISIBLE_DEVICES (0.75) and NCCL_P2P_DISABLE (0.80) outranked OMP_NUM_THREADS (0.70).
    ranked = [e["evidence"][0].rsplit(".", 1)[-1] for e in report["explanations"]]
    assert code == 1 and ranked[0] == "OMP_NUM_THREADS", ranked
    low = [e for e in report["explanations"] if e["evidence"][0].rsplit(".", 1)[-1] != "OMP_NUM_THREADS"]
    assert len(low) == 2 and all(e["confidence"] < 0.1 and "neither side has a GPU" in e["why"] for e in low)


def test_gpu_only_knobs_keep_their_weight_where_there_is_a_gpu(cli: Callable[..., CliResult],
                                                               tmp_path: Path) -> None:
    before = _base()
    code, report = _explain_json(cli, tmp_path, before, _knobs_set(before))
    ranked = [e["evidence"][0].rsplit(".", 1)[-1] for e in report["explanations"]]
    assert code == 1 and ranked.index("OMP_NUM_THREADS") > ranked.index("NCCL_P2P_DISABLE")
    assert all(e["confidence"] >= 0.5 for e in report["explanations"][:3])


def test_a_package_whose_binary_is_a_cause_is_not_listed_as_unchanged(cli: Callable[..., CliResult],
                                                                      tmp_path: Path) -> None:
    """numpy of one version on both sides, its compiled file differing from RECORD on B only (rebuilt in
    place): the binary is a cause, so numpy is not "same version" among the unchanged."""
    before, after = _base(), _base()
    record = before["probes"]["packages"]["data"]["packages"]["pyyaml"]
    relative = "numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so"
    for side in (before, after):
        side["probes"]["packages"]["data"]["packages"]["numpy"] = {**record, "name": "numpy", "version": "2.2.6",
                                                                   "compiled_files": 1}
    after["probes"]["kernels"]["data"]["files"][f"numpy:{relative}"] = {
        "path": relative, "record_match": False, "sha256": "0" * 64, "size_bytes": 10_000_000}
    after["probes"]["kernels"]["data"]["modified_in_place"] = {"numpy": [relative]}
    code, report = _explain_json(cli, tmp_path, before, after)
    assert code == 1 and report["explanations"][0]["category"] == "package_binary"
    # Before: "numpy 2.2.6: same version, compiled files not recorded" beside numpy as cause #1.
    assert not any(row["title"].startswith("numpy ") for row in report["unchanged"]), report["unchanged"]
