"""Comparing two benchmark runs: ratio of medians and whether the shift is more than noise.

The test is a bootstrap of the ratio of medians on the samples each run kept, so each side's own
measured noise decides: a 3% shift between two quiet runs is significant, the same shift inside
noisy runs is not. The resampling is seeded from the benchmark name, so the answer is a function of
the inputs alone. A shift must also exceed `MIN_EFFECT`: repeated runs on one machine differ by a
fraction of a percent that no single run's samples can see (scheduling, frequency, memory placement),
and calling that a change would cry wolf.
"""

from __future__ import annotations

import random
import statistics
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

ALPHA = 0.01
MIN_EFFECT = 0.02
BOOTSTRAP_ROUNDS = 1000


def _higher_is_better(result: Mapping[str, Any]) -> bool:
    if "higher_is_better" in result:
        return bool(result["higher_is_better"])
    unit = str(result.get("unit", ""))
    return "/s" in unit or unit.endswith("_per_s")


def bootstrap_p_value(before: Sequence[float], after: Sequence[float], seed: int,
                      rounds: int = BOOTSTRAP_ROUNDS) -> float:
    """Two-sided p-value that the medians differ: how often a resampled ratio falls across 1."""
    rng = random.Random(seed)
    below = above = 0
    for _ in range(rounds):
        b = statistics.median(rng.choices(before, k=len(before)))
        a = statistics.median(rng.choices(after, k=len(after)))
        if b == 0:
            continue
        ratio = a / b
        if ratio <= 1.0:
            below += 1
        if ratio >= 1.0:
            above += 1
    return min(1.0, 2.0 * (min(below, above) + 1) / (rounds + 1))


def _samples(result: Mapping[str, Any]) -> list[float]:
    samples = result.get("samples") or []
    return [float(x) for x in samples if isinstance(x, (int, float))]


def _entry(name: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> dict[str, Any]:
    unit = str((after or before or {}).get("unit", ""))
    median_before = before.get("median") if before else None
    median_after = after.get("median") if after else None
    entry: dict[str, Any] = {"name": name, "unit": unit, "before": median_before, "after": median_after,
                             "ratio": None, "significant": False, "p_value": None, "direction": "missing"}
    if before is None or after is None or not median_before or median_after is None:
        return entry
    ratio = float(median_after) / float(median_before)
    entry["ratio"] = ratio
    samples_before, samples_after = _samples(before), _samples(after)
    if len(samples_before) < 3 or len(samples_after) < 3:
        entry["direction"] = "unchanged"
        return entry
    p_value = bootstrap_p_value(samples_before, samples_after, seed=zlib.crc32(name.encode("utf-8")))
    significant = p_value < ALPHA and abs(ratio - 1.0) >= MIN_EFFECT
    entry["p_value"] = p_value
    entry["significant"] = significant
    if significant:
        better = (ratio > 1.0) == _higher_is_better(after)
        entry["direction"] = "faster" if better else "slower"
    else:
        entry["direction"] = "unchanged"
    return entry


def compare_results(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Compare two `probes.bench.data.results` maps, one entry per benchmark name (sorted).

    Each entry: name, unit, before/after (medians), ratio (after/before), significant, p_value, and
    direction: `faster`/`slower` when significant (in performance terms, whichever way the unit
    points), `unchanged` when not, `missing` when a side lacks the benchmark.
    """
    names = sorted(set(before) | set(after))
    return [_entry(name, before.get(name), after.get(name)) for name in names]
