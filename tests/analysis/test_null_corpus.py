"""The null corpus: pairs of an UNCHANGED machine (tests/data/null, built by its build.py). For every pair,
`check` finds no drift and `explain` ranks nothing at or above the noise floor (`DEFAULT_MIN_CONFIDENCE`,
the confidence below which a cause is shown but never fails the gate).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.gate import DEFAULT_MIN_CONFIDENCE, check_against
from driftcheck.snapshot.model import read_snapshot_file

NULL = Path(__file__).resolve().parent.parent / "data" / "null"
CASES = sorted(p.name for p in NULL.iterdir() if (p / "a.json").is_file() and (p / "b.json").is_file())


def test_the_corpus_has_at_least_twenty_pairs_each_with_its_source() -> None:
    assert len(CASES) >= 20, CASES
    assert all((NULL / case / "SOURCE").is_file() for case in CASES)
    assert sum(f.stat().st_size for f in NULL.rglob("*") if f.is_file()) < 3 * 1024 * 1024


@pytest.mark.parametrize("case", CASES)
def test_an_unchanged_machine_passes_check_and_explain_ranks_nothing(case: str) -> None:
    a = read_snapshot_file(NULL / case / "a.json")
    b = read_snapshot_file(NULL / case / "b.json")
    result = check_against(a, b)
    assert not result.drift, [e.title for e in result.relevant]
    ranked = explain(diff_snapshots(a, b)).explanations
    assert [e.title for e in ranked if e.confidence >= DEFAULT_MIN_CONFIDENCE] == []


def test_readings_only_and_not_taken_pairs_rank_nothing(tmp_path: Path) -> None:
    """The pairs benchmarks/null_pairs.py writes from the snapshot pair base: only readings moved, only
    records of the taking changed, or facts taken on one side only. Nothing there is a cause."""
    spec = importlib.util.spec_from_file_location("null_pairs", NULL.parent.parent.parent / "benchmarks" /
                                                  "null_pairs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folders = module.write_pairs(tmp_path)
    assert len(folders) > 50
    false_causes = []
    for folder in folders:
        a, b = read_snapshot_file(folder / "a.json"), read_snapshot_file(folder / "b.json")
        false_causes += [(folder.name, e.title) for e in explain(diff_snapshots(a, b)).explanations
                         if e.confidence >= DEFAULT_MIN_CONFIDENCE]
    assert false_causes == []
