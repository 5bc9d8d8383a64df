"""The path language of the fact table, the rule catalog and policies: dotted patterns over change paths.

A pattern is dot-separated segments over the parts of a change path: `name` a literal segment (fnmatch
globs and `a|b` alternatives allowed), `*` any one segment, `**` any number of segments, `<var>` any one
segment captured as `var`, `<var:GLOB>` a captured segment that must match GLOB. Matching works on the
parts, not the printed path, so keys holding dots or slashes (`"zope.interface"`, `"flashinfer:lib/x.so"`)
are one segment.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.paths import PathPart

_CAPTURE = re.compile(r"^<([a-z_]+)(?::(.+))?>$")




_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Segment:
    """One segment of a path pattern."""

    globs: tuple[str, ...] = ()  # empty: any segment
    capture: str | None = None
    many: bool = False  # `**`
    # `globs` made ready once: explain matches every change against every rule, a million times on a
    # large diff. Literal names are a set lookup; the wildcard globs one regex (`_wildcards`).
    _literals: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_literals", frozenset(glob for glob in self.globs if not _GLOB_CHARS & set(glob)))

    @cached_property
    def _wildcards(self) -> re.Pattern[str] | None:
        """The wildcard globs as one regex of fnmatch's own translation (what `fnmatch.fnmatchcase` matches
        with), so a segment accepts exactly what fnmatchcase accepts. Compiled when the segment first meets a
        name that is none of its literals: in an explain most never do, and each compile was ~0.3 ms."""
        wildcard = [glob for glob in self.globs if glob not in self._literals]
        return re.compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob in wildcard)) if wildcard else None

    def accepts(self, part: PathPart) -> bool:
        if not self.globs:
            return True
        text = str(part)
        return text in self._literals or (self._wildcards is not None and self._wildcards.match(text) is not None)


@dataclass(frozen=True)
class PathPattern:
    """A compiled `match` pattern; `match(parts)` gives the captures or None."""

    source: str
    segments: tuple[Segment, ...]
    # The number of parts a path needs: exactly that without `**`, at least that with one. Most paths of a
    # large diff fail most patterns on their length alone, before any segment is tried.
    _length: int = field(init=False, repr=False, compare=False)
    _open_ended: bool = field(init=False, repr=False, compare=False)
    # Whether the only `**` is the last segment (`probes.env.data.vars.**`): then the parts before it decide,
    # and whatever follows them matches, with no search of where the `**` ends.
    _open_tail: bool = field(init=False, repr=False, compare=False)
    # Where each captured segment stands, with its name (`match_past` fills those it does not try).
    _captures: tuple[tuple[int, str], ...] = field(init=False, repr=False, compare=False)
    # The segments before a tail `**` (all of them without one): what `match` walks part by part.
    _leading: tuple[Segment, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_length", sum(1 for segment in self.segments if not segment.many))
        object.__setattr__(self, "_open_ended", any(segment.many for segment in self.segments))
        object.__setattr__(self, "_open_tail", self._open_ended and self._length == len(self.segments) - 1
                           and self.segments[-1].many)
        object.__setattr__(self, "_captures", tuple((i, segment.capture) for i, segment in enumerate(self.segments)
                                                    if segment.capture))
        object.__setattr__(self, "_leading", self.segments[:self._length])

    def match(self, parts: Sequence[PathPart]) -> dict[str, str] | None:
        if len(parts) < self._length or (len(parts) > self._length and not self._open_ended):
            return None
        if self._open_ended and not self._open_tail:
            return _match(self.segments, tuple(parts), {})
        # Without `**`, or with it only at the end, each part meets its own segment until the segments end:
        # one loop, no recursion (see `covers`).
        captured: dict[str, str] = {}
        for segment, part in zip(self._leading, parts, strict=False):
            if not segment.accepts(part):
                return None
            if segment.capture:
                captured[segment.capture] = str(part)
        return captured

    def match_past(self, parts: Sequence[PathPart], depth: int) -> dict[str, str] | None:
        """`match(parts)` for a path this pattern `may_match` at `depth`: its first `depth` parts were accepted
        there (once per table key, for every path of that shape), so only the parts after them are tried.
        A pattern with a `**` before its end is matched whole."""
        if self._open_ended and not self._open_tail:
            return self.match(parts)
        limit = min(depth, self._length)
        captured = {name: str(parts[i]) for i, name in self._captures if i < limit}
        for i in range(depth, self._length):
            segment = self.segments[i]
            if not segment.accepts(parts[i]):
                return None
            if segment.capture:
                captured[segment.capture] = str(parts[i])
        return captured

    def covers(self, parts: Sequence[PathPart]) -> bool:
        """Whether `parts` matches, or is an ancestor of a path that could match (a whole GPU removed
        covers its clocks)."""
        if not self._open_ended:
            # Without `**` each part meets its own segment: the first that refuses ends it, no recursion
            # (explain asks this of every usual suspect for every change).
            return len(parts) <= self._length and all(
                segment.accepts(part) for segment, part in zip(self.segments, parts, strict=False))
        return _covers(self.segments, tuple(parts))

    def covers_any(self, tree: PathTree) -> bool:
        """Whether the pattern covers one of the paths of `tree` (`covers` of each, answered in one walk)."""
        return _covers_any(self.segments, tree)

    def may_match(self, parts: Sequence[PathPart], depth: int) -> bool:
        """Whether a path as long as `parts`, with the same first `depth` parts, could match: False only where
        none can, so a table of rules keyed by those parts (`Catalog.candidates`) skips no rule that matches."""
        if len(parts) < self._length or (len(parts) > self._length and not self._open_ended):
            return False
        for segment, part in zip(self.segments, parts[:depth], strict=False):
            if segment.many:  # the parts after it may sit anywhere: nothing more is certain
                return True
            if not segment.accepts(part):
                return False
        return True


# How many leading parts of a path key a table of what may match it (`shape_key`): `probes.env.data.vars` is shared
# by every environment variable; one more would key each variable on its own.
SHAPE_DEPTH = 4


def shape_key(parts: Sequence[PathPart]) -> tuple[int, tuple[str, ...]]:
    """A path's length and first SHAPE_DEPTH parts: every path of one key can be matched by the same patterns
    (`patterns_that_may_match`), worked out once per key instead of once per path."""
    return len(parts), tuple(str(part) for part in parts[:SHAPE_DEPTH])


def patterns_that_may_match(patterns: Iterable[PathPattern], parts: Sequence[PathPart]) -> tuple[PathPattern, ...]:
    """Those of `patterns` that may match a path of `parts`'s shape (`shape_key`), in order."""
    return tuple(pattern for pattern in patterns if pattern.may_match(parts, SHAPE_DEPTH))


