"""`bench` probe: the calibrated baseline benchmarks, embedded in a snapshot (`snapshot --bench SUITE`).

Opt-in: it takes tens of seconds and loads torch, so it runs only when asked for. It runs isolated in
a child interpreter (CUDA initialisation can hang or crash) and only on the local machine. Every
number differs run to run, so the whole probe is volatile in a plain diff; a check or an explanation
gives each benchmark a verdict with its resolution instead. With several runs, each is its own process.
The probe measures and never judges: a check that finds a benchmark undecided after these runs asks it
for more (`BenchRequest.taken_before`) and joins the two records itself.
"""

from __future__ import annotations

from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import BenchRequest, Probe, ProbeOptions, ProbeUnavailable


class BenchProbe(Probe):
    name = "bench"
    description = "calibrated baseline benchmarks (opt-in: snapshot --bench quick|standard|full)"
    # Five runs of the full GPU suite (plus repeats of disturbed runs); each run enforces its own budget.
    timeout_s = 3600.0
    isolated = True
    cheap = False
    on_request = True
    runs_alone = True

    @classmethod
    def requested(cls, options: ProbeOptions) -> bool:
        return options.bench is not None

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        if not host.capabilities.in_process:
            raise ProbeUnavailable("benchmarks run only on the local machine")
        # Imported here: the suites pull in torch-facing code, and the looks the statistics modules, that a
        # plain snapshot never needs.
        from driftcheck.baselines.deps import BenchDependencyError
        from driftcheck.baselines.repeated import combine, repeated_runs, suite_run
        from driftcheck.stats.looks import planned_looks

        asked = options.bench or BenchRequest()
        before = asked.taken_before
        # A first look keeps the looks its check planned; a continuation is joined to it by the check.
        looks = planned_looks(asked.runs, asked.max_runs or asked.runs) if not before else None
        try:
            runs = repeated_runs(suite_run(asked.suite, "auto", asked.budget_s), asked.runs, self.steps,
                                 numbered=(before + 1, before + asked.runs))
        except BenchDependencyError as exc:
            raise ProbeUnavailable(str(exc)) from None
        return combine(runs, looks)

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or not isinstance(raw.get("results"), dict):
            raise ValueError("benchmark output has no results")
        return dict(raw)
