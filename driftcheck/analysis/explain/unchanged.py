"""The usual suspects that were checked and did not change: the list that ends a debugging session."""

from __future__ import annotations

from typing import Any

from driftcheck.analysis.diff import Change, SnapshotDiff
from driftcheck.analysis.explain.lookup import dist_of, probe_data
from driftcheck.analysis.partial import ComparedSnapshot
from driftcheck.analysis.rules import Catalog
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart
from driftcheck.snapshot.patterns import PathPattern, PathTree, Segment


def _count_nodes(data: Any, pattern: PathPattern, prefix: tuple[PathPart, ...]) -> int:
    """How many nodes under `prefix` match `pattern` (a fixed-depth pattern: its segments bound the walk)."""
    segments = pattern.segments
    if any(segment.many for segment in segments) or len(segments) < len(prefix) \
            or any(not segment.accepts(part) for segment, part in zip(segments, prefix, strict=False)):
        return 0
    # Level by level, keeping only the keys each segment accepts: no full path is matched per node.
    level = [data]
    for segment in segments[len(prefix):]:
        level = [value for node in level if isinstance(node, dict)
                 for key, value in node.items() if segment.accepts(key)]
    return len(level)


def _overlaps(parts: tuple[PathPart, ...], target: tuple[PathPart, ...]) -> bool:
    """Whether a change at `parts` touches `target`: the same path, an ancestor or a descendant of it."""
    common = min(len(parts), len(target))
    return parts[:common] == target[:common]


def _touches_binaries(change: Change, dist: str) -> bool:
    """Whether a change of the kernels probe may concern the compiled files of `dist`: one of its files,
    its JIT cache, or a whole `files` / `modified_in_place` table (not the probe's hash cache)."""
    if change.probe != "kernels":
        return False
    if len(change.parts) <= 4:
        return any(_overlaps(change.parts, ("probes", "kernels", "data", table))
                   for table in ("files", "modified_in_place"))
    return change.parts[3] != "hash_cache" and dist_of(str(change.parts[4]))[0] == dist


def _packages_unchanged(diff: SnapshotDiff, catalog: Catalog, changed: list[Change]) -> list[dict[str, str]]:
    before = probe_data(diff.a, "packages").get("packages") or {}
    after = probe_data(diff.b, "packages").get("packages") or {}
    kernels_ok = diff.a.probe_data("kernels") is not None and diff.b.probe_data("kernels") is not None
    files = probe_data(diff.a, "kernels").get("files") or {}
    modified = {dist for side in (diff.a, diff.b)
                for dist in probe_data(side, "kernels").get("modified_in_place") or {}}
    by_dist: dict[str, int] = {}
    for key in files:
        dist = dist_of(key)[0]
        by_dist[dist] = by_dist.get(dist, 0) + 1
    package_changes = [c for c in changed if c.probe == "packages"]
    kernel_changes = [c for c in changed if c.probe == "kernels"]
    out = []
    for name in catalog.packages:
        old, new = before.get(name), after.get(name)
        if not isinstance(old, dict) or not isinstance(new, dict) or old.get("version") != new.get("version"):
            continue
        if any(_overlaps(c.parts, ("probes", "packages", "data", "packages", name)) for c in package_changes):
            continue
        if any(name in (probe_data(s, "packages").get("duplicates") or {}) for s in (diff.a, diff.b)):
            # Two copies installed: which one runs is not a fact the snapshot pins down.
            continue
        label = f"{new.get('name') or name} {new.get('version')}: same version"
        # A compiled file of it that changed (on either side) makes it a cause: never listed as unchanged.
        if any(_touches_binaries(c, name) for c in kernel_changes) or name in modified:
            continue
        out.append(_package_row(label, by_dist.get(name, 0), new.get("compiled_files"), kernels_ok))
    return out


def _package_row(label: str, hashed: int, compiled: Any, kernels_ok: bool) -> dict[str, str]:
    """The unchanged row of a package of one version on both sides whose compiled files did not change:
    `hashed` of them listed with their hashes, `compiled` the count its RECORD names (every one is hashed
    and compared with RECORD when the kernels probe ran on both sides)."""
    if kernels_ok and hashed:
        return {"category": "package_binary", "title": f"{label}, same binary ({hashed} compiled file(s) identical)"}
    if kernels_ok and isinstance(compiled, int) and compiled > 0:
        return {"category": "package_binary",
                "title": f"{label}, same binary ({compiled} compiled file(s) as their RECORD says)"}
    return {"category": "package_version", "title": f"{label}, compiled files not recorded"}


