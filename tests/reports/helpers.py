"""A large realistic snapshot (8 recorded H100s, 600 packages) shared with benchmarks/diff_speed.py."""

from __future__ import annotations

import importlib.util
from typing import Any

from tests.conftest import REPO_ROOT


def large_document() -> dict[str, Any]:
    """benchmarks/diff_speed.py's snapshot A: tests/data/pairs/base.json grown to 8 GPUs and 600 packages."""
    spec = importlib.util.spec_from_file_location("diff_speed", REPO_ROOT / "benchmarks" / "diff_speed.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    document: dict[str, Any] = module.large_document()
    return document
