"""`bench`: a calibrated benchmark suite or a serving measurement, run here; and more runs where a check's
first look cannot decide (the first look judged, more runs taken, joined).

`driftcheck.bench(suite="quick", runs=3)` runs the suite (each run in its own process) and returns its record;
`driftcheck.bench(server="http://127.0.0.1:30000")` measures a running OpenAI-compatible server instead.

The check's benchmark runs come from the bench probe, which only measures (`BenchRequest`); the check judges
its first look against the reference (`driftcheck.analysis.more_runs`) and, where a benchmark is undecided
and more runs could decide it, asks for as many more as `max_runs` allows and joins the two records
(`driftcheck.baselines.repeated.joined`). `record_until_decided` does the same with runs taken in this
process, for the studies of benchmarks/ and the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from driftcheck.analysis.more_runs import decided_line, undecided, undecided_line
from driftcheck.baselines.record import BenchRecord
from driftcheck.baselines.repeated import RunFn, RunProgress, combine, joined, repeated_runs, run_repeated
from driftcheck.baselines.serving import ServingPlan, measure_server, measure_sglang_engine
from driftcheck.errors import OptionError, UsageError
from driftcheck.probes.redact import Redactor
from driftcheck.probes.server import redacting_scrub
from driftcheck.snapshot.jsontypes import object_or_empty
from driftcheck.snapshot.keys import load_redaction_secret
from driftcheck.stats.looks import planned_looks

__all__ = ["BenchResult", "ServingPlan", "bench", "decided_record", "record_until_decided"]

# Takes `count` more runs, numbered after the `taken` runs already taken, into one record.
TakeMore = Callable[[int, int], BenchRecord]


def more_runs_wanted(first: BenchRecord, reference: BenchRecord | None, runs: int, max_runs: int,
                     progress: RunProgress | None = None) -> bool:
    """Whether the first look `first` (of `runs` runs) leaves a benchmark undecided against `reference` that
    `max_runs` runs could decide; says which, or that all are decided, to `progress`."""
    if reference is None or len(planned_looks(runs, max_runs)) == 1:
        return False
    pending = undecided(reference, first, max_runs)
    if progress:
        progress(undecided_line(pending, runs, max_runs) if pending else decided_line(runs))
    return bool(pending)


def decided_record(first: BenchRecord, take_more: TakeMore, runs: int, max_runs: int,
                   reference: BenchRecord | None, progress: RunProgress | None = None) -> BenchRecord:
    """`first` (a record of `runs` runs that planned its looks), joined to up to `max_runs - runs` more runs
    from `take_more` where it leaves a benchmark undecided against `reference` and more runs could decide it."""
    if not more_runs_wanted(first, reference, runs, max_runs, progress):
        return first
    return joined(first, take_more(max_runs - runs, runs))


def record_until_decided(run: RunFn, runs: int, max_runs: int, reference: BenchRecord | None,
                         progress: RunProgress | None = None) -> BenchRecord:
    """`runs` runs of `run` in this process, then more where the reference's benchmarks are undecided and more
    runs could decide them, up to `max_runs` in all; one record with the looks planned. Without a reference
    (nothing to decide against) the runs are taken once, as asked."""
    looks = planned_looks(runs, max_runs) if reference is not None else (runs,)
    first = combine(repeated_runs(run, runs, progress), looks)

    def take_more(count: int, taken: int) -> BenchRecord:
        return combine(repeated_runs(run, count, progress, numbered=(taken + 1, taken + count)))

    return decided_record(first, take_more, runs, max_runs, reference, progress)


@dataclass(frozen=True)
class BenchResult:
    """What `bench` measured: the record of a suite's runs or of a serving measurement."""

    data: Mapping[str, object]

    def to_json(self) -> Mapping[str, object]:
        """What `driftcheck bench --format json` prints: the record as measured."""
        return self.data


def bench(*, suite: str = "quick", device: str = "auto", runs: int = 1, budget_s: float | None = None,
          only: Sequence[str] = (), server: str | None = None, sglang_model: str | None = None,
          plan: ServingPlan | None = None, progress: RunProgress | None = None) -> BenchResult:
    """Run the calibrated benchmark `suite` on `device`: `runs` independent runs (each in its own process),
    each within `budget_s` (default: the suite's), only the benchmarks whose name contains one of `only`.
    With `server` (an OpenAI-compatible URL) or `sglang_model` (a model path for sglang's offline engine),
    measure serving with `plan` instead (TTFT, inter-token latency, tokens/s). `progress` receives a line
    per run, or as a serving measurement advances."""
    if server and sglang_model:
        raise OptionError("sglang_model", sglang_model, "measures sglang's own engine; give it or server, not both")
    if (server or sglang_model) and runs > 1:
        raise OptionError("runs", str(runs), "repeats the benchmark suites; a serving measurement takes the "
                                             "requests of its plan instead")
    if server:
        redactor = Redactor(load_redaction_secret())
        measured = measure_server(server, plan or ServingPlan(), redacting_scrub(redactor), progress)
        # The server's own words (its URL with a password, a header, an error it answered) are shown redacted.
        return BenchResult(object_or_empty(redactor.json(measured)))
    if sglang_model:
        return BenchResult(measure_sglang_engine(sglang_model, plan or ServingPlan()))
    data = run_repeated(suite, device, runs, budget_s, list(only) or None, progress)
    if only and not data.get("results"):
        raise UsageError(f"--only {' '.join(only)}: no benchmark of the {suite} suite matches")
    return BenchResult(data)
