"""One interpreter change is one cause: a venv rebuilt at the same path on another Python.

When A and B name the same interpreter path and its Python version changed (3.11 -> 3.12), everything that
holds that version moves with it: the prefix and sys.path, every distribution's location, the wheel tags and
build ids of compiled distributions (cp311 -> cp312), the compiled files the kernels probe hashed, a library
path under site-packages. Those are the evidence of the one change, not causes of their own. A change is
taken as such evidence only when the records show it: its value with B's version written as A's is A's
value, or it belongs to a distribution at the same version whose wheel tags differ only by that version.
A version change of a distribution stays a cause of its own.

The fix names no path that now runs B's Python: A's interpreter is gone from it, so what restores A is
rebuilding its environment beside it with A's Python, verified (`driftcheck restore`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from driftcheck.analysis.diff import Change, SnapshotDiff
from driftcheck.analysis.explain.lookup import dist_of, package_record, probe_data
from driftcheck.analysis.explain.model import Explanation
from driftcheck.analysis.explain.package_source import interpreter_of
from driftcheck.analysis.restore_sources import restore_command
from driftcheck.snapshot.model import Snapshot

_VERSION_RULE = "python-version"
_VERSION_PATH = "probes.python.data.version"


def _version(snapshot: Snapshot) -> str | None:
    value = probe_data(snapshot, "python").get("version")
    return value if isinstance(value, str) and value else None


def _spellings(version: str) -> list[str]:
    """How a Python version shows in paths and tags, longest first: 3.11.7, python3.11, cpython-311, cp311."""
    major, minor = (version.split(".") + ["0"])[:2]
    return [version, f"python{major}.{minor}", f"python{major}{minor}", f"cpython-{major}{minor}",
            f"cp{major}{minor}", f"{major}.{minor}"]


class Rebuild:
    """The Python version change at one interpreter path between A and B, and what it explains."""

    def __init__(self, a: Snapshot, b: Snapshot, versions: tuple[str, str], path: str) -> None:
        self.a, self.b = a, b
        self.before, self.after = versions
        self.path = path
        self._pairs = list(zip(_spellings(self.after), _spellings(self.before), strict=True))

    def as_on_a(self, value: object) -> object:
        """`value` with B's Python version written as A's (strings, and the strings of a list)."""
        if isinstance(value, list):
            return [self.as_on_a(item) for item in value]
        if not isinstance(value, str):
            return value
        for b_text, a_text in self._pairs:
            value = value.replace(b_text, a_text)
        return value

    def rebuilt(self, name: str) -> bool:
        """Whether distribution `name` is the same version on both sides, its wheel tags A's but for the Python
        version: the same release, rebuilt for B's Python."""
        a, b = package_record(self.a, name), package_record(self.b, name)
        return bool(a) and bool(b) and a.get("version") == b.get("version") and \
            self.as_on_a(b.get("wheel_tags")) == a.get("wheel_tags")

    def explains(self, change: Change) -> bool:
        """Whether `change` is evidence of this rebuild rather than a change of its own."""
        parts = [str(part) for part in change.parts]
        if parts[:3] == ["probes", "python", "data"]:
            return True
        if change.kind == "changed" and self.as_on_a(change.after) == change.before and change.after != change.before:
            return True
        if parts[:4] == ["probes", "packages", "data", "packages"] and len(parts) > 5:
            return self.rebuilt(parts[4])
        if parts[:4] == ["probes", "kernels", "data", "files"] and len(parts) > 4:
            dist, _ = dist_of(parts[4])
            return bool(package_record(self.a, dist) or package_record(self.b, dist)) and self.rebuilt(dist)
        return False

    def fix(self) -> str:
        """What restores A: its environment rebuilt with its Python beside the path that now runs B's."""
        return (f"A's Python {self.before} is no longer at {self.path} (B's {self.after} is): rebuild A's "
                f"environment beside it with Python {self.before}, verified against A: {restore_command(self.a)}")


def rebuild_of(diff: SnapshotDiff) -> Rebuild | None:
    """The Python version change at one interpreter path between A and B, or None."""
    a, b = diff.a, diff.b
    before, after = _version(a), _version(b)
    path_a, path_b = interpreter_of(a), interpreter_of(b)
    if before is None or after is None or before == after or path_a is None or path_a != path_b:
        return None
    return Rebuild(a, b, (before, after), path_a)


def one_interpreter_cause(causes: Sequence[Explanation], diff: SnapshotDiff) -> list[Explanation]:
    """`causes` with every cause whose evidence is all a rebuild on another Python at the same path folded
    into the Python version cause, which then names the path and the fix that restores A."""
    rebuild = rebuild_of(diff)
    version_cause = next((cause for cause in causes if cause.rule == _VERSION_RULE
                          and _VERSION_PATH in cause.evidence), None)
    if rebuild is None or version_cause is None:
        return list(causes)
    by_path = {change.path: change for change in diff.changes}
    folded = [cause for cause in causes if cause is not version_cause and cause.evidence
              and all(path in by_path and rebuild.explains(by_path[path]) for path in cause.evidence)]
    rebuilt = sorted({str(by_path[path].parts[4]) for cause in folded for path in cause.evidence
                      if by_path[path].parts[:4] == ("probes", "packages", "data", "packages")})
    title = f"{version_cause.title} at the same path {rebuild.path}"
    if rebuilt:
        title += f": the environment was rebuilt on it ({len(rebuilt)} distributions rebuilt for {rebuild.after})"
    members = [version_cause, *folded]
    merged = replace(version_cause, title=title, fix=rebuild.fix(), fix_kind="advice",
                     evidence=tuple(sorted({path for cause in members for path in cause.evidence})),
                     confidence=max(cause.confidence for cause in members),
                     relevance=max(cause.relevance for cause in members),
                     magnitude=max(cause.magnitude for cause in members),
                     merged=tuple(sorted({cause.rule for cause in folded} - {version_cause.rule})))
    taken = {id(cause) for cause in members}
    return [merged, *(cause for cause in causes if id(cause) not in taken)]

