"""The null corpus: pairs of an UNCHANGED machine (tests/data/null, built by its build.py). For every pair,
`check` finds no drift and `explain` ranks nothing at or above the noise floor (`DEFAULT_MIN_CONFIDENCE`,
the confidence below which a cause is shown but never fails the gate).
"""

from __future__ import annotations

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
