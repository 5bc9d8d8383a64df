"""`diff` stays linear in the number of facts: the cyclic garbage collector, whose full scans of a growing
heap made 100,000 environment variables take 55 s and 1,000,000 never end, is paused while two snapshots
are read, diffed and explained (benchmarks/diff_scaling.py measures the time per 10,000 facts)."""

from __future__ import annotations

import copy
import gc
import json
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.snapshot.model import parse_snapshot

BASE = Path(__file__).resolve().parents[1] / "data" / "pairs" / "base.json"


def _pair(n: int) -> tuple[str, str]:
    a: dict[str, Any] = json.loads(BASE.read_text("utf-8"))
    a.pop("signature", None)
    a["probes"]["env"]["data"]["vars"] = {f"V{i:06d}": f"value-{i}" for i in range(n)}
    b = copy.deepcopy(a)
    for i in range(0, n, 10):
        b["probes"]["env"]["data"]["vars"][f"V{i:06d}"] = "other"
    return json.dumps(a), json.dumps(b)


def test_the_collector_is_off_inside_reading_diffing_and_explaining(monkeypatch: pytest.MonkeyPatch) -> None:
    import driftcheck.analysis.diff as diff_module
    import driftcheck.analysis.explain.engine as engine
    import driftcheck.snapshot.model as model

    seen: dict[str, set[bool]] = {"read": set(), "diff": set(), "explain": set()}
    for module, name, step in ((model, "_check_values", "read"), (diff_module, "_leaf_changes", "diff"),
                               (engine, "claims", "explain")):
        original = getattr(module, name)

        def spy(*args: Any, _original: Any = original, _step: str = step) -> Any:
            seen[_step].add(gc.isenabled())
            return _original(*args)

        monkeypatch.setattr(module, name, spy)
    text_a, text_b = _pair(5_000)
    a, b = parse_snapshot(text_a, "a"), parse_snapshot(text_b, "b")
    explained = explain(diff_snapshots(a, b))
    assert len(explained.diff.changes) == 500
    assert seen == {"read": {False}, "diff": {False}, "explain": {False}}
    assert gc.isenabled()  # and back on afterwards


def test_a_pause_inside_a_pause_leaves_the_outer_one_alone() -> None:
    from driftcheck.snapshot.bulk import paused_gc

    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
