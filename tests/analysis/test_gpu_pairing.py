"""GPUs of two boards paired for the diff (driftcheck.analysis.gpu_pairing), over recorded nvidia-smi -q outputs."""

from __future__ import annotations

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.gpu_pairing import board_pairs
from driftcheck.reports.importer import import_snapshot
from tests.conftest import DATA

H100_A = DATA / "nvidia" / "text" / "q_h100-80gb-hbm3-x8_535.161.08.txt"
H100_B = DATA / "nvidia" / "text" / "q_h100-80gb-hbm3-x8_535.183.01.txt"


def _swapped(document: dict, key: str, other: str) -> dict:  # type: ignore[type-arg]
    for probe in ("gpu", "pcie"):
        gpus = document["probes"][probe]["data"]["gpus"]
        gpus[other] = gpus.pop(key)
    document["probes"]["gpu"]["data"]["gpus"][other]["uuid"] = other
    return document


def test_one_board_swapped_in_its_slot_is_paired_by_bus_id() -> None:
    a = import_snapshot([H100_A]).document
    key = next(iter(a["probes"]["gpu"]["data"]["gpus"]))
    b = _swapped(import_snapshot([H100_A]).document, key, "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1")
    assert board_pairs(a, b) == {"GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1": key}


def test_two_machines_sharing_no_gpu_are_paired_by_index() -> None:
    a, b = import_snapshot([H100_A]).document, import_snapshot([H100_B]).document
    pairs = board_pairs(a, b)
    index_a = {g["index"]: k for k, g in a["probes"]["gpu"]["data"]["gpus"].items()}
    assert len(pairs) == 8
    assert all(index_a[b["probes"]["gpu"]["data"]["gpus"][kb]["index"]] == ka for kb, ka in pairs.items())


def test_gpus_of_unequal_count_are_not_paired() -> None:
    a = import_snapshot([H100_A]).document
    b = import_snapshot([H100_B]).document
    del b["probes"]["gpu"]["data"]["gpus"][next(iter(b["probes"]["gpu"]["data"]["gpus"]))]
    assert board_pairs(a, b) == {}
    paths = {c.path for c in diff_snapshots(import_snapshot([H100_A]), import_snapshot([H100_A])).changes}
    assert not [p for p in paths if p.endswith(".uuid")]


def test_a_side_keyed_by_index_is_left_to_the_partial_comparison() -> None:
    a = import_snapshot([H100_A]).document
    b = import_snapshot([H100_B]).document
    for probe in ("gpu", "pcie"):
        gpus = b["probes"][probe]["data"]["gpus"]
        b["probes"][probe]["data"]["gpus"] = {f"GPU{g['index']}": g for g in gpus.values()}
    assert board_pairs(a, b) == {}
