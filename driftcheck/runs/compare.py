"""Two runs side by side: how their figures moved, and what the telemetry saw differently.

The figure changes go on top of `explain run:A run:B`; the telemetry findings join the ranked causes
as evidence gathered while the command ran (a snapshot taken at idle cannot see a GPU that throttled
under load, or another process that grabbed it). Runs that used speculative decoding also get their
throughput shift split into accept length and cycle time (runs/speculative.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from driftcheck.runs.shapes import Condition, Spread
from driftcheck.runs.speculative import Decomposition, PlainRun, decompose
from driftcheck.runs.store import RunRecord
from driftcheck.runs.summary import CONDITION_CATEGORIES, gpu_label, share_text

# A condition must cover this much more of one run than of the other to count as a difference.
_CONDITION_DELTA = 0.05
# A median SM clock this much lower in one run is a finding of its own.
_CLOCK_DROP = 0.05
_STEAL_POINTS = 5.0


@dataclass(frozen=True)
class MetricChange:
    """One figure both runs printed: before, after, the relative change, and whether it got worse."""

    name: str
    label: str
    unit: str | None
    before: float
    after: float
    worse: bool | None

    @property
    def change(self) -> float | None:
        """(after - before) / before; None when before is 0."""
        return None if self.before == 0 else (self.after - self.before) / abs(self.before)

    def text(self) -> str:
        """"Output token throughput: 94.1 → 60.3 tok/s (−36%)"."""
        unit = f" {self.unit}" if self.unit else ""
        change = self.change
        if change is None:
            pct = ""
        else:
            digits = 0 if abs(change) >= 0.095 else 1
            pct = f" ({change * 100:+.{digits}f}%)".replace("-", "\u2212")
        verdict = "" if self.worse is None or self.before == self.after else (" worse" if self.worse else " better")
        return f"{self.label}: {_number(self.before)} \u2192 {_number(self.after)}{unit}{pct}{verdict}"

    def to_json(self) -> dict[str, Any]:
        """The change as a row of the report's `runs.metrics`."""
        return {"name": self.name, "label": self.label, "unit": self.unit, "before": self.before,
                "after": self.after, "change": None if self.change is None else round(self.change, 4),
                "worse": self.worse}


@dataclass(frozen=True)
class Finding:
    """Something the telemetry saw in one run and not (as much) in the other."""

    category: str
    title: str
    evidence: str
    confidence: float
    fix: str
    gpu: str | None = None
    before: float | None = None
    after: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The finding as a row of the report's `runs.telemetry`."""
        return {"category": self.category, "title": self.title, "evidence": [self.evidence],
                "confidence": self.confidence, "fix": self.fix}

    def change_row(self) -> dict[str, Any]:
        """The reading this finding rests on, as a row of the report's `changes` (its evidence path)."""
        return {"path": self.evidence, "kind": "changed", "before": self.before, "after": self.after,
                "category": self.category}


def _number(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.0f}"


def metric_changes(a: RunRecord, b: RunRecord) -> list[MetricChange]:
    """The figures both runs printed, the rates first, each group by the size of the move."""
    changes = []
    for metric in a.metrics:
        other = b.metric(metric.name)
        if other is None or other.unit != metric.unit:
            continue
        higher = metric.higher_is_better
        worse = None if higher is None else (other.value < metric.value if higher else other.value > metric.value)
        changes.append(MetricChange(metric.name, metric.label, metric.unit, metric.value, other.value, worse))
    return sorted(changes, key=lambda c: (c.unit is None or not c.unit.endswith("/s"), -abs(c.change or 0.0)))


def _conditions(run: RunRecord) -> dict[tuple[str, str], Condition]:
    return {(c["gpu"], c["kind"]): c for c in run.conditions}


def _fix(kind: str, label: str, condition: Condition) -> str:
    index = label.removeprefix("GPU ").strip()
    if kind == "shared":
        pids = " ".join(condition.get("processes") or {})
        return f"stop the other process on {label} before benchmarking" + (f" (kill {pids})" if pids else "")
    if kind == "power_cap":
        return f"check {label}'s power limit and draw: nvidia-smi -i {index} -q -d POWER"
    if kind == "cpu_throttled":
        return ("raise or remove the container's CPU quota (docker update --cpus N / k8s resources.limits.cpu), "
                "or run fewer CPU threads")
    return f"check cooling and power delivery of {label}: nvidia-smi -i {index} -q -d PERFORMANCE,TEMPERATURE"


def condition_findings(a: RunRecord, b: RunRecord, worse: bool) -> list[Finding]:
    """Conditions (HW slowdown, power cap, thermal, shared GPU) that covered a bigger share of one run."""
    before, after = _conditions(a), _conditions(b)
    findings = []
    for key in sorted(set(before) | set(after)):
        fa = _fraction(before.get(key))
        fb = _fraction(after.get(key))
        if abs(fb - fa) < _CONDITION_DELTA:
            continue
        condition = after.get(key) or before[key]
        kind, label = key[1], condition["label"]
        text = f"{share_text(kind, label, fb, f'run {b.id}')}; {fa * 100:.0f}% in run {a.id}"
        # Most telling when the slower run is the one that spent more time in the condition.
        consistent = (fb > fa) == worse
        confidence = round(min(0.95, (0.55 if consistent else 0.2) + abs(fb - fa) * 0.4), 3)
        evidence = ("runs.telemetry.cpu.quota_throttled.fraction" if kind == "cpu_throttled"
                    else f"runs.telemetry.gpus.{key[0]}.{kind}.fraction")
        findings.append(Finding(CONDITION_CATEGORIES[kind], text, evidence,
                                confidence, _fix(kind, label, condition), key[0], fa, fb))
    return findings


