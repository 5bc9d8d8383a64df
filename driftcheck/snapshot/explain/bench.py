"""Benchmark evidence: the calibrated results both snapshots carry, compared, and what moved."""

from __future__ import annotations

from typing import Any

from driftcheck.baselines.compare import compare_results
from driftcheck.snapshot.model import Snapshot

_ROW_KEYS = ("name", "unit", "before", "after", "ratio", "significant", "p_value", "direction")


def bench_worse(entry: dict[str, Any]) -> bool:
    """Whether a compared benchmark result got significantly worse (slower) from A to B.

    `compare_results` has already turned the unit's sense into `direction` (faster/slower/unchanged).
    """
    return bool(entry.get("significant")) and entry.get("direction") == "slower"


def bench_better(entry: dict[str, Any]) -> bool:
    """Whether a compared benchmark result got significantly better (faster) from A to B."""
    return bool(entry.get("significant")) and entry.get("direction") == "faster"


def bench_evidence(a: Snapshot, b: Snapshot) -> tuple[list[dict[str, Any]], str | None]:
    """The benchmark comparison of A and B (empty when either lacks results), and why it is empty."""
    before, after = a.probe_data("bench"), b.probe_data("bench")
    if not before or not after or not before.get("results") or not after.get("results"):
        return [], None
    try:
        entries = compare_results(before["results"], after["results"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # Results written by another driftcheck version may lack what this comparison reads.
        return [], f"benchmark results could not be compared: {exc}"
    rows = [{key: entry.get(key) for key in _ROW_KEYS} for entry in entries if isinstance(entry, dict)]
    return sorted(rows, key=lambda row: str(row["name"])), None
