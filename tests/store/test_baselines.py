"""Named baselines: save, list, show, rm; never re-pointed without --force; `baseline:NAME` anywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"


def test_save_list_show_rm(cli: Callable[..., CliResult]) -> None:
    a = str(PAIRS / "rebooted" / "a.json")
    saved = cli("baseline", "save", "golden", a)
    # The corpus snapshot is not signed: said first, then saved.
    warning, said = saved.stdout.splitlines()[:2]
    assert saved.returncode == 0 and said.startswith("baseline golden -> ")
    assert warning.startswith("! SNAP ") and warning.endswith(": not signed")
    listed = json.loads(cli("baseline", "list", "--format", "json").stdout)
    assert [row["name"] for row in listed] == ["golden"]
    assert listed[0]["label"] == "rebooted: before"
    shown = cli("baseline", "show", "golden", "--format", "json")
    assert json.loads(shown.stdout)["snapshot"]["label"] == "rebooted: before"
    assert cli("baseline", "rm", "golden").returncode == 0
    assert "no baselines yet" in cli("baseline", "list").stdout
    gone = cli("baseline", "show", "golden")
    assert gone.returncode == 2 and "no such baseline" in gone.stderr


def test_refuses_to_repoint_a_name_without_force(cli: Callable[..., CliResult]) -> None:
    a, b = str(PAIRS / "rebooted" / "a.json"), str(PAIRS / "rebooted" / "b.json")
    first = cli("baseline", "save", "default", a)
    assert cli("baseline", "save", "default", a).returncode == 0  # the same snapshot again is no overwrite
    refused = cli("baseline", "save", "default", b)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert json.loads(cli("baseline", "list", "--format", "json").stdout)[0]["id"].startswith(
        first.stdout.splitlines()[-1].split()[3])
    assert cli("baseline", "save", "default", b, "--force").returncode == 0


def test_baseline_reference_works_in_diff_and_explain(cli: Callable[..., CliResult]) -> None:
    a, b = str(PAIRS / "pcie-width-narrower" / "a.json"), str(PAIRS / "pcie-width-narrower" / "b.json")
    cli("baseline", "save", "before", a)
    result = cli("explain", "baseline:before", b, "--format", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["explanations"][0]["rule"] == "pcie-width-narrower"
    assert cli("diff", "baseline:before", a).returncode == 0
    unknown = cli("diff", "baseline:nope", a)
    assert unknown.returncode == 2 and "'baseline:nope'" in unknown.stderr


def test_bad_names_are_refused(cli: Callable[..., CliResult]) -> None:
    a = str(PAIRS / "rebooted" / "a.json")
    for name in ("../x", "x/y", "a b", ""):
        assert cli("baseline", "save", name, a).returncode == 2


def test_save_without_snapshot_takes_a_fresh_one(cli: Callable[..., CliResult]) -> None:
    saved = cli("baseline", "save", "now")
    assert saved.returncode == 0
    entry = json.loads(cli("baseline", "list", "--format", "json").stdout)[0]
    assert entry["label"] == "baseline now"
    assert cli("verify", "baseline:now").returncode == 0
