"""What a run record holds, field by field: the telemetry summary kept with it, the conditions said out loud,
the tags of a trial's runs, and the JSON a record, a figure and a trial are printed as.

These cross layers (the run store writes them, `runs`, `explain run:A run:B`, `try`, `bisect` and the HTML
page read them back), so each is written down once, here, as a TypedDict: a record read back from the store
is the same plain dict it was, and a type checker knows its keys.
"""

from __future__ import annotations

from typing import TypedDict


class Spread(TypedDict):
    """Min / median / max of the numbers sampled."""

    min: float
    median: float
    max: float


class CounterGrowth(TypedDict):
    """How much each slowdown counter of a GPU grew (seconds) over the span (seconds) its readings cover."""

    span_s: float
    seconds: dict[str, float]


class GpuSummary(TypedDict):
    """One GPU over a run: the spread of every sampled figure, time in each clock event reason, its slowdown
    counters' growth, and the processes that were not the run's own."""

    index: int | None
    name: str | None
    samples: int
    seconds: float
    sm_mhz: Spread | None
    mem_mhz: Spread | None
    power_w: Spread | None
    power_limit_w: Spread | None
    temp_c: Spread | None
    util_pct: Spread | None
    mem_util_pct: Spread | None
    memory_used_mib: Spread | None
    reason_s: dict[str, float]
    counter_s: CounterGrowth | None
    foreign_pids: list[int]
    foreign_processes: dict[str, str | None]
    shared_s: float
    unresolved_pids: list[int]


class QuotaThrottle(TypedDict):
    """How much of a run the cgroup's CPU quota stopped it."""

    periods: int
    throttled: int
    fraction: float
    throttled_s: float


class CpuSummary(TypedDict):
    """The CPUs over a run: samples, frequency, steal, load, and the quota's throttling."""

    samples: int
    freq_mhz: Spread | None
    steal_pct: Spread | None
    load1: Spread | None
    quota_throttled: QuotaThrottle | None


class _ConditionFigures(TypedDict):
    gpu: str  # the GPU's key, or "cpu" for the CPU quota
    label: str
    kind: str
    seconds: float
    fraction: float


class Condition(_ConditionFigures, total=False):
    """A condition worth saying out loud: a GPU (or the CPU quota) that spent `fraction` of the run slowed."""

    measured: str  # "counters": measured by the driver's counters, not estimated from samples
    processes: dict[str, str | None]  # of a GPU shared with others: pid -> process name


class TrialTags(TypedDict, total=False):
    """What a run of a trial is: its trial's seed, the round and variant, what the variant changes, the figure
    compared; a bisection's runs also name the bisection, the changes tried and the attempt."""

    seed: int
    round: int
    variant: str
    differs_by: str
    figure: str
    bisect: str
    changes: list[str]
    attempt: str


class Telemetry(TypedDict, total=False):
    """A run record's telemetry: the summary of what was sampled while the command ran (a run of `driftcheck
    run`), or the trial it belongs to (a run of `try`, `bisect`, `explain --confirm`)."""

    interval_s: float
    gpu_source: str | None
    gpu_note: str | None
    gpus: dict[str, GpuSummary]
    cpu: CpuSummary
    conditions: list[Condition]
    trial: TrialTags


class MetricJson(TypedDict):
    """A figure as a run record keeps it."""

    name: str
    value: float
    unit: str | None
    label: str
    source: str
    count: int


class RunRecordJson(TypedDict):
    """A run record as `runs --format json` prints it."""

    id: int | None
    label: str | None
    command: list[str]
    cwd: str
    host: str
    started_at: str
    duration_s: float
    exit_code: int
    signal: str | None
    snapshot_id: str | None
    after_snapshot_id: str | None
    metrics: list[MetricJson]
    telemetry: Telemetry


class VariantJson(TypedDict):
    """One side of a trial as reports keep it."""

    name: str
    set_env: dict[str, str]
    unset_env: list[str]
    python: str | None
    command: list[str] | None
    server_command: list[str] | None


class TrialRunJson(TypedDict):
    """One run of a trial: the variant, its round, its figure, how long it took, its run record."""

    variant: str
    round: int
    value: float
    duration_s: float
    run_id: int | None


class TrialJson(TypedDict):
    """A trial as `try --format json` prints it. The look plan and each comparison are the statistics'
    own JSON (`driftcheck.stats.comparison`), each comparison with the trial's verdict added."""

    command: list[str]
    variants: list[VariantJson]
    seed: int
    metric: str
    unit: str | None
    higher_is_better: bool | None
    plan: dict[str, object]
    stopped: str
    elapsed_s: float
    comparisons: dict[str, dict[str, object]]
    runs: list[TrialRunJson]


class StepJson(TypedDict):
    """One trial of a bisection: the changes tried and what the trial found."""

    changes: list[str]
    effect_pct: float
    pairs: int
    p_value: float
    reproduces: bool
    decided: bool
    reused: bool
    run_ids: list[int]


class BisectionJson(TypedDict):
    """A bisection as `bisect --format json` prints it."""

    id: str
    finished: bool
    reused: int
    changes: list[str]
    full: StepJson | None
    culprits: list[str]
    share_pct: float | None
    verdict: str
    steps: list[StepJson]
    rest: StepJson | None


class GpuSeriesJson(TypedDict):
    """One GPU's raw series beside a run record: a column per sampled figure, one entry per sample (None where
    a sample could not read it)."""

    index: int | None
    name: str | None
    t: list[float]
    sm_mhz: list[float | None]
    mem_mhz: list[float | None]
    power_w: list[float | None]
    power_limit_w: list[float | None]
    temp_c: list[float | None]
    util_pct: list[float | None]
    mem_util_pct: list[float | None]
    memory_used_mib: list[float | None]
    reasons: list[list[str] | None]
    counters_us: list[dict[str, int] | None]
    foreign_pids: list[list[int] | None]
    unresolved_pids: list[list[int] | None]
    foreign_names: dict[str, str | None]


class CpuSeriesJson(TypedDict):
    """The CPU side's raw series: frequency, steal, load and the cgroup quota's counters, one entry per sample."""

    t: list[float]
    freq_mhz: list[float | None]
    steal_pct: list[float | None]
    load1: list[float | None]
    nr_periods: list[int | None]
    nr_throttled: list[int | None]
    throttled_usec: list[int | None]


class SeriesJson(TypedDict):
    """Everything sampled during one run, as kept beside its record (`telemetry_series`)."""

    interval_s: float
    gpu_source: str | None
    gpu_note: str | None
    gpus: dict[str, GpuSeriesJson]
    cpu: CpuSeriesJson
