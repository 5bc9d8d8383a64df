"""Benchmark evidence: the calibrated results both snapshots carry, compared, and what moved."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from driftcheck.snapshot.model import Snapshot


def bench_worse(entry: Mapping[str, object]) -> bool:
    """Whether a compared benchmark result got significantly worse (slower) from A to B.

    The comparison has already turned the unit's sense into `direction` (faster/slower/unchanged/inconclusive).
    """
    return bool(entry.get("significant")) and entry.get("direction") == "slower"


def bench_better(entry: Mapping[str, object]) -> bool:
    """Whether a compared benchmark result got significantly better (faster) from A to B."""
    return bool(entry.get("significant")) and entry.get("direction") == "faster"


def bench_evidence(a: Snapshot, b: Snapshot) -> tuple[list[dict[str, Any]], str | None]:
    """The benchmark comparison of A and B (empty when either lacks results), and why it is empty."""
    before, after = a.probe_data("bench"), b.probe_data("bench")
    if not before or not after or not before.get("results") or not after.get("results"):
        return [], None
    # Imported here, where both sides hold benchmark results: the verdicts bring the statistics and the
    # control's arithmetic, which an explain of two plain snapshots (the common case) never uses.
    from driftcheck.analysis.bench_verdicts import compare_records

    try:
        entries = compare_records(before, after)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        # Results written by another driftcheck version may lack what this comparison reads.
        return [], f"benchmark results could not be compared: {exc}"
    # Each row keeps its verdict, MDS, spread and disturbance (driftcheck.analysis.bench_verdicts).
    rows = [dict(entry) for entry in entries if isinstance(entry, dict)]
    return sorted(rows, key=lambda row: str(row["name"])), None


def bench_moved(rows: Sequence[Mapping[str, object]], bench_class: Callable[[str], str]) -> set[str] | None:
    """The classes of benchmark that got worse, or None when no row is evidence either way.

    An `inconclusive` (or missing) benchmark says nothing: it neither supports nor weighs against a cause.
    """
    conclusive = [row for row in rows if row.get("verdict", row.get("direction")) in ("slower", "faster", "unchanged")]
    if not conclusive:
        return None
    return {bench_class(str(row["name"])) for row in conclusive if bench_worse(row)}
