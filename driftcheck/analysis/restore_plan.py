"""How to rebuild a snapshot's Python environment: one requirement per distribution, from where it came.

The packages probe records, per distribution, its version, its `direct_url.json` (PEP 610: a local folder, a
VCS checkout at a commit, an archive with its hash) and whether it is editable. A distribution with no
`direct_url` came from an index: pinned `name==version`, with the PyTorch index added for a CUDA/ROCm local
build (`+cu128`), and A's configured indexes (`PIP_INDEX_URL`, `UV_INDEX_URL`, ... from its env probe) unless
the user names others; a direct URL install is required as `restore_sources` spells it. Pure: a function
of the snapshot and the options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from driftcheck.analysis.explain.versions import is_pinnable, wheel_index
from driftcheck.analysis.restore_sources import (
    ARCHIVE,
    INDEX,
    UNPLANNABLE,
    VCS,
    direct_requirement,
    file_path,
)
from driftcheck.probes.redact import REDACTED_PATTERN
from driftcheck.snapshot.jsontypes import JSONObject, object_or_empty, value_at
from driftcheck.snapshot.model import Snapshot

# The variables pip and uv read their indexes from (pip: every option as PIP_<OPTION>; uv: its `[env: ...]`
# names of `uv pip install --help`, 0.13.9). Values joined by spaces hold several URLs.
_INDEX_VARIABLES = ("PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX")
_EXTRA_INDEX_VARIABLES = ("PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX")
_FIND_LINKS_VARIABLES = ("PIP_FIND_LINKS", "UV_FIND_LINKS")


@dataclass(frozen=True)
class IndexOptions:
    """Where index releases are looked for: the user's options, else what A's environment configured."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    no_index: bool = False

    def option_lines(self) -> list[str]:
        """The options as lines of a requirements file (pip's and uv's format both take them)."""
        lines = ["--no-index"] if self.no_index else []
        if self.index_url and not self.no_index:
            lines.append(f"--index-url {self.index_url}")
        lines += [f"--extra-index-url {url}" for url in self.extra_index_urls if not self.no_index]
        lines += [f"--find-links {place}" for place in self.find_links]
        return lines


@dataclass(frozen=True)
class PlannedPackage:
    """One distribution of A and how it is put back: `requirement` is its line of the requirements file (None
    when it cannot be planned, `why` says why); `source` one of index/vcs/directory/archive/unplannable."""

    key: str
    name: str
    version: str | None
    source: str
    requirement: str | None
    whence: str
    editable: bool = False
    why: str | None = None

    def to_json(self) -> JSONObject:
        """The package as `restore --format json` prints it."""
        return {"name": self.name, "version": self.version, "source": self.source, "requirement": self.requirement,
                "from": self.whence, "editable": self.editable, "why": self.why}


@dataclass(frozen=True)
class RestorePlan:
    """What rebuilding A's environment installs, from where, into which Python."""

    snapshot_id: str
    python_version: str | None
    interpreter: str | None
    packages: tuple[PlannedPackage, ...]
    indexes: IndexOptions
    notes: tuple[str, ...] = field(default=())

    @property
    def installable(self) -> tuple[PlannedPackage, ...]:
        """The packages that have a requirement line."""
        return tuple(package for package in self.packages if package.requirement is not None)

    def requirements_text(self) -> str:
        """A requirements file of A (`pip install --no-deps -r` or `uv pip install --no-deps -r` rebuilds it):
        every version pinned, every direct URL at its commit or hash, the indexes A's releases came from."""
        lines = [f"# the Python environment of snapshot {self.snapshot_id[:12]}"
                 + (f" (Python {self.python_version})" if self.python_version else ""),
                 "# install with --no-deps: every distribution of A is listed, each at A's version"]
        lines += [f"# {note}" for note in self.notes]
        lines += self.indexes.option_lines()
        lines += [package.requirement for package in self.installable if package.requirement]
        lines += [f"# not planned: {package.name} {package.version or ''}: {package.why}".replace("  ", " ")
                  for package in self.packages if package.requirement is None]
        return "\n".join(lines) + "\n"

    def to_json(self) -> JSONObject:
        """The plan as `restore --dry-run --format json` prints it."""
        return {"snapshot": self.snapshot_id, "python_version": self.python_version, "interpreter": self.interpreter,
                "indexes": self.indexes.option_lines(), "notes": list(self.notes),
                "packages": [package.to_json() for package in self.packages]}


