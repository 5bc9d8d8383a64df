"""Whether a rebuilt environment is A's: its packages probe against A's, distribution by distribution.

"Same" means the same version and the same build identity (`build_id`, the digest over the RECORD hashes of
the compiled files; both null for a pure-Python distribution), from the same origin (a VCS install at the
same commit, a direct URL install from the same URL). Anything else is said per package with why: not
installed (the installer's reason), another version, compiled files that hash differently (a local rebuild,
another wheel build), a wheel for another platform (its tags differ). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at

SAME_TEXT = "same versions, same binaries"


@dataclass(frozen=True)
class PackageCheck:
    """One distribution of A in the rebuilt environment: `reproduced`, else `why` (one sentence per reason)."""

    key: str
    name: str
    version: str | None
    reproduced: bool
    why: tuple[str, ...] = ()

    def to_json(self) -> JSONObject:
        """The check as `restore --format json` prints it."""
        return {"name": self.name, "version": self.version, "reproduced": self.reproduced, "why": list(self.why)}


@dataclass(frozen=True)
class RestoreCheck:
    """Every distribution of A checked in the rebuilt environment, and those that came in beside them."""

    packages: tuple[PackageCheck, ...]
    extra: tuple[str, ...]
    python_a: str | None = None
    python_here: str | None = None

    @property
    def same_python(self) -> bool:
        """Whether the rebuilt environment runs A's Python version (unknown on either side counts as the same:
        nothing to compare)."""
        return self.python_a is None or self.python_here is None or self.python_a == self.python_here

    @property
    def same(self) -> bool:
        """Whether every distribution of A was reproduced, nothing else came in, on A's Python version."""
        return self.same_python and not self.extra and all(package.reproduced for package in self.packages)

    @property
    def not_reproduced(self) -> tuple[PackageCheck, ...]:
        """The distributions of A that the rebuilt environment does not hold as A had them."""
        return tuple(package for package in self.packages if not package.reproduced)

    def verdict(self) -> str:
        """"same versions, same binaries", or how many of A's distributions differ."""
        if self.same:
            count = len(self.packages)
            return f"{SAME_TEXT} ({count} distribution{'' if count == 1 else 's'})"
        parts = [] if self.same_python else [f"Python {self.python_here} instead of A's {self.python_a}"]
        if self.not_reproduced:
            parts.append(f"{len(self.not_reproduced)} of {len(self.packages)} distributions not reproduced")
        if self.extra:
            parts.append(f"{len(self.extra)} not on A ({', '.join(self.extra)})")
        return "; ".join(parts)

    def to_json(self) -> JSONObject:
        """The verification as `restore --format json` prints it."""
        return {"same": self.same, "verdict": self.verdict(), "extra": list(self.extra),
                "python": {"a": self.python_a, "here": self.python_here},
                "packages": [package.to_json() for package in self.packages]}


def check_restore(a_packages: JSONValue, new_packages: JSONValue, failed: Mapping[str, str],
                  pythons: tuple[str | None, str | None] = (None, None)) -> RestoreCheck:
    """Each distribution of A (`packages` of A's packages probe) against the rebuilt environment's; `failed`
    maps a distribution key to the installer's reason when it could not be installed; `pythons` are the
    Python versions of A and of the rebuilt environment."""
    ours, theirs = object_or_empty(a_packages), object_or_empty(new_packages)
    checks = tuple(_check(key, object_or_empty(record), object_or_empty(theirs.get(key)), failed.get(key))
                   for key, record in sorted(ours.items()))
    return RestoreCheck(checks, tuple(sorted(set(theirs) - set(ours))), *pythons)


def _check(key: str, a: JSONObject, new: JSONObject, failure: str | None) -> PackageCheck:
    version = a.get("version")
    name, shown = str(a.get("name") or key), version if isinstance(version, str) else None
    if not new:
        why = f"not installed: {failure}" if failure else "not installed"
        return PackageCheck(key, name, shown, False, (why,))
    reasons = []
    if new.get("version") != version:
        reasons.append(f"version {new.get('version')} instead of {version}")
    elif a.get("build_id") != new.get("build_id"):
        reasons.append(_binary_reason(a, new))
    origin = _origin_reason(a, new)
    if origin:
        reasons.append(origin)
    return PackageCheck(key, name, shown, not reasons, tuple(reasons))


def _binary_reason(a: JSONObject, new: JSONObject) -> str:
    """Why the compiled files differ, as far as the records tell: another platform's wheel, a local build."""
    tags_a, tags_new = a.get("wheel_tags"), new.get("wheel_tags")
    if tags_a != tags_new:
        return f"a wheel for another platform: {_tags(tags_new)} instead of A's {_tags(tags_a)}"
    if a.get("direct_url") is not None:
        return "a local build whose compiled files hash differently from A's"
    return "the same version, but compiled files that hash differently from A's (another build of that release)"


def _tags(tags: JSONValue) -> str:
    return ", ".join(str(tag) for tag in tags) if isinstance(tags, list) and tags else "no wheel tags"


def _origin_reason(a: JSONObject, new: JSONObject) -> str | None:
    """Where the two installs came from, when that differs: a VCS commit, a direct URL, an index release."""
    url_a, url_new = value_at(a, "direct_url", "url"), value_at(new, "direct_url", "url")
    commit_a = value_at(a, "direct_url", "vcs_info", "commit_id")
    commit_new = value_at(new, "direct_url", "vcs_info", "commit_id")
    if commit_a != commit_new:
        return f"commit {commit_new} instead of A's {commit_a}"
    # uv 0.13.9 records an archive's URL with its `#sha256=` fragment, pip without: the place is the URL without it.
    if _without_fragment(url_a) != _without_fragment(url_new):
        return f"installed from {url_new or 'the index'} instead of A's {url_a or 'index'}"
    hash_a, hash_new = (value_at(record, "direct_url", "archive_info", "hashes", "sha256") for record in (a, new))
    if hash_a and hash_new and hash_a != hash_new:
        return f"another archive at that URL: sha256 {str(hash_new)[:16]}… instead of A's {str(hash_a)[:16]}…"
    if a.get("editable") != new.get("editable"):
        return "editable on A, not here" if a.get("editable") else "editable here, not on A"
    return None


def _without_fragment(url: JSONValue) -> JSONValue:
    """A URL without its `#...` fragment (a hash or an egg name: not where it points)."""
    return url.split("#", 1)[0] if isinstance(url, str) else url
