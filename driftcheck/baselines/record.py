"""The benchmark record: what one run of a suite returns, and what several runs combine into (the `bench`
probe's data in a snapshot). The shapes are JSON objects, typed here so that every layer that writes or reads
one (the runner, the combination of runs, the check that joins more runs, the verdicts) names the same keys.

Records come back from child processes and from snapshots written by other driftcheck versions, so every
key is optional to a reader (`total=False`): a reader checks what it needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

from driftcheck.snapshot.jsontypes import JSONObject


class ControlEntry(TypedDict, total=False):
    """The control measured around one benchmark (driftcheck.baselines.control): machine-speed figures."""

    int_1t: float
    copy_1t: float
    all_cores: float
    all_cores_threads: int
    batch_s: float | None


class Efficiency(TypedDict):
    """A median against the datasheet peak of the GPU it ran on (driftcheck.baselines.references)."""

    reference: str
    model: str
    peak: float
    ratio: float


class RunMedian(TypedDict):
    """One run's median of one benchmark, with what that run knew about itself."""

    median: float
    n: int | None
    ci_rel: float
    disturbed: str | None
    taken: float | None
    threads: int | None
    control: ControlEntry | None


class BetweenRuns(TypedDict):
    """The spread of one benchmark's run medians: count, log standard deviation as ±%, min and max."""

    n_runs: int
    spread_pct: float | None
    min: float | None
    max: float | None


class BenchEntry(TypedDict, total=False):
    """One benchmark's result: the summary of its samples (one run's, or the middle run's of several) and,
    in a combined record, every run's median, their spread and the looks a check planned."""

    unit: str
    higher_is_better: bool
    n: int
    median: float
    p10: float
    p90: float
    mad: float
    cv: float | None
    ci_low: float
    ci_high: float
    samples: list[float]
    params: dict[str, object]
    calibration: dict[str, object]
    clocks_before: dict[str, object]
    clocks_after: dict[str, object]
    gpu_index: int | None
    threads: int | None
    control: ControlEntry | None
    efficiency: Efficiency | None
    runs: list[RunMedian]
    between_runs: BetweenRuns
    looks: list[int]


class MachineLoad(TypedDict, total=False):
    """Other work on the machine during a run (driftcheck.baselines.load): its CPUs, the cores others kept busy,
    the 1-minute load average."""

    cpus: int | None
    other_cpu_cores: float
    load_1m: float


class Disturbance(TypedDict, total=False):
    """Other work seen during a run (driftcheck.baselines.disturbance); `disturbed` says it in one line."""

    cpus: int
    other_cpu_cores: float
    steal_pct: float
    other_gpu_processes: list[dict[str, object]] | None
    throttled: list[str]
    taken: float | None
    disturbed: str | None


class Repeat(TypedDict):
    """Why a run was taken twice, and which of the two a record kept."""

    of_run: int
    first_disturbance: str
    kept: str


class SuiteControl(TypedDict, total=False):
    """The control's units, its all-cores thread count, and the seconds it cost the suite."""

    figures: dict[str, str]
    all_cores_threads: int
    seconds: float


class RunReport(TypedDict):
    """How one run of a combined record went."""

    elapsed_s: float | None
    wall_s: float | None
    machine_load: MachineLoad | None
    disturbance: Disturbance | None
    repeat: Repeat | None


class BenchRecord(TypedDict, total=False):
    """A suite's record: one run's (as the runner returns it) or several runs' combined (`runs`, `looks`,
    `run_reports`, `disturbed_runs`), with its results by benchmark name."""

    suite: str
    device: str
    device_name: str
    torch_version: str
    threads: int
    budget_s: float
    elapsed_s: float
    reference: dict[str, object] | None
    skipped: list[str]
    machine_load: MachineLoad | None
    warnings: list[str]
    disturbance: Disturbance | None
    control: SuiteControl
    results: dict[str, BenchEntry]
    run_wall_s: float
    repeat: Repeat
    runs: int
    looks: list[int]
    run_reports: list[RunReport]
    disturbed_runs: list[int]
    # Per benchmark, this host's between-session spread of each figure, as a check measured it before taking
    # the record (driftcheck.analysis.sessions); a figure not measured is absent (the verdict assumes a default).
    between_sessions: dict[str, JSONObject]


def as_bench_record(data: Mapping[str, object] | None) -> BenchRecord | None:
    """`data` (a `bench` probe's data as a snapshot holds it) as a record, when it has results by name; None
    otherwise. The keys inside stay optional to every reader (records of other versions may lack some)."""
    if data is None or not isinstance(data.get("results"), dict):
        return None
    return cast(BenchRecord, data)
