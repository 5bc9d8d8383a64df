"""The calibration rules, fed timings from a scripted clock so every decision is reproducible."""

from __future__ import annotations

import random

from driftcheck.baselines.calibrate import CalibrationPolicy, Calibrator, measure, wall_timer


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def feed(calibrator: Calibrator, clock: FakeClock, times: list[float], advance_s: float = 0.01) -> None:
    for t in times:
        if calibrator.finished:
            return
        clock.now += advance_s
        calibrator.record(t)


def test_warmup_ends_when_timings_settle_and_sizes_batches() -> None:
    clock = FakeClock()
    cal = Calibrator(CalibrationPolicy(budget_s=100.0, min_sample_s=0.01), clock=clock)
    # first timing discarded, then a cooling-down series that settles at 1 ms per op
    feed(cal, clock, [0.5, 0.004, 0.003, 0.002, 0.0011, 0.001, 0.001, 0.001, 0.001, 0.001])
    assert not cal.warming
    assert cal.inner == 10  # 10 ms per sample / 1 ms per op
    assert len(cal.warmup_times) == 9  # the first window of three equal to the one before


def test_stops_when_median_ci_within_one_percent() -> None:
    clock = FakeClock()
    cal = Calibrator(CalibrationPolicy(budget_s=100.0), clock=clock)
    rng = random.Random(1)
    feed(cal, clock, [1.0] * 7)
    assert not cal.warming
    feed(cal, clock, [1.0 + rng.uniform(-0.005, 0.005) for _ in range(100)])
    assert cal.stopped == "converged"
    assert len(cal.samples_s) == 10


def test_noisy_series_runs_until_budget() -> None:
    clock = FakeClock()
    cal = Calibrator(CalibrationPolicy(budget_s=1.0), clock=clock)
    rng = random.Random(2)
    feed(cal, clock, [1.0] * 7)
    feed(cal, clock, [rng.uniform(0.5, 1.5) for _ in range(1000)], advance_s=0.05)
    assert cal.stopped == "budget"
    assert 10 <= len(cal.samples_s) <= 20


def test_max_samples_caps_a_fast_series() -> None:
    clock = FakeClock()
    cal = Calibrator(CalibrationPolicy(budget_s=1e9, max_samples=30), clock=clock)
    rng = random.Random(3)
    feed(cal, clock, [1.0] * 7)
    feed(cal, clock, [rng.uniform(0.5, 1.5) for _ in range(1000)], advance_s=0.0)
    assert cal.stopped == "max_samples"
    assert len(cal.samples_s) == 30


def test_measure_times_a_real_operation() -> None:
    calls = []
    measurement = measure(lambda: calls.append(sum(range(2000))), wall_timer, CalibrationPolicy(budget_s=0.5))
    summary = measurement.summary()
    assert summary.n >= 3
    assert 0 < summary.median < 0.01
    assert measurement.report["inner"] > 1
    assert measurement.report["stopped"] in ("converged", "budget", "max_samples")
    assert len(calls) >= summary.n * measurement.report["inner"]
