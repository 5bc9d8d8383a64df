"""The rule catalog of `explain`: loaded from `rules.yaml` (package data), matched against change paths.

A rule's `match` is a path pattern over the parts of a change path, dot-separated:
`name` a literal segment (fnmatch globs and `a|b` alternatives allowed), `*` any one segment,
`**` any number of segments, `<var>` any one segment captured as `var`, `<var:GLOB>` a captured
segment that must match GLOB. Matching works on the parts, not the printed path, so keys holding
dots or slashes (`"zope.interface"`, `"flashinfer:lib/x.so"`) are one segment. When a probe renames
a key, the fix is one line of the YAML. `{env_families:<category>}` in a pattern stands for the
environment families of the catalog of names (snapshot/catalog.yaml), as `a|b|...` alternatives.

The packages `explain` confirms unchanged by name are the catalog's `watched` packages.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
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
from driftcheck.snapshot.vocabulary import AFFECTS, CATEGORIES

KINDS = ("added", "removed", "changed")
DIRECTIONS = ("slower", "faster", "either")
@dataclass(frozen=True)
class Rule:
    """One entry of the catalog: what it matches, how likely it moves performance, how to undo it."""

    id: str
    category: str
    patterns: tuple[PathPattern, ...]
    kinds: tuple[str, ...] = KINDS
    when: tuple[tuple[str, Any], ...] = ()
    prior: float = 0.5
    direction: str = "slower"
    affects: str = "software"
    title: str = "{path}: {before} -> {after}"
    fix: str = ""
    reboot_reset: bool = False
    # A trap: a difference that looks like drift and is not (idle PCIe gen, idle clocks). Shown as a note.
    not_drift: bool = False
    # Dropped from the explanation altogether (volatile readings); the change itself stays in `changes`.
    ignore: bool = False
    size: str = "relative"  # relative | fixed
    revert: str | None = None  # what --confirm can toggle per process: "env"
    # Every change this rule claims is one cause (a module swap: one unloaded, another loaded).
    merge: bool = False
    # A knob only GPU software reads (which GPUs are visible): weighed low where neither side has a GPU.
    gpu_only: bool = False
    # The catch-all rule: keeps the category the probe gave the change.
    inherit_category: bool = False
    # Interprets an instantaneous reading that its probe marks volatile (a current clock, a temperature,
    # the PCIe generation, the boot id): explain weighs such changes even when a plain diff hides them.
    reads_volatile: bool = False
    # Facts the fix sets, relative to the changed fact's parent (`power.limit_w` of a GPU): when they are
    # equal on both sides the fix would change nothing, so the rule does not rank (it is shown as a note).
    restores: tuple[str, ...] = ()
    # The context of the facts a reboot resets (the boot id changed): shown beside them, never ranked above.
    context: bool = False

    def match(self, parts: Sequence[PathPart], kind: str) -> dict[str, str] | None:
        if kind not in self.kinds:
            return None
        for pattern in self.patterns:
            found = pattern.match(parts)
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class Suspect:
    """A usual suspect: when none of its paths changed, `explain` lists it as checked and unchanged."""

    category: str
    title: str
    probes: tuple[str, ...]
    patterns: tuple[PathPattern, ...]
    # What `{n}` in the title counts (nodes matching this pattern in A), e.g. the packages.
    count: PathPattern | None = None
    # The facts the title names (a governor, a frequency): each must be held on both sides for the claim.
    needs: tuple[PathPattern, ...] = ()


# A rule that may claim changes of one shape, with those of its patterns that may match them.
Candidate = tuple[Rule, tuple[PathPattern, ...]]


@dataclass(frozen=True)
class Catalog:
    """The loaded rules, usual suspects and watched packages."""

    rules: tuple[Rule, ...]
    suspects: tuple[Suspect, ...] = ()
    packages: tuple[str, ...] = ()
    bench_affects: tuple[tuple[str, str], ...] = field(default=())
    # The rules that may claim a change, with their patterns that may, by the change's kind, length and first
    # parts (see `candidates`).
    _by_shape: dict[tuple[str, tuple[int, tuple[str, ...]]], tuple[Candidate, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def rule(self, rule_id: str) -> Rule:
        return next(rule for rule in self.rules if rule.id == rule_id)

    def candidates(self, parts: Sequence[PathPart], kind: str) -> tuple[Candidate, ...]:
        """The rules that may claim a change of `kind` at `parts`, in catalog order, each with those of its
        patterns that may match: every rule that matches it is among them. A diff of a million environment
        variables asks this a million times with the same first parts (`probes.env.data.vars`); the answer is
        worked out once per kind, length and those parts, and `first_match_past` then tries only the parts after
        them."""
        key = (kind, shape_key(parts))
        found = self._by_shape.get(key)
        if found is None:
            found = self._by_shape[key] = tuple(
                (rule, patterns) for rule in self.rules
                if kind in rule.kinds and (patterns := patterns_that_may_match(rule.patterns, parts)))
        return found

    def rules_for(self, parts: Sequence[PathPart], kind: str) -> tuple[Rule, ...]:
        """The rules that may claim a change of `kind` at `parts`, in catalog order (see `candidates`)."""
        return tuple(rule for rule, _ in self.candidates(parts, kind))

    def first_match(self, parts: Sequence[PathPart], kind: str) -> tuple[Rule, dict[str, str]] | None:
        for rule, patterns in self.candidates(parts, kind):
            found = first_match_past(patterns, parts)
            if found is not None:
                return rule, found
        return None

    def bench_class(self, name: str) -> str:
        """What a benchmark result measures (compute, memory, communication, host), from its name."""
        lowered = name.lower()
        return next((cls for glob, cls in self.bench_affects if fnmatch.fnmatchcase(lowered, glob)), "compute")


def _require(entry: dict[str, Any], key: str, where: str) -> Any:
    if key not in entry:
        raise RuleCatalogError(f"{where}: missing `{key}`")
    return entry[key]


def _when(value: Any, where: str) -> tuple[tuple[str, Any], ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str):
            out.append((item, None))
        elif isinstance(item, dict) and len(item) == 1:
            (name, arg), = item.items()
            out.append((str(name), arg))
        else:
            raise RuleCatalogError(f"{where}: `when` items are names or one-key mappings")
    return tuple(out)


def _patterns(value: Any, where: str) -> tuple[PathPattern, ...]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise RuleCatalogError(f"{where}: `match` is empty")
    return tuple(_compile(str(item)) for item in items)


def _compile(source: str) -> PathPattern:
    """A path pattern, with the catalog's stand-ins (`{shell_noise}`, `{env_families:...}`) written out."""
    return compile_pattern(name_catalog().expand(source))


