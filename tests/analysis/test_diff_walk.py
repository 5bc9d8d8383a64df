"""The structural diff's walk finds exactly the leaves a full deepdiff finds (lists cut at the list)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deepdiff import DeepDiff

from driftcheck.analysis.diff import _leaf_changes

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
CASES = sorted(p.name for p in PAIRS.iterdir() if (p / "expected.json").exists())


def _deepdiff_paths(before: Any, after: Any) -> set[tuple[Any, ...]]:
    tree = DeepDiff(before, after, view="tree", verbose_level=2)
    paths = set()
    for levels in tree.values():
        for level in levels:
            parts = tuple(level.path(output_format="list"))
            cut = next((i for i, part in enumerate(parts) if isinstance(part, int)), None)
            paths.add(parts[:cut] if cut is not None else parts)
    return paths


@pytest.mark.parametrize("case", CASES)
def test_walk_matches_deepdiff_on_every_pair(case: str) -> None:
    a = json.loads((PAIRS / case / "a.json").read_text("utf-8"))["probes"]
    b = json.loads((PAIRS / case / "b.json").read_text("utf-8"))["probes"]
    assert {parts for parts, _, _ in _leaf_changes(a, b)} == _deepdiff_paths(a, b)


@pytest.mark.parametrize("before, after", [
    ({"x": 1}, {"x": 1.0}), ({"x": 1}, {"x": True}), ({"x": [1, 2]}, {"x": [1, 3]}),
    ({"x": {"y": None}}, {"x": {"y": {}}}), ({"x": {}}, {"x": {"y": 1}}), ({"x": [{"a": 1}]}, {"x": [{"a": 2}]}),
    ({"x": "1"}, {"x": 1}), ({"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1}}}),
])
def test_walk_matches_deepdiff_on_type_changes(before: Any, after: Any) -> None:
    assert {parts for parts, _, _ in _leaf_changes(before, after)} == _deepdiff_paths(before, after)
