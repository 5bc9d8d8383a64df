"""Clock-event time counters and the vGPU licence, read from real `nvidia-smi -q` / `-q -x` outputs
(tests/data/nvidia/SOURCES.md), and what explain makes of a change of either."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.nvidia.smi_text import parse_smi_text, parse_vgpu_fragment
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.reports.importer import parse_text
from driftcheck.snapshot.model import Snapshot
from tests.conftest import DATA, CliResult

NVIDIA = DATA / "nvidia"


def _gpus(parsed: dict[str, Any]) -> list[dict[str, Any]]:
    return list(parsed["gpu"]["gpus"].values())


def _zero_but(**counters: int) -> dict[str, int]:
    base = {"sw_power_cap": 0, "sync_boost": 0, "sw_thermal_slowdown": 0, "hw_thermal_slowdown": 0,
            "hw_power_brake_slowdown": 0}
    return base | counters


@pytest.mark.parametrize(("name", "expected"), [
    ("xml/rtx-3090_590.44.01_v13.xml", _zero_but(sw_power_cap=9840338777)),
    ("xml/rtx-pro-6000-blackwell-maxq_590.44.01_v13.xml", _zero_but(sw_power_cap=25483012608)),
    ("text/q_l40s_595.80_idle.txt", _zero_but(sw_power_cap=200740215)),
    ("text/q_h100-80gb-hbm3_590.48.01_load.txt", _zero_but()),
])
def test_clock_event_time_of_newer_drivers(name: str, expected: dict[str, int]) -> None:
    text = (NVIDIA / name).read_text("utf-8")
    parsed = parse_smi_xml(text) if name.endswith(".xml") else parse_smi_text(text)
    assert [gpu["clock_event_time_us"] for gpu in _gpus(parsed)] == [expected]


@pytest.mark.parametrize("name", ["xml/rtx-3090_525.147.05_v12.xml", "text/q_h100-80gb-hbm3-x8_535.161.08.txt"])
def test_older_drivers_have_no_counters(name: str) -> None:
    text = (NVIDIA / name).read_text("utf-8")
    parsed = parse_smi_xml(text) if name.endswith(".xml") else parse_smi_text(text)
    assert {gpu["clock_event_time_us"] is None for gpu in _gpus(parsed)} == {True}


def test_vgpu_guest_licence_from_xml() -> None:
    (gpu,) = _gpus(parse_smi_xml((NVIDIA / "xml/grid-p4-1q-vgpu_513.46_v11.xml").read_text("utf-8")))
    assert gpu["vgpu"] == {"licensed_product": "NVIDIA RTX Virtual Workstation",
                           "license_status": "Licensed (Expiry: 2022-9-22 6:57:30 GMT)", "licensed": True}


def test_unlicensed_vgpu_from_a_real_paste() -> None:
    text = (NVIDIA / "fragments/vgpu-unlicensed_gpu-operator-220.txt").read_text("utf-8")
    assert parse_vgpu_fragment(text) == {"licensed_product": "NVIDIA Virtual Compute Server",
                                         "license_status": "Unlicensed", "licensed": False}


def test_bare_metal_has_no_vgpu() -> None:
    (gpu,) = _gpus(parse_smi_xml((NVIDIA / "xml/rtx-3090_590.44.01_v13.xml").read_text("utf-8")))
    assert gpu["vgpu"] is None


def test_explain_ranks_a_lost_vgpu_licence_first(cli: Callable[..., CliResult]) -> None:
    done = cli("explain", str(NVIDIA / "xml/grid-p4-1q-vgpu_513.46_v11.xml"),
               str(NVIDIA / "edited/grid-p4-1q-vgpu-unlicensed_513.46_v11.xml"), "--format", "json")
    first = json.loads(done.stdout)["explanations"][0]
    assert first["title"] == "the vGPU on GPU 0 is no longer licensed: after 20 minutes it runs restricted"
    assert "nvidia-gridd" in first["fix"]


def _snapshot(path: Path) -> dict[str, Any]:
    report = parse_text(path.read_text("utf-8"), path.name)
    return {"schema": 1, "created_at": "2026-12-02T00:00:00Z", "host": {"name": "n"}, "label": None,
            "probes": {name: {"status": "ok", "data": data, "error": None, "duration_s": 0.0}
                       for name, data in report.parsed.probes.items()}}


def test_clock_event_time_growth_between_snapshots_is_context() -> None:
    """The real RTX 3090 output, and the same board after 41 s more at its power cap (an edit in memory)."""
    a = _snapshot(NVIDIA / "xml/rtx-3090_590.44.01_v13.xml")
    b = copy.deepcopy(a)
    (gpu,) = b["probes"]["gpu"]["data"]["gpus"].values()
    gpu["clock_event_time_us"]["sw_power_cap"] += 41_000_000
    result = explain(diff_snapshots(Snapshot(a, source="a"), Snapshot(b, source="b")))
    # The counter is a reading: told as a note, never ranked (it ranked as a cause before).
    assert result.explanations == []
    (cause,) = result.notes
    assert cause.title == "GPU 0 spent 41000000 us more in sw_power_cap between the two snapshots " \
                          "(clock-event time, context) (readings: context, never a cause)"
