"""Readings are not causes: a value that moves on its own (facts.yaml `class: reading`) never ranks as a
cause, never fails `check`, and is shown as context ("NUMA node 0 memory total 7.4 GiB -> 12.5 GiB: a
reading") and under the contract's `readings` key.

Measured on a VM: NUMA node 0's memory total grew 7.4 -> 12.5 GB within 20 minutes, nothing else changed;
explain led with "NUMA layout changed ... check BIOS NUMA settings" and `check` reported drift.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.render import explain_text
from driftcheck.analysis.gate import check_against
from driftcheck.analysis.rules import default_catalog
from driftcheck.hosts import ReplayHost
from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
from driftcheck.snapshot.facts import fact_table
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart, format_path
from tests.conftest import DATA, CliResult

BASE = DATA / "pairs" / "base.json"
RECORDING = DATA / "hosts" / "debian12-vm-docker"
NODE0 = "probes.system.data.numa.nodes.0.memory_total_kib"
GIB_KIB = 1024 * 1024


def _replayed(recording: Path) -> Snapshot:
    probes = select_probes(builtin_probes(Redactor(b"readings")), only=["system", "env", "python"])
    return Prober(ReplayHost(recording), Redactor(b"readings")).snapshot(probes)


def _node0_grown(tmp_path: Path, total_kib: int) -> Path:
    """The recording, with NUMA node 0's MemTotal edited: the same VM after its host added memory."""
    copy_dir = tmp_path / "grown"
    shutil.copytree(RECORDING, copy_dir)
    meminfo = copy_dir / "files" / "sys" / "devices" / "system" / "node" / "node0" / "meminfo"
    text = meminfo.read_text("utf-8")
    old = next(line for line in text.splitlines() if "MemTotal:" in line)
    meminfo.write_text(text.replace(old, f"Node 0 MemTotal:       {total_kib} kB"), "utf-8")
    return copy_dir


def test_numa_node_memory_growth_on_a_replayed_vm_is_a_reading(tmp_path: Path) -> None:
    before = _replayed(RECORDING)
    after = _replayed(_node0_grown(tmp_path, int(12.5 * GIB_KIB)))
    diff = diff_snapshots(before, after)
    result = explain(diff)
    assert result.explanations == [], [e.title for e in result.explanations]
    assert not check_against(before, after).drift
    assert not check_against(before, after, min_confidence=0.0).drift
    assert [c.path for c in diff.readings] == [NODE0]
    [reading] = result.to_json()["readings"]
    assert reading["path"] == NODE0 and reading["after"] == int(12.5 * GIB_KIB)
    assert reading["title"].startswith("NUMA node 0 memory total ") and reading["title"].endswith(
        " -> 12.5 GiB: a reading")
    assert reading["title"] in explain_text(result)


def _base() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(BASE.read_text("utf-8"))
    for node in document["probes"]["system"]["data"]["numa"]["nodes"].values():
        node["memory_total_kib"] = int(7.4 * GIB_KIB)
    return document


def _leaves(value: Any, prefix: tuple[PathPart, ...]) -> Iterator[tuple[tuple[PathPart, ...], Any]]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*prefix, key))
    else:
        yield prefix, value


def _interpreted(parts: tuple[PathPart, ...]) -> bool:
    """Whether a rule that reads readings under its own conditions (a clock under load) may weigh it."""
    return any(rule.reads_volatile and any(p.match(parts) is not None for p in rule.patterns)
               for rule in default_catalog().rules)


def _moved(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, (int, float)):
        return value * 2 + 7
    if isinstance(value, str):
        return value + "-moved"
    return [*value, "moved"] if isinstance(value, list) else value


def _every_reading_moved() -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    before = _base()
    after = copy.deepcopy(before)
    table = fact_table()
    moved = []
    for parts, value in list(_leaves(before["probes"], ("probes",))):
        if table.reading(parts) and not _interpreted(parts):
            target = after
            for key in parts[:-1]:
                target = target[key]
            target[parts[-1]] = _moved(value)
            moved.append(format_path(parts))
    return before, after, moved


def test_no_reading_ranks_as_a_cause_even_with_all() -> None:
    before, after, moved = _every_reading_moved()
    assert NODE0 in moved and "probes.system.data.uptime_s" in moved and len(moved) > 20
    diff = diff_snapshots(Snapshot(before), Snapshot(after))
    assert diff.changes == []
    for include in (False, True):
        result = explain(diff, include_volatile=include)
        assert result.explanations == [], [e.to_json() for e in result.explanations]
    report = explain(diff, include_volatile=True).to_json()
    assert {row["path"] for row in report["readings"]} >= set(moved)
    assert {row["path"] for row in report["changes"]} >= set(moved)  # --all still shows them
    assert all(row["title"].endswith(": a reading") for row in report["readings"])
    assert not check_against(Snapshot(before), Snapshot(after), min_confidence=0.0).drift


def test_a_reading_and_a_setting_rank_the_setting_alone() -> None:
    before, after, _ = _every_reading_moved()
    after["probes"]["env"]["data"]["vars"]["NCCL_P2P_DISABLE"] = "1"
    result = explain(diff_snapshots(Snapshot(before), Snapshot(after)))
    assert [e.evidence for e in result.explanations] == [("probes.env.data.vars.NCCL_P2P_DISABLE",)]
    assert check_against(Snapshot(before), Snapshot(after)).drift


def test_a_reboot_alone_is_context_not_a_cause() -> None:
    before = _base()
    after = copy.deepcopy(before)
    after["probes"]["system"]["data"]["boot_id"] = "3f1d6a0e-7c55-4b7e-9d8e-5a2f0c9b1e44"
    after["probes"]["system"]["data"]["uptime_s"] = 120
    result = explain(diff_snapshots(Snapshot(before), Snapshot(after)))
    assert result.rebooted and result.explanations == []
    assert [n.rule for n in result.notes] == ["rebooted"]
    assert not check_against(Snapshot(before), Snapshot(after)).drift


def test_a_reading_weighed_under_load_is_shown_but_never_fails_check() -> None:
    pair = DATA / "pairs" / "gpu-clock-under-load"
    a, b = (Snapshot(json.loads((pair / name).read_text("utf-8"))) for name in ("a.json", "b.json"))
    result = explain(diff_snapshots(a, b))
    # Shown as a note (context), never ranked: a reading is never a cause, whatever rule names it.
    assert result.explanations == []
    assert [e.rule for e in result.notes] == ["gpu-clock-under-load"]
    assert not check_against(a, b).drift


def test_diff_json_carries_readings(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    before, after, moved = _every_reading_moved()
    (tmp_path / "a.json").write_text(json.dumps(before), "utf-8")
    (tmp_path / "b.json").write_text(json.dumps(after), "utf-8")
    done = cli("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    report = json.loads(done.stdout)
    assert report["explanations"] == [] and {row["path"] for row in report["readings"]} >= set(moved)
    text = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json")).stdout
    assert "Readings that moved on their own (context, never causes):" in text
    assert "No relevant difference explains a performance shift." in text
