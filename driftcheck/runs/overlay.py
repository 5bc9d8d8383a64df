"""Package changes between two Python environments, and scratch overlays that put some of B's packages on A.

The distributions of each interpreter come from that interpreter itself (`importlib.metadata`, stdlib
only). An overlay is a scratch directory holding exact copies of B's installed files of the chosen
distributions (per their RECORD, the files pip installed: the same binaries, no download, no build), put
first on A's `PYTHONPATH`, so A imports B's version of those and its own of everything else. Neither
environment is touched; the overlays live in one scratch directory removed when the bisection ends,
whatever happens. What an overlay cannot do is said: a distribution B removed cannot be taken away from
A by adding files, and files outside site-packages (console scripts, data) are not copied.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import OptionError

# Run by the target interpreter: every distribution with its version, site directory and files.
_LIST_SCRIPT = r"""
import json, importlib.metadata as md
out = {}
for dist in md.distributions():
    name = (dist.metadata["Name"] or "").lower().replace("_", "-")
    if not name or name in out:
        continue
    base = str(dist.locate_file(""))
    out[name] = {"version": dist.version, "base": base, "files": [str(f) for f in (dist.files or [])]}
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Distribution:
    """One installed distribution: its version, the directory its RECORD paths are relative to, its files."""

    name: str
    version: str
    base: str
    files: tuple[str, ...]


def distributions(python: str) -> dict[str, Distribution]:
    """The distributions `python` sees; OptionError when it cannot tell."""
    try:
        done = subprocess.run([python, "-I", "-c", _LIST_SCRIPT], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OptionError("python", python, f"cannot list its packages: {exc}") from None
    if done.returncode != 0:
        raise OptionError("python", python, f"cannot list its packages: {done.stderr.strip()[-300:]}")
    data = json.loads(done.stdout)
    return {name: Distribution(name, d["version"], d["base"], tuple(d["files"])) for name, d in data.items()}


@dataclass(frozen=True)
class PackageChange:
    """A distribution whose version differs between A and B (None: not installed on that side)."""

    name: str
    before: str | None
    after: str | None

    def describe(self) -> str:
        """`name 1.0 → 1.1` (or `(none)` for a side without it)."""
        return f"{self.name} {self.before or '(none)'} → {self.after or '(none)'}"


def package_changes(a: Mapping[str, Distribution], b: Mapping[str, Distribution]) -> list[PackageChange]:
    """Every distribution whose version differs, sorted by name."""
    names = sorted(set(a) | set(b))
    return [PackageChange(n, a[n].version if n in a else None, b[n].version if n in b else None)
            for n in names if (a[n].version if n in a else None) != (b[n].version if n in b else None)]


class Overlays:
    """Scratch overlays of B's distributions under one directory, one per set of changes, made once."""

    def __init__(self, root: Path, b: Mapping[str, Distribution]) -> None:
        self.root = root
        self.b = b

    def path(self, changes: Iterable[PackageChange]) -> Path:
        """The overlay holding B's files of `changes` (made on first use; cached by what it holds)."""
        chosen = sorted(changes, key=lambda c: c.name)
        removed = [c.name for c in chosen if c.after is None]
        if removed:
            raise OptionError("b_python", None, f"{', '.join(removed)}: removed in B, which an overlay on A "
                                                "cannot reproduce")
        key = hashlib.sha256("\n".join(f"{c.name}=={c.after}" for c in chosen).encode()).hexdigest()[:16]
        target = self.root / key
        if not target.exists():
            building = self.root / f".{key}.partial"
            shutil.rmtree(building, ignore_errors=True)
            building.mkdir(parents=True)
            for change in chosen:
                _copy_distribution(self.b[change.name], building)
            building.rename(target)
        return target


def _copy_distribution(dist: Distribution, target: Path) -> None:
    base = Path(dist.base).resolve()
    for relative in dist.files:
        source = (base / relative).resolve()
        if not source.is_file() or base not in source.parents or source.suffix == ".pyc":
            continue  # outside site-packages (scripts, data) or a cache: not part of what is imported
        destination = target / source.relative_to(base)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
