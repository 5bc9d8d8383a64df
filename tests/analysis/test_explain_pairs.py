"""Every rule of the catalog against a snapshot pair around exactly the change it is about.

The pairs live in tests/data/pairs/<case>/ (a.json, b.json, expected.json); see the README there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.rules import default_catalog
from driftcheck.snapshot.model import read_snapshot_file

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
CASES = sorted(p.name for p in PAIRS.iterdir() if (p / "expected.json").exists())


def _explained(case: str):  # type: ignore[no-untyped-def]
    a = read_snapshot_file(PAIRS / case / "a.json")
    b = read_snapshot_file(PAIRS / case / "b.json")
    return explain(diff_snapshots(a, b))


@pytest.mark.parametrize("case", CASES)
def test_pair_top_explanation(case: str) -> None:
    expected = json.loads((PAIRS / case / "expected.json").read_text("utf-8"))
    result = _explained(case)
    rules = [e.rule for e in result.explanations]
    assert rules[: len(expected["top"])] == expected["top"], [e.to_json() for e in result.explanations]
    notes = [e.rule for e in result.notes]
    assert notes == expected["notes"]
    assert list(result.explanations[0].merged if result.explanations else ()) == expected.get("merged", [])
    if expected["top"]:
        assert result.explanations[0].category == expected["category"]
        assert result.explanations[0].fix
        assert result.explanations[0].evidence
    elif expected["notes"]:
        assert result.notes[0].category == expected["category"]
        assert not result.explanations, "a trap (idle reading) must not be ranked as a cause"
    else:
        assert not result.explanations and not result.notes


def test_every_rule_has_a_pair() -> None:
    covered = set()
    for case in CASES:
        expected = json.loads((PAIRS / case / "expected.json").read_text("utf-8"))
        covered.update(expected["top"] + expected["notes"] + expected.get("merged", []))
    rules = {rule.id for rule in default_catalog().rules if not rule.ignore}
    assert len(rules) >= 40
    assert rules - covered == set()


def test_catalog_covers_every_category() -> None:
    from driftcheck.probes.base import CATEGORIES

    assert {rule.category for rule in default_catalog().rules} == set(CATEGORIES)
