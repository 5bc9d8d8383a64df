"""Packages of one release are one change: the `-python`, `-cubin` and `-jit-cache` wheels of one kernel
library moved together from 0.5.3 to 0.6.1 are one upgrade, not three causes.

A release family is the distributions that share the first word of their name and moved between the same
two versions on A and B. Their causes take one root (`release:<family>:<a>-><b>`), so explain merges them
into the cause of the family's most relevant package, with the others as evidence. Two packages that share
a word but moved between different versions (torch and torchvision never share version numbers) stay apart.
"""

from __future__ import annotations

from dataclasses import replace

from driftcheck.analysis.explain.fixes import Sides
from driftcheck.analysis.explain.lookup import normalized, package_record
from driftcheck.analysis.explain.model import Explanation
from driftcheck.snapshot.paths import parse_path

_PACKAGE_ROOT = "package:"
RELEASE_ROOT = "release:"


def _family(dist: str) -> str:
    """The first word of a distribution's name: `vllm` of `vllm-flash-attn`."""
    return dist.split("-", 1)[0]


def _versions(sides: Sides, dist: str) -> tuple[str | None, str | None]:
    before, after = (package_record(side, dist).get("version") for side in (sides.reference, sides.current))
    return (None if before is None else str(before)), (None if after is None else str(after))


def release_roots(causes: list[Explanation], sides: Sides) -> list[Explanation]:
    """`causes` with the causes of packages of one release family given that family's one root."""
    keys: dict[str, str] = {}
    members: dict[str, set[str]] = {}
    for cause in causes:
        if cause.root is None or not cause.root.startswith(_PACKAGE_ROOT):
            continue
        dist = cause.root[len(_PACKAGE_ROOT):]
        before, after = _versions(sides, dist)
        if before == after:
            continue
        key = f"{RELEASE_ROOT}{_family(dist)}:{before}->{after}"
        keys[cause.root] = key
        members.setdefault(key, set()).add(dist)
    families = {key for key, dists in members.items() if len(dists) > 1}
    return [replace(cause, root=keys[cause.root]) if cause.root in keys and keys[cause.root] in families
            else cause for cause in causes]


def named_releases(explanations: list[Explanation]) -> list[Explanation]:
    """Each merged release family's cause, its title naming the family's other packages."""
    out = []
    for explanation in explanations:
        if explanation.root is None or not explanation.root.startswith(RELEASE_ROOT):
            out.append(explanation)
            continue
        told = normalized(explanation.title.split(" ", 1)[0])
        dists = sorted({dist for path in explanation.evidence if (dist := _dist_of(path)) is not None})
        others = [dist for dist in dists if dist != told]
        if not others:
            out.append(explanation)
            continue
        before = explanation.root.rsplit(":", 1)[-1].split("->", 1)[0]
        # A pin of the one package told restores the whole release: every package of it, at A's version.
        fix = explanation.fix.replace(f"{told}=={before}", " ".join(f"{dist}=={before}" for dist in dists))
        out.append(replace(explanation, title=f"{explanation.title} (one release with {', '.join(others)})",
                           fix=fix))
    return out


def _dist_of(path: str) -> str | None:
    """The distribution a package evidence path names (`probes.packages.data.packages.<dist>...`)."""
    parts = parse_path(path)
    if len(parts) > 4 and tuple(parts[:4]) == ("probes", "packages", "data", "packages"):
        return normalized(str(parts[4]))
    return None
