"""A control for checks against the past: a small figure, measured beside every benchmark, that moves only
with the machine's own speed, so that a shift it shares is told apart from a change of configuration.

`check --against REF` cannot interleave with a past state. When other work shares the machine now (or
the CPU clocks lower, or a VM neighbour steals time) every benchmark is slower and the raw verdict calls
the machine slower. So each run measures, before its first benchmark and after each one, three figures
that no setting driftcheck compares can change (no BLAS, no OpenMP, no torch):

- `int_1t`: a pure-Python integer loop on one thread (Mops/s): tracks the clock and steal;
- `copy_1t`: a 16 MiB memory copy on one thread (stdlib `memoryview` slice assignment, GB/s): tracks
  memory bandwidth and the cache a neighbour takes;
- `all_cores`: SHA-256 of a private 16 MiB buffer in one thread per usable CPU at once (hashlib drops the
  GIL), per-thread MB/s: tracks how much of *all* the cores this process can have. Its thread count is
  the machine's CPU count, never the run's OMP/torch thread count, so OMP_NUM_THREADS=1 cannot move it.

**Timed as the benchmarks are.** A benchmark's figure is the median of timed batches of at least 5 ms
(`CalibrationPolicy.min_sample_s`). A batch that short mostly runs between two preemptions, so the
median of many sees the clock, not the share of the CPU a busy neighbour takes (measured on the 2-core
VM: with others keeping 1.8 CPUs busy the launch overhead did not move while one 20 ms loop lost 86%).
So `int_1t` and `copy_1t` are the medians of a few batches of ~5 ms, and `all_cores` is one batch of
~25 ms, as long as one operation of the multi-threaded benchmarks (a 1024³ GEMM, a decode step), which
do feel the share. The stored control keeps the benchmark's own batch time (`batch_s`) to choose by.

A benchmark's control figure in a run is the geometric mean of the measurements just before and just
after it (interleaved: a load that starts mid-run reaches both). One measurement takes ~65 ms on the idle
2-core VM (more under load), six per quick CPU run: ~2% of its default 22 s budget, more at a smaller one
(`driftcheck bench` prints the share).

**Which benchmarks it can normalise honestly.** Dividing by the control is exact only for work that
loses speed as the control does. That holds for what every thread and every batch feels alike: a lower
clock, CPU steal, a slower memory bus. It does not hold under other work sharing the cores:

- an OpenMP team waits at each barrier for its slowest thread, so one busy core of two made a 2-thread
  decode 8x slower while `all_cores` lost 30-40% under a busy core (both measured on the 2-core VM);
- a memory-bound copy loses *less* than the control;
- a short single-thread benchmark loses less than the single-thread control: its figure is the median of
  many short batches, which finds the ones no preemption hit (measured: under a busy core and other work
  the launch overhead moved +13% while the single-thread control moved -68%).

So the control chooses per benchmark: the single-thread figure (geometric mean of `int_1t` and `copy_1t`)
for a benchmark that ran on one thread on both sides (`threads` 1: the launch overhead, whose 1-element
ops never split, or every benchmark of a run with one thread) in batches as short as its own
(`SHORT_BATCH_S`); `all_cores` for anything else (several threads, or long batches, which feel the share
of the CPU the short control does not). Then:

- the control did not move beyond its own noise: it says nothing about the machine, and dividing by it
  would only add its noise, so the raw figure decides (the normalised one is shown beside it), with the
  disturbance rule of `driftcheck.analysis.bench_verdicts` (a disturbance that could explain the shift voids the
  call);
- it moved and no other work was seen on the slower side (other processes or steal,
  `driftcheck.baselines.disturbance`): a clock or hidden steal change, which the normalisation is exact
  for; the normalised figure decides;
- it moved and the slower side saw other work: no figure can decide — `inconclusive`, saying what the
  machine did ("the whole machine is slower now: control -38%, B: other processes kept 0.90 of 2 CPUs
  busy") with the raw and normalised changes shown — unless both figures moved *against* the machine
  (faster on a slower machine), which no load explains.

A shift the control does not share (fewer threads, another BLAS, a slower library) stays a finding: the
control does not move, so the raw figure decides. Where the normalised figure decides, a shift it shows
and the raw figure does not is `inconclusive`: the control can explain a shift away, never make one.
On a GPU run the control is recorded and its change shown, but verdicts stay on raw figures: a CPU loop
does not track a GPU's speed.
Records taken before the control existed compare on raw figures, and the verdict says no control was
recorded.
"""

from __future__ import annotations

import hashlib
import math
import os
import statistics
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from driftcheck.baselines.record import ControlEntry

