"""driftcheck: signed snapshots of a GPU machine, and why its performance moved between two of them.

The library's face: `snapshot(...)` and `check(...)` for harnesses (see `driftcheck.api`), and
`take_snapshot`, `load`, `diff`, `explain`. The CLI (`driftcheck.cli`) is a thin layer on it.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# Resolved on first use: an isolated probe's child process imports `driftcheck.*` and should not pay
# for deepdiff, cryptography and the rule catalog it never touches.
_FACE = {
    "diff": ("driftcheck.snapshot.diff", "diff_snapshots"),
    "explain": ("driftcheck.snapshot.explain", "explain"),
    "load": ("driftcheck.snapshot.resolve", "resolve_snapshot"),
    "take_snapshot": ("driftcheck.take", "take_snapshot"),
}
# `snapshot` and `check` are modules that answer a call (driftcheck.callable_module): Python binds an
# imported submodule over any function of the same name here, so the modules themselves are the face.
_CALLABLE_MODULES = ("check", "snapshot")


def __getattr__(name: str) -> Any:
    if name in _FACE:
        module, attribute = _FACE[name]
        return getattr(importlib.import_module(module), attribute)
    if name in _CALLABLE_MODULES:
        return importlib.import_module(f"driftcheck.{name}")
    raise AttributeError(f"module 'driftcheck' has no attribute {name!r}")


__all__ = ["__version__", "check", "diff", "explain", "load", "snapshot", "take_snapshot"]
