"""compare_results: significance from both runs' measured noise, deterministic, shape kept for explain."""

from __future__ import annotations

import random

from driftcheck.baselines.compare import compare_results
from driftcheck.baselines.stats import summarize


def result(samples: list[float], unit: str = "GFLOP/s", higher_is_better: bool = True) -> dict:
    return {"unit": unit, "higher_is_better": higher_is_better, **summarize(samples).to_json(), "samples": samples}


def series(centre: float, relative_noise: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [centre * (1 + rng.gauss(0, relative_noise)) for _ in range(n)]


def test_five_percent_shift_in_quiet_samples_is_significant() -> None:
    before = {"gemm_fp32_1024_gflops": result(series(100.0, 0.01, 40, 1))}
    after = {"gemm_fp32_1024_gflops": result(series(95.0, 0.01, 40, 2))}
    [entry] = compare_results(before, after)
    assert set(entry) == {"name", "unit", "before", "after", "ratio", "significant", "p_value", "direction"}
    assert entry["significant"] is True
    assert entry["direction"] == "slower"
    assert 0.93 < entry["ratio"] < 0.97
    assert entry["p_value"] < 0.01


def test_five_percent_shift_inside_high_noise_is_not_significant() -> None:
    before = {"decode_eager_tok_per_s": result(series(100.0, 0.30, 12, 3), "tok/s")}
    after = {"decode_eager_tok_per_s": result(series(95.0, 0.30, 12, 4), "tok/s")}
    [entry] = compare_results(before, after)
    assert entry["significant"] is False
    assert entry["direction"] == "unchanged"
    assert entry["p_value"] > 0.05


def test_lower_is_better_units_turn_a_smaller_latency_into_faster() -> None:
    before = {"launch_eager_us_per_op": result(series(10.0, 0.01, 30, 5), "us", False)}
    after = {"launch_eager_us_per_op": result(series(8.0, 0.01, 30, 6), "us", False)}
    assert compare_results(before, after)[0]["direction"] == "faster"


def test_same_inputs_same_answer_and_missing_sides() -> None:
    before = {"a_gbps": result(series(10.0, 0.05, 20, 7), "GB/s"), "only_before_gbps": result([1.0, 1.0, 1.0])}
    after = {"a_gbps": result(series(10.2, 0.05, 20, 8), "GB/s"), "only_after_gbps": result([1.0, 1.0, 1.0])}
    first, second = compare_results(before, after), compare_results(before, after)
    assert first == second
    by_name = {e["name"]: e for e in first}
    assert [e["name"] for e in first] == ["a_gbps", "only_after_gbps", "only_before_gbps"]
    assert by_name["only_before_gbps"]["direction"] == "missing" and by_name["only_before_gbps"]["after"] is None
    assert by_name["only_after_gbps"]["ratio"] is None