FIGURES = ("int_1t", "copy_1t", "all_cores")
UNITS = {"int_1t": "Mops/s", "copy_1t": "GB/s", "all_cores": "MB/s per thread"}
_LOOP_ITERATIONS = 75_000
_COPY_BYTES = 16 << 20
_HASH_BYTES = 16 << 20
# The single-thread figures are the median of this many batches of ~5 ms, as a benchmark's figure is the
# median of its batches (see the module docstring). The hash runs once, ~25 ms per thread: a burst of a
# few ms is favoured by the scheduler over a long-running busy loop (a woken thread preempts it), so it
# would not feel the load a multi-threaded operation of tens of ms feels. Measured: a 4 MiB hash per
# thread did not move with a busy core; 16 MiB did.
_REPEATS = 3
# Benchmarks timed in batches up to this long are "short": the single-thread control's time scale.
SHORT_BATCH_S = 0.02
# The all-cores control runs at most this many threads: beyond it a big machine's control costs too much.
_MAX_THREADS = 16
# A control shift below this is never "the machine moved", whatever its noise says.
MIN_CONTROL_SHIFT = 0.05


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), at most `_MAX_THREADS`."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    return max(1, min(count, _MAX_THREADS))


def _int_loop() -> float:
    started = time.perf_counter()
    total = 0
    for i in range(_LOOP_ITERATIONS):
        total += i & 7
    elapsed = time.perf_counter() - started
    return _LOOP_ITERATIONS / max(elapsed, 1e-9) / 1e6


class _Buffers:
    """The copy and hash buffers, made once per process (allocating them would be measured too)."""

    def __init__(self, threads: int) -> None:
        self.source = bytearray(os.urandom(4096)) * (_COPY_BYTES // 4096)
        self.target = bytearray(_COPY_BYTES)
        self.hashed = [bytes(os.urandom(4096)) * (_HASH_BYTES // 4096) for _ in range(threads)]


def _copy(buffers: _Buffers) -> float:
    started = time.perf_counter()
    memoryview(buffers.target)[:] = buffers.source
    return 2.0 * _COPY_BYTES / max(time.perf_counter() - started, 1e-9) / 1e9  # read + write


def _all_cores(buffers: _Buffers) -> float:
    threads = len(buffers.hashed)
    barrier = threading.Barrier(threads + 1)
    done = [0.0] * threads

    def work(index: int) -> None:
        barrier.wait()
        hashlib.sha256(buffers.hashed[index]).digest()
        done[index] = time.perf_counter()

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    started = time.perf_counter()
    barrier.wait()
    for worker in workers:
        worker.join()
    elapsed = max(max(done) - started, 1e-9)
    return _HASH_BYTES / elapsed / 1e6  # each thread hashed _HASH_BYTES in the wall time of all


class ControlMeter:
    """Measures the control figures; one per run (it holds the buffers)."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or usable_cpus()
        self._buffers = _Buffers(self.threads)

    def measure(self) -> dict[str, float]:
        """{int_1t, copy_1t, all_cores}: medians of `_REPEATS` loops and copies, one hash per thread."""
        return {"int_1t": statistics.median(_int_loop() for _ in range(_REPEATS)),
                "copy_1t": statistics.median(_copy(self._buffers) for _ in range(_REPEATS)),
                "all_cores": _all_cores(self._buffers)}


def around(before: Mapping[str, float], after: Mapping[str, float], threads: int,
           batch_s: float | None = None) -> ControlEntry:
    """A benchmark's control entry from the measurements just before and after it (geometric means);
    `batch_s`: how long one timed batch of the benchmark took (its time scale)."""
    def mean(name: str) -> float:
        return round(math.sqrt(before[name] * after[name]), 6)

    return {"int_1t": mean("int_1t"), "copy_1t": mean("copy_1t"), "all_cores": mean("all_cores"),
            "all_cores_threads": threads, "batch_s": None if batch_s is None else round(batch_s, 6)}


# --- reading a stored control ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ControlFigure:
    """One run's control of one benchmark: the figure its normalisation divides by (higher: faster)."""

    single: float  # geometric mean of int_1t and copy_1t
    all_cores: float
    threads: int | None = None  # threads of the all-cores figure
    batch_s: float | None = None  # the benchmark's timed batch (None: not recorded, counts as long)

    @property
    def short(self) -> bool:
        """Whether the benchmark was timed in batches as short as the single-thread control's."""
        return self.batch_s is not None and self.batch_s <= SHORT_BATCH_S

    def for_kind(self, single: bool) -> float:
        """The single-thread figure, or the all-cores one (see the module docstring for which applies)."""
        return self.single if single else self.all_cores


def control_figure(value: Any) -> ControlFigure | None:
    """The control stored beside one run's result, or None when that run recorded none (older records)."""
    if not isinstance(value, Mapping):
        return None
    figures = [value.get(name) for name in FIGURES]
    if not all(isinstance(f, (int, float)) and not isinstance(f, bool) and f > 0 and math.isfinite(f)
               for f in figures):
        return None
    int_1t, copy_1t, all_cores = (float(f) for f in figures)  # type: ignore[arg-type]
    threads, batch = value.get("all_cores_threads"), value.get("batch_s")
    return ControlFigure(math.sqrt(int_1t * copy_1t), all_cores, threads if isinstance(threads, int) else None,
                         float(batch) if isinstance(batch, (int, float)) and not isinstance(batch, bool) else None)


def control_figures(entries: Sequence[Mapping[str, Any]]) -> list[ControlFigure] | None:
    """The control of each run in `entries`, or None unless every run recorded one."""
    figures = [control_figure(entry.get("control")) for entry in entries]
    if not figures or any(f is None for f in figures):
        return None
    return [f for f in figures if f is not None]
