"""The clocksource probe on a real recording of a KVM VM (tests/data/hosts/kvm-vm-clocksource, see its SOURCE)
and its edited copy, on this machine against its own /sys, and `explain` ranking a clocksource that left tsc
first, with a fix that restores A's."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.clocksource import AVAILABLE, CURRENT, ClocksourceProbe, parse_clocksource
from driftcheck.probes.runner import ProbeOutcome, run_one
from tests.conftest import DATA, CliResult
from tests.probes.facts_of import category_of, is_reading

HOSTS = DATA / "hosts"
BASE = "kvm-vm-clocksource"


def _outcome(recording: Path) -> ProbeOutcome:
    return run_one(ClocksourceProbe(), ReplayHost(recording), ProbeOptions())


def test_the_recorded_vm_keeps_time_with_tsc_and_offers_kvm_clock() -> None:
    outcome = _outcome(HOSTS / BASE)
    assert outcome.status == "ok", outcome.error
    assert outcome.data == {"current": "tsc", "available": ["kvm-clock", "tsc"]}


def test_the_edited_copy_keeps_time_with_kvm_clock() -> None:
    assert _outcome(HOSTS / f"{BASE}-kvm-clock").data == {"current": "kvm-clock", "available": ["kvm-clock", "tsc"]}


def test_a_host_without_the_sysfs_clocksource_is_unavailable() -> None:
    assert _outcome(HOSTS / "bare-no-proc-sys").status == "unavailable"


def _edited_copy(tmp_path: Path, missing: dict[str, dict[str, str]]) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(HOSTS / BASE, copy)
    manifest = json.loads((copy / "host.json").read_text("utf-8"))
    manifest["missing"] = missing
    (copy / "host.json").write_text(json.dumps(manifest), "utf-8")
    return copy


def test_a_clocksource_that_may_not_be_read_denies_the_probe(tmp_path: Path) -> None:
    copy = _edited_copy(tmp_path, {CURRENT: {"error": "PermissionError", "message": "Permission denied"}})
    assert _outcome(copy).status == "denied"


def test_without_the_list_the_current_clocksource_is_still_read(tmp_path: Path) -> None:
    copy = _edited_copy(tmp_path, {AVAILABLE: {"error": "FileNotFoundError", "message": "No such file"}})
    assert _outcome(copy).data == {"current": "tsc", "available": None}


@pytest.mark.parametrize(("current", "available", "expected"), [
    ("tsc\n", "tsc hpet acpi_pm \n", {"current": "tsc", "available": ["acpi_pm", "hpet", "tsc"]}),
    ("hpet\n", None, {"current": "hpet", "available": None}),
    ("acpi_pm", "", {"current": "acpi_pm", "available": []}),
])
def test_parse_clocksource(current: str, available: str | None, expected: dict[str, object]) -> None:
    assert parse_clocksource(current, available) == expected


@pytest.mark.parametrize("current", ["", " \n", "tsc hpet\n"])
def test_a_current_clocksource_that_is_not_one_name_is_refused(current: str) -> None:
    with pytest.raises(ValueError, match="not one clocksource name"):
        parse_clocksource(current, "tsc\n")


def test_this_machine_reads_as_its_own_sysfs() -> None:
    if not Path(CURRENT).is_file():
        pytest.skip(f"no {CURRENT} on this machine")
    outcome = run_one(ClocksourceProbe(), LocalHost(), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data == {"current": Path(CURRENT).read_text().strip(),
                            "available": sorted(Path(AVAILABLE).read_text().split())}


def test_its_facts_are_kernel_settings() -> None:
    for leaf in ("current", "available"):
        assert category_of(ClocksourceProbe, leaf) == "kernel_os"
        assert not is_reading(ClocksourceProbe, leaf)


def _replayed(cli: Callable[..., CliResult], tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.json"
    done = cli("snapshot", "--replay", str(HOSTS / name), "--probe", "clocksource", "--no-store", "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return out


FIX = "echo {} | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource"


# kvm-clock serves reads from the vDSO as tsc does: a move between the two is told, with no direction claimed
# (the directed rules are for hpet/acpi_pm, device clocks every read traps into; tests/data/pairs/clocksource-*).
@pytest.mark.parametrize(("a", "b", "title", "fix"), [
    (BASE, f"{BASE}-kvm-clock", "kernel clocksource tsc -> kvm-clock", FIX.format("tsc")),
    (f"{BASE}-kvm-clock", BASE, "kernel clocksource kvm-clock -> tsc", FIX.format("kvm-clock")),
])
def test_explain_ranks_the_clocksource_first_with_the_fix_that_restores_a(
        cli: Callable[..., CliResult], tmp_path: Path, a: str, b: str, title: str, fix: str) -> None:
    done = cli("explain", str(_replayed(cli, tmp_path, a)), str(_replayed(cli, tmp_path, b)), "--format", "json")
    first = json.loads(done.stdout)["explanations"][0]
    assert (first["rule"], first["category"], first["fix"]) == ("clocksource-changed", "kernel_os", fix)
    assert first["title"] == title  # no "slow"/"fast" claim beside it
