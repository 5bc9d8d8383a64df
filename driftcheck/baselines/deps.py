"""Optional dependencies of the benchmarks, imported only when a benchmark runs."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import warnings
from typing import Any

from driftcheck.errors import DriftcheckError

# The torch the project is tested with; an unpinned `pip install torch` pulls a multi-GB CUDA build.
TORCH_PIN = "2.13.0"


class BenchDependencyError(DriftcheckError):
    """A library a benchmark needs (torch, sglang) is not importable here."""


def import_torch() -> Any:
    """The torch module, or BenchDependencyError saying how to install it."""
    try:
        with warnings.catch_warnings():
            # torch warns at import when numpy is absent; no benchmark here converts to numpy.
            warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
            return importlib.import_module("torch")
    except ImportError as exc:
        raise BenchDependencyError(
            f"benchmarks need torch ({exc}): pip install torch=={TORCH_PIN} (or the torch build you "
            "benchmark with) first, then pip install 'driftcheck[bench]'") from None


def require_torch() -> None:
    """BenchDependencyError (as `import_torch` words it) unless torch is importable, without importing it.

    The runs happen in child interpreters; the parent only checks, so a missing torch is one line here.
    """
    try:
        missing = "torch" in sys.modules and sys.modules["torch"] is None or importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):
        missing = True
    if missing:
        raise BenchDependencyError(
            f"benchmarks need torch (No module named 'torch'): pip install torch=={TORCH_PIN} (or the torch build "
            "you benchmark with) first, then pip install 'driftcheck[bench]'")


def import_sglang() -> Any:
    """The sglang module, or BenchDependencyError saying how to install it."""
    try:
        return importlib.import_module("sglang")
    except ImportError as exc:
        raise BenchDependencyError(
            f"--sglang-model needs sglang ({exc}): install it into this interpreter "
            "(pip install 'driftcheck[sglang]'), or measure a running server with --server URL") from None