def plan_package(key: str, record: JSONObject) -> PlannedPackage:
    """How one distribution of A is put back, from its packages-probe record."""
    name = str(record.get("name") or key)
    version = record.get("version")
    shown = version if isinstance(version, str) else None
    direct = direct_requirement(name, record.get("direct_url"))
    if direct is not None:
        source, requirement, editable = direct
        return PlannedPackage(key, name, shown, source, requirement, _whence(source, record), editable)
    if not is_pinnable(version):
        why = ("A recorded no version" if version is None else
               f"A recorded {version!r}, not a release version an index can serve, and no direct URL")
        return PlannedPackage(key, name, shown, UNPLANNABLE, None, "nowhere recorded", why=why)
    index = wheel_index(version)
    whence = f"the index {index}" if index else "the index"
    return PlannedPackage(key, name, shown, INDEX, f"{name}=={version}", whence)


def _whence(source: str, record: JSONObject) -> str:
    """Where a direct-URL distribution comes from, in words: the folder, the repository at its commit, the file."""
    direct = object_or_empty(record.get("direct_url"))
    url = str(direct.get("url") or "")
    place = file_path(url) or url
    if source == VCS:
        vcs, commit = value_at(direct, "vcs_info", "vcs") or "git", value_at(direct, "vcs_info", "commit_id")
        return f"{vcs} {url} at commit {commit}"
    if source == ARCHIVE:
        return f"the archive {place}"
    editable = " (editable)" if value_at(direct, "dir_info", "editable") else ""
    return f"the local folder {place}{editable}"


def configured_indexes(snapshot: Snapshot) -> tuple[IndexOptions, list[str]]:
    """The indexes A's environment configured for pip or uv, and notes on those that cannot be used (a value
    redacted because it held a credential)."""
    variables = object_or_empty((snapshot.probe_data("env") or {}).get("vars"))
    notes: list[str] = []

    def urls(names: Sequence[str]) -> list[str]:
        found: list[str] = []
        for variable in names:
            value = variables.get(variable)
            if not isinstance(value, str) or not value.strip():
                continue
            if REDACTED_PATTERN.search(value):
                notes.append(f"{variable} of A held a credential (redacted in the snapshot): give that index with "
                             "--index-url/--extra-index-url")
                continue
            found += [url for url in value.split() if url not in found]
        return found

    main = urls(_INDEX_VARIABLES)
    extra = urls(_EXTRA_INDEX_VARIABLES) + main[1:]
    return IndexOptions(main[0] if main else None, tuple(extra), tuple(urls(_FIND_LINKS_VARIABLES))), notes


def plan_restore(snapshot: Snapshot, given: IndexOptions | None = None) -> RestorePlan:
    """The plan that rebuilds `snapshot`'s packages: one PlannedPackage per distribution, A's Python version
    and interpreter, the indexes (the user's `given` ones, else A's configured ones) plus every extra index a
    local build needs (`+cu128`: the PyTorch index of that build)."""
    data = snapshot.probe_data("packages") or {}
    records = object_or_empty(data.get("packages"))
    packages = tuple(plan_package(key, object_or_empty(record)) for key, record in sorted(records.items()))
    configured, notes = configured_indexes(snapshot)
    chosen = given if given is not None and given != IndexOptions() else configured
    needed = [index for package in packages if package.source == INDEX
              for index in [wheel_index(package.version)] if index]
    extra = tuple(dict.fromkeys([*chosen.extra_index_urls, *needed]))
    indexes = IndexOptions(chosen.index_url, extra, chosen.find_links, chosen.no_index)
    python = snapshot.probe_data("python") or {}
    version = python.get("version")
    interpreter = data.get("interpreter") or python.get("executable")
    if not records:
        notes.append("A's snapshot holds no packages probe data: nothing to install")
    conda = object_or_empty(data.get("conda"))
    if conda:
        notes.append(f"A's interpreter is a conda environment: its {len(conda)} conda packages are not rebuilt "
                     "here, only its Python distributions (conda list --explicit on A rebuilds the rest)")
    return RestorePlan(snapshot.id, version if isinstance(version, str) else None,
                       interpreter if isinstance(interpreter, str) else None, packages, indexes, tuple(notes))
