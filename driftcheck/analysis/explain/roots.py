"""One cause per underlying change: the root a change shares with the other changes it implies.

A wheel and the library version it ships, a version change and the build id it implies, a driver and
its CUDA version, a variable seen by several probes: changes with one root become one explanation with
every evidence path. The root is read from the change path alone (and, for wheels, from the relevance
table, which says which native library a wheel ships).
"""

from __future__ import annotations

import re

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.lookup import dist_of, normalized
from driftcheck.analysis.explain.relevance import RelevanceTable
from driftcheck.analysis.rules import Rule

# System libraries (kernels probe, `system:<path>`) by file name: which native library or driver they are.
_SYSTEM_LIBRARIES = (
    (re.compile(r"/libnccl\.so"), "library:NCCL"),
    (re.compile(r"/libcudnn[^/]*\.so"), "library:cuDNN"),
    (re.compile(r"/libcublas(Lt)?\.so"), "library:cuBLAS"),
    (re.compile(r"/lib(cuda|nvidia-ml|nvidia-ptxjitcompiler)\.so"), "driver"),
)
# The file of an NCCL network plugin (libnccl-net.so, libnccl-net-ofi.so, ...), as the process probe names them.
_NCCL_NET_PLUGIN = re.compile(r"/libnccl-net[^/]*\.so")
# Facts of the torch probe that belong to a library torch loads rather than to torch's own build.
_TORCH_LIBRARIES = {"nccl_version": "library:NCCL", "cudnn_version": "library:cuDNN"}


def package_root(name: str, relevance: RelevanceTable) -> str:
    """The root of a change to package `name`: its library when it is a library wheel (NCCL's)."""
    group = relevance.group_of(name)
    if group is not None and group.library:
        return f"library:{group.library}"
    return f"package:{normalized(name)}"


def root_of(rule: Rule, change: Change, relevance: RelevanceTable) -> str | None:
    """The root of `change` as claimed by `rule`, or None when it stands alone."""
    if rule.merge:
        return f"rule:{rule.id}"
    parts = [str(part) for part in change.parts]
    probe, inner = change.probe, parts[3:]
    if probe == "packages" and len(inner) > 1 and inner[0] in ("packages", "duplicates"):
        return package_root(inner[1], relevance)
    if probe == "kernels" and len(inner) > 1 and inner[0] in ("files", "modified_in_place"):
        dist, relpath = dist_of(inner[1]) if inner[0] == "files" else (inner[1], "")
        if dist != "system":
            return package_root(dist, relevance)
        return next((root for pattern, root in _SYSTEM_LIBRARIES if pattern.search(relpath)), None)
    if probe == "torch" and inner:
        if inner[0] in _TORCH_LIBRARIES:
            return _TORCH_LIBRARIES[inner[0]]
        if inner[0] == "cuda_wheels" and len(inner) > 1:
            return package_root(inner[1], relevance)
        return "package:torch"
    if probe == "nccl" and inner[:1] in (["library"], ["libraries"]):
        return "library:NCCL"
    return _root_of_fact(probe, inner)


# What says which interpreter ran: another one shows in its path, its prefix and its sys.path at once.
_INTERPRETER_FACTS = ("executable", "prefix", "base_prefix", "virtualenv", "conda_env", "conda_prefix", "sys_path")


def _root_of_fact(probe: str | None, inner: list[str]) -> str | None:
    if probe == "python" and inner[:1] and inner[0] in _INTERPRETER_FACTS:
        return "interpreter"
    if probe == "gpu" and inner[:1] in (["driver_version"], ["cuda_driver_version"]):
        return "driver"
    if probe == "system" and inner[:1] == ["modules"] and len(inner) > 2 and inner[1].startswith("nvidia") \
            and inner[2] == "version":
        return "driver"
    # A setting and what it brings: the IOMMU switched on (its kernel flag, groups and units), one
    # governor replacing another on every CPU.
    if probe == "system" and (inner[:1] == ["iommu"] or (inner[:1] == ["cmdline"] and len(inner) > 1
                                                       and "iommu" in inner[1])):
        return "iommu"
    if probe == "system" and inner[:2] == ["cpufreq", "governors"]:
        return "cpu-governors"
    # A variable set in the shell shows in env, in the nccl probe (NCCL_*) and in a server's environ.
    if probe in ("env", "nccl") and inner[:1] in (["vars"], ["env"]) and len(inner) == 2:
        return f"var:{inner[1]}"
    if probe == "process" and len(inner) == 4 and inner[0] == "processes" and inner[2] == "environ":
        return f"var:{inner[3]}"
    # A flag the user changed and the argument it set, as the server reports it: one change.
    if probe == "server" and len(inner) == 2 and inner[0] == "server_args":
        return f"server-arg:{inner[1]}"
    if probe == "server" and len(inner) == 3 and inner[:2] == ["launch", "flags"]:
        return f"server-arg:{inner[2]}"
    # The error counters of one InfiniBand port grow together when its cable goes bad: one cause.
    if probe == "nccl" and len(inner) == 6 and inner[0] == "infiniband" and inner[2:5:2] == ["ports", "counters"]:
        return f"ib-port:{inner[1]}:{inner[3]}"
    # A network plugin NCCL mapped or not: its entry among the mapped libraries says the same thing.
    if probe == "process" and len(inner) >= 4 and inner[0] == "processes" and (
            inner[2:4] == ["nccl", "net_plugins"]
            or (inner[2] == "mapped_libraries" and _NCCL_NET_PLUGIN.search(inner[3]))):
        return f"nccl-net-plugin:{inner[1]}"
    return None
