"""Fixes that paste, in the right direction: every fix the incident corpus and the pairs produce is either a
shell command of known tools (parsed with shlex) or advice marked as such (`fix_kind`), never a command
with a sentence glued on; pip runs through the target interpreter; A's locally modified binary is never
"restored" by a reinstall."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.fixes import KNOWN_TOOLS, command_words
from driftcheck.snapshot.model import Snapshot, read_snapshot_file

DATA = Path(__file__).resolve().parent.parent / "data"
PAIRS = sorted(p for p in (DATA / "pairs").iterdir() if (p / "expected.json").exists())
INCIDENTS = sorted(p for p in (DATA / "incidents").iterdir() if (p / "a.json").exists())


def _fixes(folder: Path) -> list[tuple[str, str, str]]:
    a, b = (read_snapshot_file(folder / name) for name in ("a.json", "b.json"))
    out = []
    for x, y in ((a, b), (b, a)):
        result = explain(diff_snapshots(x, y))
        out += [(e.rule, e.fix, e.fix_kind) for e in [*result.explanations, *result.notes]]
    return out


@pytest.mark.parametrize("folder", [*PAIRS, *INCIDENTS], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fix_is_a_command_or_marked_advice(folder: Path) -> None:
    for rule, fix, kind in _fixes(folder):
        words = command_words(fix)
        if kind == "command":
            assert words is not None, (rule, fix)
        else:
            # Advice is a sentence: it does not start like a command it fails to be.
            first = fix.split(" ", 1)[0]
            assert kind == "advice" and first not in KNOWN_TOOLS and not first.endswith(("python", "python3")), \
                (rule, fix)
        assert not fix.startswith("pip "), (rule, fix)  # never a bare pip: the target interpreter's


def test_pip_fixes_run_the_target_interpreter_with_the_build_index() -> None:
    fixes = [fix for folder in INCIDENTS for _, fix, kind in _fixes(folder) if " -m pip install" in fix]
    assert fixes
    for fix in fixes:
        words = command_words(fix)
        assert words is not None and words[0][0].startswith("/") and words[0][0].endswith(("python", "python3")), fix
        if "+cu" in fix:
            version = next(w for w in words[0] if "==" in w).split("+", 1)[1]
            assert words[0][-2:] == ["--extra-index-url", f"https://download.pytorch.org/whl/{version}"], fix


def _modified_pair() -> tuple[Snapshot, Snapshot]:
    base = read_snapshot_file(DATA / "pairs" / "kernel-rebuilt-same-version" / "a.json").document
    key = next(k for k in base["probes"]["kernels"]["data"]["files"] if k.startswith("torch:"))
    a, b = copy.deepcopy(base), copy.deepcopy(base)
    a["probes"]["kernels"]["data"]["files"][key].update(sha256="ab" * 32, record_match=False)
    a["probes"]["kernels"]["data"].setdefault("modified_in_place", {})["torch"] = [key.split(":", 1)[1]]
    return Snapshot(a, source="a"), Snapshot(b, source="b")


def test_a_locally_modified_binary_on_a_is_said_not_reinstalled() -> None:
    a, b = _modified_pair()
    first = explain(diff_snapshots(a, b)).explanations[0]
    assert "rebuilt in place" not in first.title and "A ran a locally modified" in first.title + first.fix
    assert first.fix_kind == "advice" and "pip" not in first.fix
    assert "sha256 abababab" in first.fix
    # The other way round B runs the modified copy: the wheel of A restores it.
    back = explain(diff_snapshots(b, a)).explanations[0]
    assert back.fix_kind == "command" and "--force-reinstall" in back.fix


def test_fix_kind_is_in_the_json_contract() -> None:
    a, b = _modified_pair()
    item = explain(diff_snapshots(a, b)).to_json()["explanations"][0]
    assert item["fix_kind"] == "advice" and json.dumps(item)


def _driver_pair(system: str, os_id: str | None) -> str:
    a, b = (read_snapshot_file(DATA / "pairs" / "driver-version" / name).document for name in ("a.json", "b.json"))
    for doc in (a, b):
        doc["probes"]["python"]["data"]["platform"]["system"] = system
        if os_id is None:
            doc["probes"].pop("system", None)
        else:
            doc["probes"]["system"]["data"]["os"]["id"] = os_id
    first = explain(diff_snapshots(Snapshot(a, source="a"), Snapshot(b, source="b"))).explanations[0]
    assert first.rule == "driver-version" and first.fix_kind == "advice"
    return first.fix


def test_the_driver_fix_is_said_for_the_boards_operating_system() -> None:
    windows = _driver_pair("Windows", None)
    assert "apt" not in windows and "Windows" in windows and "restart" in windows
    assert "apt-mark hold" in _driver_pair("Linux", "ubuntu")
    assert "apt" not in _driver_pair("Linux", "rhel")
