"""The reference's own target: `check --against REF` retakes the interpreter REF recorded, and when the two
sides describe different interpreters that is said first and their package lists are not diffed as drift.

Real snapshots of this machine, with real (empty) virtual environments as the other interpreter.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck import api
from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.render import explain_text
from driftcheck.analysis.targets import INTERPRETER_PROBES, reference_target, target_difference
from driftcheck.api.check import probes_to_check, retaken_target
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult

OWN_SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "reports" / "own" / "snapshot_vm.json"
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="probes this Linux machine")


def _venv(directory: Path) -> Path:
    """A real virtual environment without pip (fast): an interpreter whose packages are not ours."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, timeout=120)
    return directory / "bin" / "python"


def test_check_without_python_retakes_the_interpreter_the_baseline_recorded(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    saved = cli("baseline", "save", "b", "--python", str(venv))
    assert saved.returncode == 0, saved.stderr
    result = api.check(against="baseline:b", keep=False)
    assert reference_target(result.reference).python == str(venv)
    assert (result.fresh.probe_data("python") or {})["executable"] == str(venv)
    assert not target_difference(result.reference, result.fresh)
    assert not [e for e in result.explained.explanations if "interpreter" in e.title]


def test_check_against_another_interpreter_says_so_first_and_diffs_no_package_list(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    saved = cli("baseline", "save", "b", "--python", str(venv))
    assert saved.returncode == 0, saved.stderr
    shutil.rmtree(tmp_path / "venv")  # the venv is gone: the check can only take our own interpreter
    text = cli("check", "--against", "baseline:b", "--no-store")
    first = text.stdout.splitlines()[0]
    assert first.startswith("different targets: another interpreter"), text.stdout
    assert str(venv) in first and sys.executable in first
    assert "packages, kernels, torch not compared" in first
    assert "not compared:" in text.stdout and "another interpreter on each side" in text.stdout
    report = json.loads(cli("check", "--against", "baseline:b", "--no-store", "--format", "json").stdout)
    assert report["targets"]["interpreters"] == [str(venv), sys.executable]
    assert report["not_compared"]["other_target"] == list(INTERPRETER_PROBES)
    diffed = [row["path"] for row in report["changes"]]
    assert not [path for path in diffed if path.split(".")[1] in INTERPRETER_PROBES], diffed
    assert not [row for row in report["explanations"] if row["category"] in ("package_version", "package_binary")
                and not row["evidence"][0].startswith("probes.python.")]


def test_snapshots_of_two_interpreters_keep_their_packages_out_of_explain(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    store = Store(tmp_path / "store")
    a = api.take_snapshot(python=str(venv), probes=("python", "packages"), sign=False,
                          store=store)
    b = api.take_snapshot(probes=("python", "packages"), sign=False, store=store)
    result = explain(diff_snapshots(a, b))
    assert not [c for c in result.diff.changes if c.probe == "packages"]
    assert result.to_json()["targets"]["line"].startswith("different targets: another interpreter")
    # The same interpreter on both sides: its package lists are compared as ever.
    again = explain(diff_snapshots(b, b))
    assert not target_difference(b, b)
    assert again.to_json()["not_compared"] == {"only_in_a": 0, "only_in_b": 0, "families": [], "other_target": [],
                                               "cut": []}
    assert "not compared: 0 facts only in A, 0 only in B" in explain_text(again)


def test_retaken_target_prefers_the_user_then_the_reference_on_its_own_host(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    reference = api.take_snapshot(python=str(venv), probes=("python",), sign=False, keep=False)
    here = reference.host_name
    assert retaken_target(reference, None, here).python == str(venv)
    assert retaken_target(reference, "/usr/bin/python3", here).python == "/usr/bin/python3"
    # Taken on another host: its path says nothing about this machine.
    assert retaken_target(reference, None, "another-host").python is None
    assert "server" not in probes_to_check(reference)


def _recorded(**changes: object) -> Snapshot:
    """This machine's recorded snapshot (tests/data/reports/own), with `changes` made to its document."""
    document = json.loads(OWN_SNAPSHOT.read_text("utf-8"))
    for key, value in changes.items():
        if key == "host_name":
            document["host"]["name"] = value
        else:
            document["probes"][key] = value
    return Snapshot(document, str(OWN_SNAPSHOT))


def test_another_host_is_the_first_finding_but_its_packages_are_still_compared() -> None:
    a, b = _recorded(), _recorded(host_name="gpu-node-7")
    difference = target_difference(a, b)
    assert difference.hosts == ("vm", "gpu-node-7") and difference.interpreters is None
    result = explain(diff_snapshots(a, b))
    assert explain_text(result).splitlines()[0] == "different targets: another host (A vm, B gpu-node-7)"
    assert result.to_json()["not_compared"]["other_target"] == []


def test_a_reference_that_asked_a_server_has_it_asked_again() -> None:
    url = "http://127.0.0.1:30000"
    reference = _recorded(server={"status": "ok", "data": {"url": url}, "error": None, "duration_s": 0.1})
    assert "server" in probes_to_check(reference)
    assert retaken_target(reference, None, "vm").server == url
    assert "server" not in probes_to_check(_recorded())


def test_two_names_of_one_environment_are_one_interpreter(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    a = api.take_snapshot(python=str(venv), probes=("python", "packages"), sign=False,
                          keep=False)
    b = api.take_snapshot(python=str(venv.with_name("python3")), probes=("python", "packages"),
                          sign=False, keep=False)
    assert reference_target(a).python != reference_target(b).python
    assert not target_difference(a, b)


def test_another_interpreter_is_one_cause_with_its_path_prefix_and_sys_path_as_evidence(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    a = api.take_snapshot(python=str(venv), probes=("python",), sign=False, keep=False)
    b = api.take_snapshot(probes=("python",), sign=False, keep=False)
    result = explain(diff_snapshots(a, b))
    interpreter = [e for e in result.explanations if "probes.python.data.executable" in e.evidence]
    assert len(interpreter) == 1 and len(result.explanations) == 1
    assert {"probes.python.data.prefix", "probes.python.data.sys_path"} <= set(interpreter[0].evidence)
