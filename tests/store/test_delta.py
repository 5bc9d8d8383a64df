"""Deltas between snapshot documents: exact round trips, including the JSON types Python conflates."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from driftcheck.snapshot.canonical import canonical_bytes
from driftcheck.store.delta import apply_delta, delta_tree, pack, unpack

PAIRS = Path(__file__).resolve().parents[1] / "data" / "pairs"


def _round_trip(base: dict[str, Any], target: dict[str, Any]) -> dict[str, Any]:
    delta = json.loads(unpack(pack(delta_tree(base, target))))  # as stored and read back
    return apply_delta(copy.deepcopy(base), delta)


@pytest.mark.parametrize("case", sorted(p.name for p in PAIRS.iterdir() if (p / "a.json").is_file()))
def test_recorded_pairs_round_trip_exactly(case: str) -> None:
    a = json.loads((PAIRS / case / "a.json").read_text("utf-8"))
    b = json.loads((PAIRS / case / "b.json").read_text("utf-8"))
    assert canonical_bytes(_round_trip(a, b)) == canonical_bytes(b)
    assert canonical_bytes(_round_trip(b, a)) == canonical_bytes(a)


def test_types_python_calls_equal_stay_apart() -> None:
    base = {"a": 1, "b": True, "c": [1, 2], "d": {"x": 0}, "e": None}
    target = {"a": 1.0, "b": 1, "c": [1.0, 2], "d": {"x": False}, "e": None}
    assert canonical_bytes(_round_trip(base, target)) == canonical_bytes(target)


def test_removed_added_and_replaced_subtrees() -> None:
    base = {"keep": {"same": 1}, "gone": {"deep": [1]}, "turns": {"into": "scalar"}, "was": "scalar", "n": None}
    target = {"keep": {"same": 1}, "turns": "scalar", "was": {"now": {"a": "mapping"}}, "new": {}, "n": {}}
    delta = delta_tree(base, target)
    assert "keep" not in delta  # unchanged subtrees cost nothing
    assert delta["gone"] == []
    assert canonical_bytes(_round_trip(base, target)) == canonical_bytes(target)


def test_equal_documents_have_an_empty_delta() -> None:
    doc = {"probes": {"env": {"data": {"vars": {"A": "1"}}}}}
    assert delta_tree(doc, copy.deepcopy(doc)) == {}


def test_a_delta_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        apply_delta({"a": "scalar"}, {"a": {"b": [1]}})
    with pytest.raises(ValueError, match="malformed"):
        apply_delta({"a": 1}, {"a": [1, 2]})
