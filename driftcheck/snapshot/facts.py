"""What each fact of a snapshot is: its category and its class (identity, setting or reading), from one
table (`facts.yaml`). The class is the one mechanism that says what is never a cause: a reading.

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

# What a fact is: which thing (identity), what was set (setting), or what moves on its own (reading).
FACT_CLASSES = ("identity", "setting", "reading")
# A path no entry classes counts as a setting: a new key is a candidate cause until the table says otherwise.
DEFAULT_CLASS = "setting"

# Where the document's own members (host, label, tool, origin) are listed: their paths do not start with
# `probes.<name>`.
_DOCUMENT = ""


@dataclass(frozen=True)
class Fact:
    """One entry of the table: the paths it covers, their category and class (each if it says)."""

    patterns: tuple[PathPattern, ...]
    category: str | None
    fact_class: str | None

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

    def declared_class(self, parts: Sequence[PathPart]) -> str | None:
        """The class the table gives `parts` (first entry with a `class` that matches), None when none does."""
        for fact in self._facts(parts):
            if fact.fact_class is not None and fact.matches(parts):
                return fact.fact_class
        return None

    def fact_class(self, parts: Sequence[PathPart]) -> str:
        """The class of a change at `parts`: `identity`, `setting` or `reading` (a setting when unclassed)."""
        return self.declared_class(parts) or DEFAULT_CLASS

    def reading(self, parts: Sequence[PathPart]) -> bool:
        """Whether a change at `parts` is a reading: a value that moves on its own, never a cause."""
        return self.fact_class(parts) == "reading"

    def _facts(self, parts: Sequence[PathPart]) -> tuple[Fact, ...]:
        if len(parts) >= 2 and parts[0] == "probes":
            return self.by_probe.get(str(parts[1]), ())
        return self.by_probe.get(_DOCUMENT, ()) if parts and parts[0] != "probes" else ()


def _probe_of(pattern: PathPattern, where: str) -> str:
    segments = pattern.segments
    if segments and segments[0].globs and "probes" not in segments[0].globs and not segments[0].capture:
        return _DOCUMENT  # a member of the document itself (`host.name`, `label`)
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
    if "volatile" in entry:
        raise RuleCatalogError(f"{where}: `volatile` is now `class: reading`")
    fact_class = entry.get("class")
    if fact_class is not None and fact_class not in FACT_CLASSES:
        raise RuleCatalogError(f"{where}: unknown class {fact_class!r} (one of {', '.join(FACT_CLASSES)})")
    if category is None and fact_class is None:
        raise RuleCatalogError(f"{where}: says neither a category nor a class")
    sources = entry["match"] if isinstance(entry["match"], list) else [entry["match"]]
    patterns = tuple(compile_pattern(name_catalog().expand(str(source))) for source in sources)
    probes = {_probe_of(pattern, where) for pattern in patterns}
    if len(probes) != 1:
        raise RuleCatalogError(f"{where}: one entry speaks of one probe, not {sorted(probes)}")
    return probes.pop(), Fact(patterns, category, fact_class)


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


def class_of(parts: Sequence[PathPart]) -> str:
    """The class of a change at `parts` (`identity`, `setting` or `reading`), from the shipped table."""
    return fact_table().fact_class(parts)


def is_reading(parts: Sequence[PathPart]) -> bool:
    """Whether a change at `parts` is a reading (never a cause), from the shipped table."""
    return fact_table().reading(parts)
