"""The names driftcheck knows by heart, from one table (`catalog.yaml`): each idea stated once.

- the Python packages that decide inference speed, in their relevance groups, each with what it is used
  for (its compiled files hashed, shown in the summary, confirmed unchanged by `explain`, the shared
  objects it ships);
- the environment variable families that move performance;
- the variables the shell sets anew in every session (never a cause).

The probes, the summary, the rule catalog, package relevance and the facts table all read this module;
`expand` writes the `{shell_noise}` and `{env_families:<category>}` stand-ins of their YAML files.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.shipped_yaml import shipped_yaml
from driftcheck.snapshot.vocabulary import AFFECTS, CATEGORIES

_GLOB_CHARS = "*?["
_PLACEHOLDER = re.compile(r"\{(shell_noise|env_families:([a-z_]+))\}")


def _is_glob(name: str) -> bool:
    return any(ch in name for ch in _GLOB_CHARS)


class _Names:
    """Names and globs, matched fast: a set lookup first (a snapshot asks for hundreds of packages)."""

    def __init__(self, names: Iterable[str]) -> None:
        listed = list(names)
        self.exact = frozenset(name for name in listed if not _is_glob(name))
        self.globs = tuple(name for name in listed if _is_glob(name))

    def __contains__(self, name: str) -> bool:
        return name in self.exact or any(fnmatch.fnmatchcase(name, glob) for glob in self.globs)


@dataclass(frozen=True)
class PackageEntry:
    """One package name (or fnmatch glob) of a group, and what driftcheck uses it for."""

    name: str
    kernels: bool = False
    summary: bool = False
    watched: bool = False
    maps: tuple[str, ...] = ()

    def matches(self, normalized: str) -> bool:
        """Whether this entry names the distribution `normalized` (PEP 503 name)."""
        return fnmatch.fnmatchcase(normalized, self.name)


@dataclass(frozen=True)
class PackageGroup:
    """A curated relevance group: its prior, why it matters, and its package entries in order."""

    id: str
    prior: float
    why: str
    packages: tuple[PackageEntry, ...]
    library: str | None = None
    affects: str | None = None

    def matches(self, normalized: str) -> bool:
        """Whether one of the group's package entries names the distribution `normalized`."""
        return normalized in self._names

    @cached_property
    def _names(self) -> _Names:
        return _Names(entry.name for entry in self.packages)


@dataclass(frozen=True)
class EnvFamily:
    """A family of environment variables that moves performance: fnmatch globs or exact names."""

    name: str
    vars: tuple[str, ...]
    category: str = "env_var_other"
    # Read only by GPU software (NCCL, CUDA, cuDNN): it can matter only where there is a GPU.
    gpu_only: bool = False

    def matches(self, variable: str) -> bool:
        """Whether `variable` belongs to this family."""
        return any(fnmatch.fnmatchcase(variable, glob) for glob in self.vars)


@dataclass(frozen=True)
class NameCatalog:
    """The loaded `catalog.yaml`."""

    groups: tuple[PackageGroup, ...]
    driver_maps: tuple[str, ...]
    env_families: tuple[EnvFamily, ...]
    shell_noise: tuple[str, ...]

    def entries(self) -> tuple[PackageEntry, ...]:
        """Every package entry, group by group, in file order."""
        return tuple(entry for group in self.groups for entry in group.packages)

    def is_kernel_package(self, normalized: str) -> bool:
        """Whether every compiled file of distribution `normalized` is hashed on each snapshot."""
        return normalized in self._kernels

    @cached_property
    def _kernels(self) -> _Names:
        return _Names(entry.name for entry in self.entries() if entry.kernels)

    def summary_packages(self) -> tuple[str, ...]:
        """The packages the summary shows, in the order a reader scans them."""
        return tuple(entry.name for entry in self.entries() if entry.summary)

    def watched_packages(self) -> tuple[str, ...]:
        """The packages `explain` confirms unchanged by name."""
        return tuple(entry.name for entry in self.entries() if entry.watched)

    def mapped_libraries(self) -> tuple[str, ...]:
        """Substrings of the shared objects whose exact build decides speed (wheels', then the driver's)."""
        names = [lib for entry in self.entries() for lib in entry.maps] + list(self.driver_maps)
        return tuple(dict.fromkeys(names))

    def env_family_of(self, variable: str) -> str | None:
        """The name of the family `variable` belongs to, or None."""
        return next((family.name for family in self.env_families if family.matches(variable)), None)

    def gpu_only_variable(self, variable: str) -> bool:
        """Whether `variable` belongs to a family only GPU software reads (`gpu_only`)."""
        return self._gpu_only_globs.match(variable) is not None

    @cached_property
    def _gpu_only_globs(self) -> re.Pattern[str]:
        """The globs of every `gpu_only` family as one regex of fnmatch's own translation (what
        `fnmatch.fnmatchcase` matches with): explain asks this of every changed variable, and trying family
        by family, glob by glob, was a tenth of explaining a large diff of variables."""
        globs = [glob for family in self.env_families if family.gpu_only for glob in family.vars]
        return re.compile("|".join(f"(?:{fnmatch.translate(glob)})" for glob in globs) or r"(?!)")

    def env_globs(self, category: str | None = None) -> tuple[str, ...]:
        """The globs of every family (of `category`, when given), in order."""
        return tuple(glob for family in self.env_families
                     if category is None or family.category == category for glob in family.vars)

    def expand(self, text: str) -> str:
        """`text` with `{shell_noise}` and `{env_families:<category>}` written out as `a|b|...`."""
        def replace(found: re.Match[str]) -> str:
            if found.group(1) == "shell_noise":
                return "|".join(self.shell_noise)
            category = found.group(2)
            globs = self.env_globs(category)
            if not globs:
                raise RuleCatalogError(f"{found.group(0)}: no environment family of category {category!r}")
            return "|".join(globs)

        return _PLACEHOLDER.sub(replace, text)


