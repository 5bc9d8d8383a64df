"""One cause per underlying change: the root a change shares with the other changes it implies.

A wheel and the library version it ships, a version change and the build id it implies, a driver and
its CUDA version, a variable seen by several probes: changes with one root become one explanation with
every evidence path. Which root a fact has is data (`root` in snapshot/facts.yaml); this module resolves
the two kinds that need the relevance table: a distribution (a library wheel's root is its library) and a
file the kernels probe hashed (its distribution's root, or the library a system file is).
"""

from __future__ import annotations

import re

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.lookup import dist_of, normalized
from driftcheck.analysis.explain.relevance import RelevanceTable
from driftcheck.analysis.rules import Rule
from driftcheck.snapshot.facts import fact_table

# System libraries (a file of no distribution) by file name: which native library or driver they are. Patterns
# as text, compiled by `re` (and kept in its cache) when a system file changed: most explains have none.
_SYSTEM_LIBRARIES = (
    (r"/libnccl\.so", "library:NCCL"),
    (r"/libcudnn[^/]*\.so", "library:cuDNN"),
    (r"/libcublas(Lt)?\.so", "library:cuBLAS"),
    (r"/lib(cuda|nvidia-ml|nvidia-ptxjitcompiler)\.so", "driver"),
)
# The distribution the kernels probe files a file under when no distribution owns it.
_NO_DISTRIBUTION = "system"


def package_root(name: str, relevance: RelevanceTable) -> str:
    """The root of a change to package `name`: its library when it is a library wheel (NCCL's)."""
    group = relevance.group_of(name)
    if group is not None and group.library:
        return f"library:{group.library}"
    return f"package:{normalized(name)}"


def file_root(file_key: str, relevance: RelevanceTable) -> str | None:
    """The root of a hashed file keyed `<dist>:<path>`: its distribution's, or for a file of no
    distribution the library it is by name (None for any other system file)."""
    dist, relpath = dist_of(file_key)
    if dist != _NO_DISTRIBUTION:
        return package_root(dist, relevance)
    return next((root for pattern, root in _SYSTEM_LIBRARIES if re.search(pattern, relpath)), None)


def root_of(rule: Rule, change: Change, relevance: RelevanceTable) -> str | None:
    """The root of `change` as claimed by `rule`, or None when it stands alone."""
    if rule.merge:
        return f"rule:{rule.id}"
    root = fact_table().root(change.parts)
    if root is None:
        return None
    kind, _, name = root.partition(":")
    if kind == "package":
        return package_root(name, relevance)
    if kind == "file":
        return file_root(name, relevance)
    return root
