"""The shortcuts of rule matching skip only what cannot match: the same rules claim the same changes, and
the same usual suspects are voided.

A large diff asks every rule about every change; segments now test their globs as one regex, patterns
reject a path on its length first, and the catalog keys the rules that may claim a change by its first
parts (`Catalog.rules_for`). Each is checked here against the plain way, over the real pairs of
tests/data/pairs and over globs fnmatch itself judges.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.rules import KINDS, default_catalog
from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.model import read_snapshot_file
from driftcheck.snapshot.patterns import PathTree, Segment, _covers, _match, compile_pattern

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"

GLOBS = ["NCCL_*", "nccl_*", "CUDA_VISIBLE_DEVICES", "a.b", "x+y", "gpu[0-3]", "gpu[!0]", "?", "*", "[*]",
         "torch*cu12?", "lib/*.so", "zope.interface", "(x)", "$HOME", "a\\b"]
NAMES = ["NCCL_P2P_DISABLE", "nccl_debug", "CUDA_VISIBLE_DEVICES", "a.b", "aXb", "x+y", "xxy", "gpu0", "gpu4",
         "gpu", "g", "", "*", "torch-2.4+cu121", "torchcu124", "lib/x.so", "lib/y/z.so", "zope.interface",
         "(x)", "$HOME", "a\\b", "0", "None"]


@pytest.mark.parametrize("globs", [(g,) for g in GLOBS] + [("NCCL_*", "CUDA_VISIBLE_DEVICES"),
                                                             ("a.b", "gpu[0-3]", "*.so"), ("x+y", "?")])
def test_a_segment_accepts_exactly_what_fnmatchcase_accepts(globs: tuple[str, ...]) -> None:
    segment = Segment(globs)
    for name in NAMES:
        assert segment.accepts(name) == any(fnmatch.fnmatchcase(name, g) for g in globs), (globs, name)
    assert segment.accepts(0) == any(fnmatch.fnmatchcase("0", g) for g in globs)  # parts may be list indices


@pytest.mark.parametrize("source", ["probes.env.data.vars.<var:NCCL_*>", "probes.**.power_limit_w", "**",
                                    "probes.gpu.data.gpus.*.clocks.<which>", "a.**.b.**.c", "probes.*"])
def test_the_length_and_segment_shortcuts_change_no_answer(source: str) -> None:
    pattern = compile_pattern(source)
    paths = [("probes",), ("probes", "env"), ("probes", "env", "data", "vars", "NCCL_ALGO"),
             ("probes", "env", "data", "vars", "NCCL_ALGO", "x"), ("a", "b", "c"), ("a", "x", "b", "y", "c"),
             ("probes", "gpu", "data", "gpus", "GPU-1", "clocks", "sm"), ("probes", "gpu", "power_limit_w"), (),
             ("probes", "gpu", "data"), ("probes", "gpu", "data", "gpus", "GPU-1"), ("probes", "env", "data")]
    for parts in paths:
        assert pattern.match(parts) == _match(pattern.segments, parts, {}), (source, parts)
        assert pattern.covers(parts) == _covers(pattern.segments, parts), (source, parts)


def test_a_segment_written_alike_in_two_patterns_is_made_once_and_is_what_its_text_says() -> None:
    first, second = compile_pattern("probes.env.data.vars.<var:NCCL_*|CUDA_*>"), compile_pattern("probes.*.x.**")
    assert first.segments[0] is second.segments[0]  # `probes`, made once
    assert first.segments == (Segment(("probes",)), Segment(("env",)), Segment(("data",)), Segment(("vars",)),
                              Segment(("NCCL_*", "CUDA_*"), "var"))
    assert second.segments == (Segment(("probes",)), Segment(), Segment(("x",)), Segment(many=True))
    with pytest.raises(RuleCatalogError, match="'a..b' has an empty segment"):
        compile_pattern("a..b")


def _pair_changes() -> list[tuple[tuple[object, ...], str]]:
    found = []
    for case in sorted(p for p in PAIRS.iterdir() if (p / "a.json").exists()):
        diff = diff_snapshots(read_snapshot_file(case / "a.json"), read_snapshot_file(case / "b.json"))
        found += [(tuple(c.parts), c.kind) for c in diff.changes + diff.readings + diff.unlisted]
    return found


def test_the_rules_that_may_claim_a_change_hold_every_rule_that_matches_it() -> None:
    catalog = default_catalog()
    changes = _pair_changes()
    assert len(changes) > 300  # the corpus is there
    for parts, recorded_kind in changes:
        for kind in {recorded_kind, *KINDS}:
            matching = [rule for rule in catalog.rules if rule.match(parts, kind) is not None]
            candidates = catalog.rules_for(parts, kind)
            assert [rule for rule in candidates if rule in matching] == matching, (parts, kind)
            assert catalog.first_match(parts, kind) == (
                (matching[0], matching[0].match(parts, kind)) if matching else None)


def test_covering_any_path_of_a_tree_is_covering_one_of_the_paths() -> None:
    catalog = default_catalog()
    paths = [parts for parts, _ in _pair_changes()]
    patterns = [p for suspect in catalog.suspects for p in suspect.patterns] + [
        p for rule in catalog.rules for p in rule.patterns]
    samples = [paths, paths[:40], paths[::7], [("probes",)], [()], [], [("probes", "env", "data", "vars", "X")],
               [("probes", "gpu"), ("probes", "gpu", "data", "gpus", "GPU-1", "clocks", "sm")]]
    for sample in samples:
        tree = PathTree(sample)
        for pattern in patterns:
            assert pattern.covers_any(tree) == any(pattern.covers(parts) for parts in sample), pattern.source


def test_every_pattern_of_the_catalog_matches_the_corpus_as_the_recursive_walk_does() -> None:
    catalog = default_catalog()
    patterns = [p for rule in catalog.rules for p in rule.patterns] + [
        p for suspect in catalog.suspects for p in suspect.patterns]
    for parts, _ in _pair_changes():
        for pattern in patterns:
            assert pattern.match(parts) == _match(pattern.segments, tuple(parts), {}), (pattern.source, parts)
            assert pattern.covers(parts) == _covers(pattern.segments, tuple(parts)), (pattern.source, parts)


def test_matching_past_the_shared_parts_is_matching_the_whole_path() -> None:
    """`PathPattern.match_past` (rules and facts keyed by their first four parts) answers as `match` does for
    every path the pattern may match at that depth."""
    from driftcheck.snapshot.facts import fact_table

    catalog = default_catalog()
    patterns = [p for rule in catalog.rules for p in rule.patterns] + [
        p for facts in fact_table().by_probe.values() for fact in facts for p in fact.patterns] + [
        compile_pattern(s) for s in ("a.**.b", "probes.<probe>.**", "probes.env.data.vars.<var:NCCL_*>.**", "**")]
    paths = [parts for parts, _ in _pair_changes()] + [("a", "x", "y", "b"), ("probes", "env"), ()]
    for parts in paths:
        for pattern in patterns:
            if pattern.may_match(parts, 4):
                assert pattern.match_past(parts, 4) == pattern.match(parts), (pattern.source, parts)


def test_the_fact_table_answers_as_its_entries_one_by_one() -> None:
    """One kept walk per path (`FactTable._found`) gives what asking each entry in table order gives."""
    from driftcheck.snapshot.facts import NEVER_CAUSES, PRIMACY, fact_table

    table = fact_table()
    for parts, _ in _pair_changes() + [(("probes", "env", "data", "vars", "NCCL_ALGO"), "added"), (("label",), "")]:
        facts = table._facts(parts)
        first = {name: next((getattr(f, name) for f in facts if getattr(f, name) is not None and f.matches(parts)),
                            None) for name in ("category", "fact_class", "primacy", "taken_with")}
        assert table.category(parts) == (first["category"] or "other"), parts
        assert table.declared_class(parts) == first["fact_class"], parts
        assert table.never_cause(parts) == (first["fact_class"] in NEVER_CAUSES), parts
        assert table.primacy(parts) == (PRIMACY.index(first["primacy"]) if first["primacy"] else len(PRIMACY))
        assert table.taken_with(parts) == first["taken_with"], parts
        assert table.root(parts) == next((r for f in facts if (r := f.root_at(parts)) is not None), None), parts