def _fraction(condition: Condition | None) -> float:
    """The share of the run a condition covered; none at all where the run had no such condition."""
    return condition["fraction"] if condition is not None else 0.0


def _median(values: Spread | None) -> float | None:
    return values.get("median") if values else None


def clock_findings(a: RunRecord, b: RunRecord, worse: bool) -> list[Finding]:
    """GPUs whose median SM clock under load differed by more than 5% between the runs."""
    findings = []
    gpus_a = a.telemetry.get("gpus") or {}
    for key, gpu_b in (b.telemetry.get("gpus") or {}).items():
        gpu_a = gpus_a.get(key)
        clock_a = _median(gpu_a.get("sm_mhz")) if gpu_a else None
        clock_b = _median(gpu_b.get("sm_mhz"))
        if not clock_a or not clock_b or abs(clock_b - clock_a) / clock_a < _CLOCK_DROP:
            continue
        label = gpu_label(key, gpu_b)
        consistent = (clock_b < clock_a) == worse
        confidence = round(min(0.9, (0.5 if consistent else 0.15) + abs(clock_b - clock_a) / clock_a), 3)
        findings.append(Finding(
            "gpu_clock_power",
            f"{label} ran at a median SM clock of {clock_b:.0f} MHz in run {b.id}, {clock_a:.0f} MHz in run {a.id}",
            f"runs.telemetry.gpus.{key}.sm_mhz.median", confidence,
            f"see why {label} clocks down: nvidia-smi -i {label.removeprefix('GPU ')} -q -d PERFORMANCE,CLOCK", key,
            clock_a, clock_b))
    return findings


def cpu_findings(a: RunRecord, b: RunRecord, worse: bool) -> list[Finding]:
    """CPU time stolen by the hypervisor, when one run lost clearly more of it."""
    cpu_a, cpu_b = a.telemetry.get("cpu"), b.telemetry.get("cpu")
    steal_a = _median(cpu_a.get("steal_pct")) if cpu_a else None
    steal_b = _median(cpu_b.get("steal_pct")) if cpu_b else None
    if steal_a is None or steal_b is None or abs(steal_b - steal_a) < _STEAL_POINTS:
        return []
    consistent = (steal_b > steal_a) == worse
    return [Finding("container_limits",
                    f"the hypervisor took a median {steal_b:.0f}% of CPU time in run {b.id}, "
                    f"{steal_a:.0f}% in run {a.id}",
                    "runs.telemetry.cpu.steal_pct.median", 0.5 if consistent else 0.15,
                    "run on dedicated (non-overcommitted) CPUs, or compare runs on the same host",
                    before=steal_a, after=steal_b)]


@dataclass
class RunComparison:
    """Everything `explain run:A run:B` adds to the snapshot comparison."""

    a: RunRecord
    b: RunRecord
    changes: list[MetricChange]
    findings: list[Finding]
    speculative: Decomposition | None = None

    @property
    def worse(self) -> bool:
        """Whether B's headline figure (the first change) is worse than A's."""
        return bool(self.changes and self.changes[0].worse)

    def to_json(self) -> dict[str, Any]:
        """The report's `runs` object: both runs, the figure changes, the telemetry findings, and the
        speculative-decoding split when either run used it (or a run without it was given)."""
        report = {"a": _run_ref(self.a), "b": _run_ref(self.b), "metrics": [c.to_json() for c in self.changes],
                  "telemetry": [f.to_json() for f in self.findings]}
        if self.speculative is not None:
            report["speculative"] = self.speculative.to_json()
        return report

    def change_rows(self) -> list[dict[str, Any]]:
        """The telemetry readings the findings cite, for the report's `changes`: every evidence path is there."""
        return [f.change_row() for f in self.findings]


def _run_ref(run: RunRecord) -> dict[str, Any]:
    return {"id": run.id, "label": run.label, "command": run.command, "started_at": run.started_at,
            "exit_code": run.exit_code, "snapshot_id": run.snapshot_id}


def compare_runs(a: RunRecord, b: RunRecord, plain: PlainRun | None = None) -> RunComparison:
    """The figure changes and the telemetry findings of run B against run A; `plain`: the figure of a run
    without speculative decoding, for the break-even accept length."""
    changes = metric_changes(a, b)
    worse = bool(changes and changes[0].worse)
    conditions = condition_findings(a, b, worse)
    # A lower clock on a GPU that also throttled is the symptom; the throttle reason is the cause.
    strongest = {f.gpu: f.confidence for f in sorted(conditions, key=lambda f: f.confidence)}
    clocks = [replace(f, confidence=min(f.confidence, round(strongest[f.gpu] - 0.05, 3))) if f.gpu in strongest
              else f for f in clock_findings(a, b, worse)]
    findings = [*conditions, *clocks, *cpu_findings(a, b, worse)]
    return RunComparison(a, b, changes, sorted(findings, key=lambda f: -f.confidence), decompose(a, b, plain))
