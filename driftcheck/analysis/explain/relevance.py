"""Package relevance: how likely a change of a Python package is to move GPU inference speed.

Curated groups from the catalog of names (`snapshot/catalog.yaml` `package_groups`: torch, NCCL, cuBLAS,
the kernel libraries, the serving engines, ...) with a prior and a sentence of why; for any other
package, structural signals the snapshot holds (scored in `relevance.yaml`): its libraries mapped by
the running server (process probe), compiled files. A pure-Python package
nothing performance-related loads ranks below all of these.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from driftcheck.analysis.explain.lookup import mapping, normalized, package_record, probe_data
from driftcheck.errors import RuleCatalogError
from driftcheck.snapshot.catalog import PackageGroup, name_catalog
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.shipped_yaml import shipped_yaml


@dataclass(frozen=True)
class Relevance:
    """How much a package matters, and why; `library` is the native library a wheel ships (NCCL)."""

    prior: float
    why: str
    group: str
    library: str | None = None
    affects: str | None = None


@dataclass(frozen=True)
class RelevanceTable:
    """The curated groups of the catalog and the structural scores of `relevance.yaml`."""

    groups: tuple[PackageGroup, ...]
    mapped: float
    compiled: float
    pure_python: float

    def group_of(self, name: str) -> PackageGroup | None:
        """The first curated group that names the package, or None."""
        key = normalized(name)
        return next((group for group in self.groups if group.matches(key)), None)

    def of(self, name: str, snapshots: tuple[Snapshot, ...] = ()) -> Relevance:
        """The relevance of package `name`, from its group or else what `snapshots` show of it."""
        group = self.group_of(name)
        if group is not None:
            return Relevance(group.prior, group.why, group.id, group.library, group.affects)
        if any(_mapped_by_a_process(snapshot, name) for snapshot in snapshots):
            return Relevance(self.mapped, "the running server process mapped its compiled libraries", "mapped")
        if any(_has_compiled_files(snapshot, name) for snapshot in snapshots):
            return Relevance(self.compiled, "it ships compiled code", "compiled")
        return Relevance(self.pure_python, "pure Python, and nothing performance-related maps it", "pure-python")

    def of_library(self, library: str) -> Relevance | None:
        """The relevance of a native library (NCCL, cuDNN) from the group of the wheel that ships it."""
        group = next((group for group in self.groups if group.library == library), None)
        return None if group is None else Relevance(group.prior, group.why, group.id, group.library, group.affects)

    def library_wheel(self, library: str, snapshot: Snapshot) -> str | None:
        """The installed wheel of `snapshot` that ships `library` (NCCL: nvidia-nccl-cu12), or None."""
        groups = [group for group in self.groups if group.library == library]
        names = sorted(mapping(probe_data(snapshot, "packages").get("packages")))
        return next((name for name in names for group in groups if group.matches(name)), None)


def _has_compiled_files(snapshot: Snapshot, name: str) -> bool:
    record = package_record(snapshot, name)
    count = record.get("compiled_files")
    return bool(record.get("build_id")) or (isinstance(count, int) and not isinstance(count, bool) and count > 0)


def _mapped_by_a_process(snapshot: Snapshot, name: str) -> bool:
    """Whether a recorded server process mapped one of the package's compiled files."""
    processes = mapping(probe_data(snapshot, "process").get("processes"))
    mapped = {path for process in processes.values() if isinstance(process, dict)
              for path in mapping(process.get("mapped_libraries"))}
    location = package_record(snapshot, name).get("location")
    if not mapped or not isinstance(location, str):
        return False
    key = normalized(name)
    # The kernels probe lists a package's compiled files relative to its install location.
    files = [str(file).partition(":")[2] for file in mapping(probe_data(snapshot, "kernels").get("files"))
             if normalized(str(file).partition(":")[0]) == key]
    if files:
        return any(f"{location.rstrip('/')}/{relpath}" in mapped for relpath in files)
    # Else the import folder named after the distribution (flash-attn -> flash_attn/) under its location.
    prefix = f"{location.rstrip('/')}/{key.replace('-', '_')}/"
    return any(path.startswith(prefix) for path in mapped)


def parse_relevance(document: Any, groups: tuple[PackageGroup, ...]) -> RelevanceTable:
    """Build the table from the parsed YAML document (structural scores) and the catalog's groups."""
    if not isinstance(document, dict):
        raise RuleCatalogError("relevance.yaml: expected a mapping with `structural` scores")
    structural = mapping(document.get("structural"))
    scores = {key: float(structural.get(key, -1)) for key in ("mapped", "compiled", "pure_python")}
    if any(not 0.0 <= value <= 1.0 for value in scores.values()):
        raise RuleCatalogError("relevance.yaml: `structural` needs mapped, compiled and pure_python within 0..1")
    floor = min((group.prior for group in groups), default=1.0)
    if scores["pure_python"] >= min(floor, scores["compiled"], scores["mapped"]):
        raise RuleCatalogError("relevance.yaml: a pure-Python package must rank below every group and signal")
    return RelevanceTable(groups, scores["mapped"], scores["compiled"], scores["pure_python"])


@lru_cache(maxsize=1)
def relevance_table() -> RelevanceTable:
    """The table shipped with driftcheck (`relevance.yaml` and the catalog's `package_groups`)."""
    return parse_relevance(shipped_yaml("driftcheck.analysis", "relevance.yaml"), name_catalog().groups)
