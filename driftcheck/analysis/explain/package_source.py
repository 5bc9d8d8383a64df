"""The command that puts one distribution back as A had it, into B's actual target interpreter.

Three things decide it, each from the snapshots: which interpreter B's packages belong to (its packages or
python probe; never a bare `python3` when neither side recorded one, which would be whatever the shell
finds); where A's build came from (its `direct_url`: a VCS commit, a local folder, an archive; else the index,
with the PyTorch index for a `+cu128` build); and whether A's build can load in B's interpreter at all (a
wheel for CPython 3.11 only cannot be had on 3.12: pip would fetch another build, so the answer is to rebuild
A's environment with its Python, `driftcheck restore`, not a command that changes nothing).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from driftcheck.analysis.explain.lookup import package_record, probe_data
from driftcheck.analysis.explain.versions import wheel_index
from driftcheck.analysis.restore_sources import direct_requirement, restore_command
from driftcheck.snapshot.model import Snapshot

# A wheel tag whose interpreter and ABI are one CPython release (cp311-cp311-...): that build loads there only.
# `abi3` and `none` builds load on later releases too (the platform compatibility tags of the packaging guide).
# As text, compiled by `re` (and kept in its cache) when a package's fix is written: most explains write none.
_ONE_CPYTHON = r"^cp(\d)(\d+)-cp\1\2"


def interpreter_of(snapshot: Snapshot) -> str | None:
    """The interpreter `snapshot` describes the packages of (its packages probe, else its python probe)."""
    for probe, key in (("packages", "interpreter"), ("python", "executable")):
        value = probe_data(snapshot, probe).get(key)
        if isinstance(value, str) and value:
            return value
    return None


def python_minor(snapshot: Snapshot) -> str | None:
    """`3.11` of the Python version `snapshot` recorded; None when it recorded none."""
    version = probe_data(snapshot, "python").get("version")
    return ".".join(version.split(".")[:2]) if isinstance(version, str) and version else None


def only_for_cpython(record: dict[str, object]) -> str | None:
    """`3.11` when every wheel tag of a distribution's record names that one CPython release, else None."""
    tags = record.get("wheel_tags")
    if not isinstance(tags, list) or not tags:
        return None
    releases = {f"{found.group(1)}.{found.group(2)}" if (found := re.match(_ONE_CPYTHON, str(tag))) else None
                for tag in tags}
    return releases.pop() if len(releases) == 1 and None not in releases else None


def install_command(python: str | None, reference: Snapshot, current: Snapshot, name: str, version: object,
                    flags: Sequence[str] = ()) -> str:
    """The command that reinstalls `name` at `version` as `reference` (A) had it into `python` (B's target), or
    one sentence saying why no such command exists there and what restores A instead."""
    record = package_record(reference, name)
    built_for, running = only_for_cpython(record), python_minor(current)
    if record.get("version") == version and built_for and running and built_for != running:
        return (f"A's {name} {version} is a build for CPython {built_for} only, and B's interpreter runs Python "
                f"{running}, where pip would install another build: rebuild A's environment with its Python "
                f"instead ({restore_command(reference)})")
    direct = direct_requirement(name, record.get("direct_url")) if record.get("version") == version else None
    if direct is not None:
        _, requirement, editable = direct
        words = ["-e", requirement.removeprefix("-e ")] if editable else [requirement]
    else:
        words = [f"{name}=={version}"]
        index = wheel_index(version)
        if index:
            words += ["--extra-index-url", index]
    if python is None:
        return (f"install {' '.join(words)} with the pip of the interpreter B runs (neither snapshot records "
                f"its path, so no command can name it)")
    command = [python, "-m", "pip", "install", *flags, *words]
    return " ".join(shlex.quote(word) for word in command)
