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
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.paths import PathPart
from driftcheck.snapshot.patterns import (
    PathPattern,
    compile_pattern,
    first_match_past,
    patterns_that_may_match,
    shape_key,
)
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

    @cached_property
    def gives(self) -> tuple[str, ...]:
        """The fields this entry says something of (`category`, `fact_class`, `root`, ...)."""
        return tuple(name for name in _FIELDS if getattr(self, name) is not None)

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
        return _written(self.root, captured)


def _written(root: str, captured: dict[str, str]) -> str:
    """`root` with its `{name}` fields filled from the segments a pattern `captured`."""
    return _ROOT_FIELD.sub(lambda field: captured[field.group(1)], root)


# How many paths a table keeps what it found for. A diff asks the same few questions (category, class,
# root, primacy, taken_with) of each change path several times; past this many paths the kept answers are
# dropped and found again, so a diff of ten million facts does not hold ten million answers.
_KEPT_PATHS = 262_144
# What an entry may say of a path, by the name of its field.
_FIELDS = ("category", "fact_class", "root", "primacy", "taken_with")


@dataclass(frozen=True)
class _Found:
    """What the table says of one path: each field from the first entry that gives it and matches."""

    category: str | None = None
    fact_class: str | None = None
    root: str | None = None
    primacy: str | None = None
    taken_with: str | None = None


# An entry that may match a path of some shape, with those of its patterns that may.
_Candidate = tuple[Fact, tuple[PathPattern, ...]]


@dataclass(frozen=True)
class FactTable:
    """The loaded table, indexed by probe name (the second segment of every pattern)."""

    by_probe: dict[str, tuple[Fact, ...]]
    # What each path asked about was found to be (see `_found`), at most _KEPT_PATHS of them.
    _kept: dict[tuple[PathPart, ...], _Found] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False)
    # The entries that may match a path, by its length and first parts (see `_candidates`).
    _shapes: dict[tuple[int, tuple[str, ...]], tuple[_Candidate, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def category(self, parts: Sequence[PathPart]) -> str:
        """The category of a change at `parts` (a whole change path: `probes.<name>.data...`)."""
        return self._found(parts).category or "other"

    def declared_class(self, parts: Sequence[PathPart]) -> str | None:
        """The class the table gives `parts` (first entry with a `class` that matches), None when none does."""
        return self._found(parts).fact_class

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
        return self._found(parts).root

    def primacy(self, parts: Sequence[PathPart]) -> int:
        """Where a change at `parts` stands among the causes of its root (0 first): its entry's place in
        PRIMACY, after them all when no entry gives one."""
        declared = self._found(parts).primacy
        return PRIMACY.index(declared) if declared is not None else len(PRIMACY)

    def taken_with(self, parts: Sequence[PathPart]) -> str | None:
        """The flag of its probe's data (`deep`) without which the fact at `parts` is not taken, None when
        the probe always takes it (first entry with a `taken_with` that matches)."""
        return self._found(parts).taken_with

    def _found(self, parts: Sequence[PathPart]) -> _Found:
        """Everything the table says of `parts`, from one walk of its entries, kept for the next question:
        a diff of a million facts asked each path up to six times, each time matching the entries anew."""
        key = tuple(parts)
        found = self._kept.get(key)
        if found is None:
            if len(self._kept) >= _KEPT_PATHS:
                self._kept.clear()
            found = self._kept[key] = _walk(self._candidates(key), key)
        return found

    def _candidates(self, parts: tuple[PathPart, ...]) -> tuple[_Candidate, ...]:
        """The entries that may match `parts`, each with its patterns that may, in table order: worked out once
        per length and first parts (a million variables share `probes.env.data.vars`), as `Catalog.candidates`
        does, so a path is then matched only past those parts (`first_match_past`)."""
        key = shape_key(parts)
        found = self._shapes.get(key)
        if found is None:
            if len(self._shapes) >= _KEPT_PATHS:
                self._shapes.clear()
            found = self._shapes[key] = tuple(
                (fact, patterns) for fact in self._facts(parts)
                if (patterns := patterns_that_may_match(fact.patterns, parts)))
        return found

    def _facts(self, parts: Sequence[PathPart]) -> tuple[Fact, ...]:
        if len(parts) >= 2 and parts[0] == "probes":
            return self.by_probe.get(str(parts[1]), ())
        return self.by_probe.get(_DOCUMENT, ()) if parts and parts[0] != "probes" else ()


def _walk(candidates: tuple[_Candidate, ...], parts: tuple[PathPart, ...]) -> _Found:
    """The first category, class, root, primacy and taken_with of the entries among `candidates` that match
    `parts`, in table order (each entry matched once, past the parts its candidacy already checked)."""
    found: dict[str, str | None] = dict.fromkeys(_FIELDS)
    for fact, patterns in candidates:
        wanted = [name for name in fact.gives if found[name] is None]
        if not wanted:
            continue
        captured = first_match_past(patterns, parts)
        if captured is None:
            continue
        for name in wanted:
            found[name] = _written(str(fact.root), captured) if name == "root" else getattr(fact, name)
    return _Found(**found)


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
