"""What each fact of a snapshot is: its category, its class (identity, setting or reading), its root (the
underlying change it shares with other facts) and its primacy among them, from one table (`facts.yaml`).
The class is the one mechanism that says what is never a cause: a reading, or a record of the taking.

The table uses the path language of the rule catalog over whole change paths, so reading a diff needs
no probe code: the diff of two snapshots taken elsewhere (another version, another machine) is
classified from data alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.paths import PathPart
from driftcheck.snapshot.patterns import PathPattern, compile_pattern
from driftcheck.snapshot.shipped_yaml import shipped_yaml
from driftcheck.snapshot.vocabulary import CATEGORIES

# What a fact is: which thing (identity), what was set (setting), what moves on its own (reading), or how
# the snapshot was taken and driftcheck's own bookkeeping (record: the label, the --deep flag, hash-cache
# counters, the shell driftcheck ran in).
FACT_CLASSES = ("identity", "setting", "reading", "record")
# The classes that are never a cause.
NEVER_CAUSES = ("reading", "record")
# A path no entry classes counts as a setting: a new key is a candidate cause until the table says otherwise.
DEFAULT_CLASS = "setting"

# Which fact of a root speaks for it when several causes share the root, first to last: the installable
# unit (a package's version), then what a person chose (the driver, a variable). A fact with no primacy
# comes after both.
PRIMACY = ("installable", "chosen")

# `{name}` in a root: the segment the entry's pattern captured as `<name>`.
_ROOT_FIELD = re.compile(r"\{([a-z_]+)\}")

# Where the document's own members (host, label, tool, origin) are listed: their paths do not start with
# `probes.<name>`.
_DOCUMENT = ""


@dataclass(frozen=True)
class Fact:
    """One entry of the table: the paths it covers, their category, class, root and primacy (each if it says)."""

    patterns: tuple[PathPattern, ...]
    category: str | None
    fact_class: str | None
    root: str | None = None
    primacy: str | None = None
    # The member of the probe's data that says whether these facts were taken at all (`deep`).
    taken_with: str | None = None

    def matches(self, parts: Sequence[PathPart]) -> bool:
        return self.captures(parts) is not None

    def captures(self, parts: Sequence[PathPart]) -> dict[str, str] | None:
        """The segments the first matching pattern captured, None when no pattern matches."""
        return next((found for pattern in self.patterns if (found := pattern.match(parts)) is not None), None)

    def root_at(self, parts: Sequence[PathPart]) -> str | None:
        """This entry's root written out for `parts` (`var:{var}` -> `var:NCCL_DEBUG`), None when it has no
        root or does not match."""
        captured = self.captures(parts) if self.root is not None else None
        if self.root is None or captured is None:
            return None
        return _ROOT_FIELD.sub(lambda field: captured[field.group(1)], self.root)


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

    def never_cause(self, parts: Sequence[PathPart]) -> bool:
        """Whether a change at `parts` is never a cause: a reading, or a record of how the snapshot was taken."""
        return self.fact_class(parts) in NEVER_CAUSES

    def root(self, parts: Sequence[PathPart]) -> str | None:
        """The underlying change a change at `parts` belongs to (first entry with a `root` that matches),
        written out with its captures; None when it stands alone.

        Roots name a kind before the first colon: `package:<name>` (a distribution), `file:<dist>:<path>`
        (a file the kernels probe hashed), `library:<name>`, `var:<name>`, ...; explain resolves the first
        two through its relevance table (a library wheel's root is its library)."""
        return next((root for fact in self._facts(parts) if (root := fact.root_at(parts)) is not None), None)

    def primacy(self, parts: Sequence[PathPart]) -> int:
        """Where a change at `parts` stands among the causes of its root (0 first): its entry's place in
        PRIMACY, after them all when no entry gives one."""
        declared = next((fact.primacy for fact in self._facts(parts)
                         if fact.primacy is not None and fact.matches(parts)), None)
        return PRIMACY.index(declared) if declared is not None else len(PRIMACY)

    def taken_with(self, parts: Sequence[PathPart]) -> str | None:
        """The flag of its probe's data (`deep`) without which the fact at `parts` is not taken, None when
        the probe always takes it (first entry with a `taken_with` that matches)."""
        return next((fact.taken_with for fact in self._facts(parts)
                     if fact.taken_with is not None and fact.matches(parts)), None)

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
    root, primacy, taken_with = entry.get("root"), entry.get("primacy"), entry.get("taken_with")
    if primacy is not None and primacy not in PRIMACY:
        raise RuleCatalogError(f"{where}: unknown primacy {primacy!r} (one of {', '.join(PRIMACY)})")
    if category is None and fact_class is None and root is None and primacy is None and taken_with is None:
        raise RuleCatalogError(f"{where}: says neither a category nor a class, a root, a primacy or taken_with")
    sources = entry["match"] if isinstance(entry["match"], list) else [entry["match"]]
    patterns = tuple(compile_pattern(name_catalog().expand(str(source))) for source in sources)
    probes = {_probe_of(pattern, where) for pattern in patterns}
    if len(probes) != 1:
        raise RuleCatalogError(f"{where}: one entry speaks of one probe, not {sorted(probes)}")
    if root is not None:
        _check_root(str(root), patterns, where)
    return probes.pop(), Fact(patterns, category, fact_class, None if root is None else str(root), primacy,
                              None if taken_with is None else str(taken_with))


def _check_root(root: str, patterns: tuple[PathPattern, ...], where: str) -> None:
    """A root names a kind (`kind:...`) and fills its fields only from segments every pattern captures."""
    if not root.partition(":")[0]:
        raise RuleCatalogError(f"{where}: a root starts with its kind (`var:{{var}}`, `driver`), not {root!r}")
    for pattern in patterns:
        captured = {segment.capture for segment in pattern.segments if segment.capture}
        missing = sorted(set(_ROOT_FIELD.findall(root)) - captured)
        if missing:
            raise RuleCatalogError(f"{where}: root {root!r} uses {', '.join(missing)}, which "
                                   f"{pattern.source} does not capture")


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
    return parse_facts(shipped_yaml("driftcheck.snapshot", "facts.yaml"))


def category_of(parts: Sequence[PathPart]) -> str:
    """The category of a change at `parts`, from the shipped table."""
    return fact_table().category(parts)


def is_reading(parts: Sequence[PathPart]) -> bool:
    """Whether a change at `parts` is never a cause (a reading or a record of the taking), from the shipped
    table."""
    return fact_table().never_cause(parts)
