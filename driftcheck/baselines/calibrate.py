"""Calibrated measurement: warm up until timings settle, then repeat until the median is known.

A `Calibrator` is the decision half (how many operations per sample, when warm-up is over, when to
stop), kept apart from the timing half so the same rules drive a single process, the GPU paths and
the ranks of an all-reduce (where rank 0 decides and broadcasts). A sample is the time of `inner`
back-to-back operations divided by `inner`, so a microsecond operation is not drowned in timer noise.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from driftcheck.stats.summary import Summary, summarize

TARGET_RELATIVE_CI = 0.01  # stop once the 95% CI of the median is within ±1%
SETTLE_TOLERANCE = 0.02    # warm-up ends when two consecutive windows of timings agree this closely
SETTLE_WINDOW = 3


@dataclass
class CalibrationPolicy:
    """The rules of one measurement; times are wall-clock seconds."""

    budget_s: float
    min_samples: int = 10
    max_samples: int = 400
    min_sample_s: float = 0.005
    min_warmup: int = 2
    max_warmup_fraction: float = 0.25
    target_relative_ci: float = TARGET_RELATIVE_CI


@dataclass
class Calibrator:
    """Decides `inner`, the end of warm-up and the end of measurement from the timings it is fed."""

    policy: CalibrationPolicy
    clock: Callable[[], float] = time.monotonic
    inner: int = 1
    warming: bool = True
    warmup_times: list[float] = field(default_factory=list)
    samples_s: list[float] = field(default_factory=list)
    stopped: str | None = None
    _started: float | None = None
    _sized: bool = False

    @property
    def finished(self) -> bool:
        return self.stopped is not None

    def elapsed_s(self) -> float:
        return 0.0 if self._started is None else self.clock() - self._started

    def record(self, seconds_per_op: float) -> None:
        """Feed the time per operation of the last timed batch of `inner` operations."""
        if self._started is None:
            self._started = self.clock()
        if not self._sized:
            # The first timing includes one-off costs (allocation, kernel selection): discarded.
            self._sized = True
            return
        if self.warming:
            self.warmup_times.append(seconds_per_op)
            # Batches are sized from the latest warm-up timing until warm-up ends, then kept fixed.
            self.inner = max(1, math.ceil(self.policy.min_sample_s / max(seconds_per_op, 1e-9)))
            if self._settled() or self.elapsed_s() >= self.policy.budget_s * self.policy.max_warmup_fraction:
                self.warming = False
            return
        self.samples_s.append(seconds_per_op)
        self._maybe_stop()

    def _settled(self) -> bool:
        times = self.warmup_times
        if len(times) < max(self.policy.min_warmup, 2 * SETTLE_WINDOW):
            return False
        recent = statistics.median(times[-SETTLE_WINDOW:])
        earlier = statistics.median(times[-2 * SETTLE_WINDOW:-SETTLE_WINDOW])
        return abs(recent - earlier) <= SETTLE_TOLERANCE * earlier

    def _maybe_stop(self) -> None:
        n = len(self.samples_s)
        if n >= self.policy.min_samples and summarize(self.samples_s).relative_ci_half_width <= \
                self.policy.target_relative_ci:
            self.stopped = "converged"
        elif self.elapsed_s() >= self.policy.budget_s and n >= min(self.policy.min_samples, 3):
            self.stopped = "budget"
        elif n >= self.policy.max_samples:
            self.stopped = "max_samples"

    def report(self) -> dict[str, Any]:
        """How the measurement went: warm-up length, batch size, why it stopped, time spent."""
        return {"warmup_n": len(self.warmup_times), "inner": self.inner, "stopped": self.stopped,
                "elapsed_s": round(self.elapsed_s(), 4)}


class Timer(Protocol):
    """Times `inner` back-to-back calls of an operation; returns seconds for the whole batch."""

    def __call__(self, op: Callable[[], object], inner: int) -> float: ...


def wall_timer(op: Callable[[], object], inner: int) -> float:
    """CPU work: a perf_counter around the batch (CPU ops are synchronous)."""
    start = time.perf_counter()
    for _ in range(inner):
        op()
    return time.perf_counter() - start


def cuda_event_timer(torch: Any, device_index: int) -> Timer:
    """GPU work: CUDA events around the batch on the current stream, after a full synchronisation.

    Host-side timing of asynchronous kernels measures launch, not execution; the events record on the
    GPU's own timeline, and synchronising first keeps earlier work out of the batch.
    """

    def timer(op: Callable[[], object], inner: int) -> float:
        with torch.cuda.device(device_index):
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(inner):
                op()
            end.record()
            end.synchronize()
            return float(start.elapsed_time(end)) / 1000.0

    return timer


@dataclass
class Measurement:
    """Seconds per operation for every kept sample, with the calibration report."""

    samples_s: list[float]
    report: dict[str, Any]

    def summary(self) -> Summary:
        return summarize(self.samples_s)


def measure(op: Callable[[], object], timer: Timer, policy: CalibrationPolicy,
            clock: Callable[[], float] = time.monotonic) -> Measurement:
    """Warm up `op` until settled, then sample it until the median's CI is tight or the budget is spent."""
    calibrator = Calibrator(policy, clock=clock)
    while not calibrator.finished:
        calibrator.record(timer(op, calibrator.inner) / calibrator.inner)
    return Measurement(list(calibrator.samples_s), calibrator.report())
