"""Comparing two benchmark records: one verdict per benchmark (`driftcheck.baselines.verdict`).

This is the face `diff`, `explain`, `check` and `explain --confirm` call. Each entry keeps the keys
earlier consumers read (name, unit, before, after, ratio, significant, direction) and adds the
verdict (slower / faster / unchanged / inconclusive) with the minimum detectable shift of these two
records. `significant` is true only for `slower` and `faster`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from driftcheck.baselines.verdict import compare_verdicts


def compare_results(before: Mapping[str, Any], after: Mapping[str, Any], device: str = "cpu") -> list[dict[str, Any]]:
    """Compare two `probes.bench.data.results` maps, one entry per benchmark name (sorted).

    Each entry: name, unit, before/after (medians), ratio (after/before, of the geometric means of
    the run medians), change_pct, verdict, direction (= verdict; `missing` when a side lacks the
    benchmark), significant, mds_pct, spread_pct, spread_measured, runs [A, B], disturbance, reason.
    """
    return compare_verdicts(before, after, device)


def compare_records(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Compare two whole `bench` probe data records (their `results`, on the device B ran on)."""
    device = str(after.get("device") or before.get("device") or "cpu")
    return compare_results(before.get("results") or {}, after.get("results") or {}, device)