def _rule(entry: Any, index: int) -> Rule:
    if not isinstance(entry, dict):
        raise RuleCatalogError(f"rule #{index}: not a mapping")
    rule_id = str(_require(entry, "id", f"rule #{index}"))
    where = f"rule {rule_id}"
    category = str(_require(entry, "category", where))
    if category not in CATEGORIES:
        raise RuleCatalogError(f"{where}: unknown category {category!r}")
    kinds = tuple(entry.get("kinds", KINDS))
    if set(kinds) - set(KINDS):
        raise RuleCatalogError(f"{where}: kinds must be among {', '.join(KINDS)}")
    direction = str(entry.get("direction", "slower"))
    affects = str(entry.get("affects", "software"))
    if direction not in DIRECTIONS or affects not in AFFECTS:
        raise RuleCatalogError(f"{where}: direction must be one of {DIRECTIONS}, affects one of {AFFECTS}")
    prior = float(entry.get("prior", 0.5))
    if not 0.0 <= prior <= 1.0:
        raise RuleCatalogError(f"{where}: prior must be within 0..1")
    ignore = bool(entry.get("ignore", False))
    if not ignore and ("title" not in entry or "fix" not in entry):
        raise RuleCatalogError(f"{where}: needs a `title` and a `fix`")
    return Rule(id=rule_id, category=category, patterns=_patterns(_require(entry, "match", where), where),
                kinds=kinds, when=_when(entry.get("when"), where), prior=prior, direction=direction,
                affects=affects, title=str(entry.get("title", "")), fix=str(entry.get("fix", "")),
                reboot_reset=bool(entry.get("reboot_reset", False)), not_drift=bool(entry.get("not_drift", False)),
                ignore=ignore, size=str(entry.get("size", "relative")), revert=entry.get("revert"),
                merge=bool(entry.get("merge", False)), inherit_category=bool(entry.get("inherit_category", False)),
                reads_volatile=bool(entry.get("reads_volatile", False)),
                restores=_strings(entry.get("restores")), context=bool(entry.get("context", False)),
                gpu_only=bool(entry.get("gpu_only", False)))


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(str(item) for item in (value if isinstance(value, list) else [value]))


def _suspect(entry: Any, index: int) -> Suspect:
    if not isinstance(entry, dict):
        raise RuleCatalogError(f"suspect #{index}: not a mapping")
    where = f"suspect #{index}"
    category = str(_require(entry, "category", where))
    if category not in CATEGORIES:
        raise RuleCatalogError(f"{where}: unknown category {category!r}")
    probes = entry.get("probes") or []
    count = _compile(str(entry["count"])) if entry.get("count") else None
    needs = _patterns(entry["needs"], where) if entry.get("needs") else ()
    return Suspect(category, str(_require(entry, "title", where)), tuple(str(p) for p in probes),
                   _patterns(_require(entry, "match", where), where), count, needs)


def _with_blocks(rules: tuple[Rule, ...], document: dict[str, Any], source: str) -> tuple[Rule, ...]:
    """`rules` with the entries of every `<topic>_rules:` block of the file, in file order, before the catch-all.

    A feature appends its rules as one block at the end of the file instead of editing the shared list;
    they still come before the catch-all rule, which would otherwise claim every change first.
    """
    blocks = [(key, block) for key, block in document.items() if str(key).endswith("_rules")]
    extra: list[Rule] = []
    for key, block in blocks:
        if not isinstance(block, list):
            raise RuleCatalogError(f"{source}: `{key}` is a list of rules")
        extra += [_rule(entry, len(rules) + len(extra) + i) for i, entry in enumerate(block)]
    cut = next((i for i, rule in enumerate(rules) if rule.inherit_category), len(rules))
    return rules[:cut] + tuple(extra) + rules[cut:]


def parse_catalog(document: Any, source: str = "rules.yaml") -> Catalog:
    """Build a Catalog from the parsed YAML document."""
    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        raise RuleCatalogError(f"{source}: expected a mapping with a `rules` list")
    rules = _with_blocks(tuple(_rule(entry, i) for i, entry in enumerate(document["rules"])), document, source)
    ids = [rule.id for rule in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RuleCatalogError(f"{source}: duplicate rule id(s) {', '.join(duplicates)}")
    suspects = tuple(_suspect(entry, i) for i, entry in enumerate(document.get("suspects") or []))
    packages = name_catalog().watched_packages()
    bench = tuple((str(glob).lower(), str(cls)) for glob, cls in (document.get("bench_affects") or {}).items())
    return Catalog(rules, suspects, packages, bench)


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The catalog shipped with driftcheck (`driftcheck/analysis/rules.yaml`)."""
    return parse_catalog(shipped_yaml("driftcheck.analysis", "rules.yaml"))