def first_match_past(patterns: Iterable[PathPattern], parts: Sequence[PathPart]) -> dict[str, str] | None:
    """The captures of the first of `patterns` that matches `parts`, where `patterns` came from
    `patterns_that_may_match` for its shape: each is tried only past the parts its shape already checked."""
    return next((found for pattern in patterns if (found := pattern.match_past(parts, SHAPE_DEPTH)) is not None),
                None)


class PathTree:
    """Paths (a diff's change paths) as a tree of their parts: a pattern asked whether it covers any of them
    walks the parts it accepts once, instead of every path from its root (a million paths share
    `probes.env.data.vars`, which a pattern of the gpu probe refuses once, at `env`)."""

    def __init__(self, paths: Iterable[Sequence[PathPart]] = ()) -> None:
        self.ends_here = False  # a path ends at this node
        self.children: dict[PathPart, PathTree] = {}
        for parts in paths:
            self.add(parts)

    def add(self, parts: Sequence[PathPart]) -> None:
        """Hold the path `parts`."""
        node = self
        for part in parts:
            child = node.children.get(part)
            if child is None:
                child = node.children[part] = PathTree()
            node = child
        node.ends_here = True


def _covers_any(segments: tuple[Segment, ...], node: PathTree) -> bool:
    """`_covers(segments, path)` for some path of the tree under `node` (its parts from `node` on)."""
    if node.ends_here:
        return True
    if not segments:
        return False
    head, rest = segments[0], segments[1:]
    if head.many:
        return _covers_any(rest, node) or any(_covers_any(segments, child) for child in node.children.values())
    return any(head.accepts(part) and _covers_any(rest, child) for part, child in node.children.items())


def _covers(segments: tuple[Segment, ...], parts: tuple[PathPart, ...]) -> bool:
    if not parts:
        return True
    if not segments:
        return False
    head, rest = segments[0], segments[1:]
    if head.many:
        return _covers(rest, parts) or _covers(segments, parts[1:])
    return head.accepts(parts[0]) and _covers(rest, parts[1:])


def _match(segments: tuple[Segment, ...], parts: tuple[PathPart, ...], captured: dict[str, str]) \
        -> dict[str, str] | None:
    if not segments:
        return captured if not parts else None
    head, rest = segments[0], segments[1:]
    if head.many:
        for skip in range(len(parts) + 1):
            found = _match(rest, parts[skip:], captured)
            if found is not None:
                return found
        return None
    if not parts or not head.accepts(parts[0]):
        return None
    if head.capture:
        captured = {**captured, head.capture: str(parts[0])}
    return _match(rest, parts[1:], captured)


def compile_pattern(source: str) -> PathPattern:
    """Compile a dotted path pattern (see the module docstring)."""
    if not isinstance(source, str) or not source.strip():
        raise RuleCatalogError(f"empty path pattern {source!r}")
    raws = source.split(".")
    if "" in raws:
        raise RuleCatalogError(f"path pattern {source!r} has an empty segment")
    return PathPattern(source, tuple(_segment(raw) for raw in raws))


@lru_cache(maxsize=4096)
def _segment(raw: str) -> Segment:
    """The segment written `raw` (not empty). Segments are values, and the tables' ~500 patterns are ~2,900
    segments of ~400 kinds (`probes`, `data`, `*`...): each kind is made once (its set of literals, its regex),
    where making each one was a tenth of every `explain`."""
    if raw == "**":
        return Segment(many=True)
    if raw == "*":
        return Segment()
    capture = _CAPTURE.match(raw)
    if capture:
        glob = capture.group(2)
        return Segment(tuple(glob.split("|")) if glob else (), capture.group(1))
    return Segment(tuple(raw.split("|")))