def _names(value: Any, where: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [] if value is None else [value]
    if not all(isinstance(item, str) and item for item in items):
        raise RuleCatalogError(f"{where}: expected a list of names")
    return tuple(items)


def _entry(value: Any, where: str) -> PackageEntry:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise RuleCatalogError(f"{where}: a package entry is a mapping with a `name`")
    name = value["name"]
    unknown = set(value) - {"name", "kernels", "summary", "watched", "maps"}
    if unknown:
        raise RuleCatalogError(f"{where} ({name}): unknown key(s) {', '.join(sorted(unknown))}")
    entry = PackageEntry(name, bool(value.get("kernels")), bool(value.get("summary")), bool(value.get("watched")),
                         _names(value.get("maps"), f"{where} ({name}) maps"))
    if _is_glob(name) and (entry.summary or entry.watched):
        raise RuleCatalogError(f"{where} ({name}): `summary` and `watched` name one package, not a glob")
    return entry


def _group(value: Any, index: int) -> PackageGroup:
    where = f"catalog.yaml package group #{index}"
    if not isinstance(value, dict) or not value.get("id") or not value.get("why") or not value.get("packages"):
        raise RuleCatalogError(f"{where}: needs `id`, `why` and `packages`")
    prior = float(value.get("prior", -1))
    if not 0.0 <= prior <= 1.0:
        raise RuleCatalogError(f"{where}: prior must be within 0..1")
    if value.get("affects") is not None and value["affects"] not in AFFECTS:
        raise RuleCatalogError(f"{where}: affects must be one of {', '.join(AFFECTS)}")
    packages = tuple(_entry(item, f"{where} package #{i}") for i, item in enumerate(value["packages"]))
    return PackageGroup(str(value["id"]), prior, str(value["why"]), packages,
                        str(value["library"]) if value.get("library") else None,
                        str(value["affects"]) if value.get("affects") else None)


def _family(value: Any, index: int) -> EnvFamily:
    where = f"catalog.yaml env family #{index}"
    if not isinstance(value, dict) or not value.get("name"):
        raise RuleCatalogError(f"{where}: needs a `name` and `vars`")
    category = str(value.get("category", "env_var_other"))
    if category not in CATEGORIES:
        raise RuleCatalogError(f"{where}: unknown category {category!r}")
    variables = _names(value.get("vars"), where)
    if not variables:
        raise RuleCatalogError(f"{where}: needs a `name` and `vars`")
    return EnvFamily(str(value["name"]), variables, category, bool(value.get("gpu_only", False)))


def parse_catalog(document: Any) -> NameCatalog:
    """Build the catalog from the parsed YAML document."""
    if not isinstance(document, dict) or not isinstance(document.get("package_groups"), list):
        raise RuleCatalogError("catalog.yaml: expected a mapping with a `package_groups` list")
    groups = tuple(_group(entry, i) for i, entry in enumerate(document["package_groups"]))
    ids = [group.id for group in groups]
    if len(set(ids)) != len(ids):
        raise RuleCatalogError("catalog.yaml: package group ids repeat")
    driver = document.get("driver_libraries") or {}
    families = tuple(_family(entry, i) for i, entry in enumerate(document.get("env_families") or []))
    return NameCatalog(groups, _names(driver.get("maps") if isinstance(driver, dict) else None,
                                      "catalog.yaml driver_libraries"),
                       families, _names(document.get("shell_noise"), "catalog.yaml shell_noise"))


@lru_cache(maxsize=1)
def name_catalog() -> NameCatalog:
    """The catalog shipped with driftcheck (`driftcheck/snapshot/catalog.yaml`)."""
    return parse_catalog(shipped_yaml("driftcheck.snapshot", "catalog.yaml"))
