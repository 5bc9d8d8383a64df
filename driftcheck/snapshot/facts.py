"""What each fact of a snapshot is: its category and whether it is volatile, from one table (`facts.yaml`).

The table uses the path language of the rule catalog over whole change paths, so reading a diff needs
no probe code: the diff of two snapshots taken elsewhere (another version, another machine) is
classified from data alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.paths import PathPart
from driftcheck.snapshot.patterns import PathPattern, compile_pattern
from driftcheck.snapshot.vocabulary import CATEGORIES


@dataclass(frozen=True)
class Fact:
    """One entry of the table: the paths it covers, their category (if it says) and volatility."""

    patterns: tuple[PathPattern, ...]
    category: str | None
    volatile: bool

    def matches(self, parts: Sequence[PathPart]) -> bool:
        return any(pattern.match(parts) is not None for pattern in self.patterns)


@dataclass(frozen=True)
class FactTable:
    """The loaded table, indexed by probe name (the second segment of every pattern)."""

    by_probe: dict[str, tuple[Fact, ...]]

    def category(self, parts: Sequence[PathPart]) -> str:
        """The category of a change at `parts` (a whole change path: `probes.<name>.data...`)."""
        for fact in self._facts(parts):
            if fact.category is not None and fact.matches(parts):
                return fact.category
        return "other"

    def volatile(self, parts: Sequence[PathPart]) -> bool:
        """Whether a change at `parts` is expected on every run (hidden by a plain diff)."""
        return any(fact.volatile and fact.matches(parts) for fact in self._facts(parts))

    def _facts(self, parts: Sequence[PathPart]) -> tuple[Fact, ...]:
        if len(parts) < 2 or parts[0] != "probes":
            return ()
        return self.by_probe.get(str(parts[1]), ())


def _probe_of(pattern: PathPattern, where: str) -> str:
    segments = pattern.segments
    if len(segments) < 2 or segments[0].globs != ("probes",) or len(segments[1].globs) != 1 \
            or segments[1].capture or any(ch in segments[1].globs[0] for ch in "*?["):
        raise RuleCatalogError(f"{where}: a fact pattern starts with `probes.<one probe name>`")
    return segments[1].globs[0]


def _fact(entry: Any, index: int) -> tuple[str, Fact]:
    where = f"facts.yaml entry #{index}"
    if not isinstance(entry, dict) or "match" not in entry:
        raise RuleCatalogError(f"{where}: expected a mapping with `match`")
    category = entry.get("category")
    if category is not None and category not in CATEGORIES:
        raise RuleCatalogError(f"{where}: unknown category {category!r}")
    volatile = bool(entry.get("volatile", False))
    if category is None and not volatile:
        raise RuleCatalogError(f"{where}: says neither a category nor `volatile: true`")
    sources = entry["match"] if isinstance(entry["match"], list) else [entry["match"]]
    patterns = tuple(compile_pattern(name_catalog().expand(str(source))) for source in sources)
    probes = {_probe_of(pattern, where) for pattern in patterns}
    if len(probes) != 1:
        raise RuleCatalogError(f"{where}: one entry speaks of one probe, not {sorted(probes)}")
    return probes.pop(), Fact(patterns, category, volatile)


def parse_facts(document: Any) -> FactTable:
    """Build the table from the parsed YAML document."""
    if not isinstance(document, dict) or not isinstance(document.get("facts"), list):
        raise RuleCatalogError("facts.yaml: expected a mapping with a `facts` list")
    by_probe: dict[str, list[Fact]] = {}
    for index, entry in enumerate(document["facts"]):
        probe, fact = _fact(entry, index)
        by_probe.setdefault(probe, []).append(fact)
    return FactTable({probe: tuple(facts) for probe, facts in by_probe.items()})


@lru_cache(maxsize=1)
def fact_table() -> FactTable:
    """The table shipped with driftcheck (`driftcheck/snapshot/facts.yaml`)."""
    text = resources.files("driftcheck.snapshot").joinpath("facts.yaml").read_text("utf-8")
    return parse_facts(yaml.safe_load(text))


def category_of(parts: Sequence[PathPart]) -> str:
    """The category of a change at `parts`, from the shipped table."""
    return fact_table().category(parts)


def is_volatile(parts: Sequence[PathPart]) -> bool:
    """Whether a change at `parts` is volatile, from the shipped table."""
    return fact_table().volatile(parts)