def _holds(node: Any, segments: tuple[Segment, ...]) -> bool:
    """Whether `node` holds a known value (not None) at a path the pattern `segments` matches; the walk
    follows only the keys each segment accepts."""
    if not segments:
        return node is not None and node != {}
    head, rest = segments[0], segments[1:]
    if head.many:
        return _holds(node, rest) or (isinstance(node, dict) and any(_holds(v, segments) for v in node.values()))
    return isinstance(node, dict) and any(head.accepts(k) and _holds(v, rest) for k, v in node.items())


def _touches(pattern: PathPattern, parts: tuple[PathPart, ...]) -> bool:
    """Whether `pattern` names `parts`, something under it, or something it lies under."""
    return pattern.covers(parts) or any(pattern.match(parts[:i]) is not None for i in range(1, len(parts)))


def both_hold(diff: SnapshotDiff, patterns: tuple[PathPattern, ...]) -> bool:
    """Whether both compared sides hold what `patterns` name: one pattern at least on both sides, and none
    where a fact was left out as held by one side only (a paste's CPU model is no evidence about the
    governor only the machine recorded)."""
    if not any(_holds(diff.a.document, p.segments) and _holds(diff.b.document, p.segments) for p in patterns):
        return False
    one_sided = [parts for side in (diff.a, diff.b) if isinstance(side, ComparedSnapshot) for parts in side.left_out]
    return not any(_touches(p, parts) for p in patterns for parts in one_sided)


# The identities a GPU is known by, and how a title names them.
_GPU_IDENTITIES = (("uuid", "UUIDs"), ("serial", "serials"), ("name", "boards"), ("vbios_version", "firmware"))


def _gpu_identities(snapshot: Snapshot, field: str) -> list[Any] | None:
    """The `field` of every GPU of `snapshot`, sorted; None when any GPU does not say."""
    gpus = probe_data(snapshot, "gpu").get("gpus")
    if not isinstance(gpus, dict) or not gpus:
        return None
    values = [gpu.get(field) if isinstance(gpu, dict) else None for gpu in gpus.values()]
    return None if any(v is None for v in values) else sorted(values, key=str)


def gpus_identical_title(diff: SnapshotDiff) -> str | None:
    """"GPUs present (same UUIDs, boards, firmware): identical" naming only the identities both sides hold,
    compared as wholes; None when one differs (two different boards are never "identical") or none is held."""
    same = []
    for field, word in _GPU_IDENTITIES:
        before, after = _gpu_identities(diff.a, field), _gpu_identities(diff.b, field)
        if before is None or after is None:
            continue
        if before != after:
            return None
        same.append(word)
    return f"GPUs present (same {', '.join(same)}): identical" if same else None


def unchanged_suspects(diff: SnapshotDiff, catalog: Catalog, changed: list[Change]) -> list[dict[str, str]]:
    """The usual suspects that both snapshots recorded and that did not change.

    `changed` should be every change of the diff (volatile and policy-ignored ones too): a change at a
    suspect's path or at an ancestor of it (a whole GPU added or removed) voids the suspect. A suspect
    neither side's facts name (huge pages against a paste that never mentions them) is not listed: it
    was not compared, nor one whose title names a fact (`needs`: a governor) one side does not hold. A claim
    of the same GPUs compares their identities (UUIDs, serials, names).
    """
    out = _packages_unchanged(diff, catalog, changed)
    changed_paths = PathTree(c.parts for c in changed)  # one walk per pattern, not one per change
    for suspect in catalog.suspects:
        if not suspect.probes:
            continue
        if any(diff.a.probe_data(p) is None or diff.b.probe_data(p) is None for p in suspect.probes):
            continue
        if not both_hold(diff, suspect.patterns) or not all(both_hold(diff, (need,)) for need in suspect.needs):
            continue
        if any(pattern.covers_any(changed_paths) for pattern in suspect.patterns):
            continue
        title = suspect.title
        if "UUID" in title:
            identical = gpus_identical_title(diff)
            if identical is None:
                continue
            title = identical
        if suspect.count is not None:
            count = sum(_count_nodes(probe_data(diff.a, p), suspect.count, ("probes", p, "data"))
                        for p in suspect.probes)
            title = title.replace("{n}", str(count))
        out.append({"category": suspect.category, "title": title})
    return sorted(out, key=lambda row: (row["category"], row["title"]))
