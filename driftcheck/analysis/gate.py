"""`driftcheck check`: the pre-benchmark gate. A fresh snapshot against a reference, under a policy
(`driftcheck.analysis.policy`): the verdict, a function of the two snapshots. Which reference, which probes to
retake and the taking itself are the check's orchestration (`driftcheck.api.check`).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from driftcheck.analysis.bench_verdicts import SHIFTS, verdict_line
from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explained, explain
from driftcheck.analysis.explain.model import NOISE_FLOOR, Explanation
from driftcheck.analysis.policy import Policy, violations
from driftcheck.errors import OptionError
from driftcheck.snapshot.model import Snapshot


def restricted_to(reference: Snapshot, probes: list[str]) -> Snapshot:
    """`reference` with only the probes a check took, so probes it left out are not "missing"."""
    document = copy.deepcopy(reference.document)
    document["probes"] = {name: outcome for name, outcome in document["probes"].items() if name in probes}
    return Snapshot(document, reference.source)


# The noise floor: causes below this confidence (an unrelated variable such as LANG, a fact no rule knows)
# are shown but do not fail the gate on their own, and an unchanged machine ranks nothing above it
# (tests/analysis/test_null_corpus.py).
DEFAULT_MIN_CONFIDENCE = NOISE_FLOOR


@dataclass
class CheckResult:
    """The verdict of `driftcheck check`."""

    reference: Snapshot
    fresh: Snapshot
    explained: Explained
    violations: list[str] = field(default_factory=list)
    min_confidence: float = DEFAULT_MIN_CONFIDENCE

    @property
    def relevant(self) -> list[Explanation]:
        """The explanations confident enough to count as drift. One that rests on readings alone (a clock
        read under load) is shown but never fails the gate: a reading moves on its own (facts.yaml)."""
        readings = {change.path for change in self.explained.diff.readings}
        return [e for e in self.explained.explanations
                if e.confidence >= self.min_confidence and not set(e.evidence) <= readings]

    @property
    def bench_shifts(self) -> list[dict[str, Any]]:
        """Benchmarks that moved beyond their minimum detectable shift (`slower` or `faster`)."""
        return [row for row in self.explained.bench if row.get("verdict") in SHIFTS]

    @property
    def shift_lines(self) -> list[str]:
        """Each benchmark beyond its minimum detectable shift, as `name: verdict text`."""
        return [verdict_line(row) for row in self.bench_shifts]

    @property
    def drift(self) -> bool:
        """The verdict: a confident enough cause, a policy violation, or a benchmark that moved.

        An `inconclusive` benchmark never counts: the records could not tell a change from noise.
        """
        return bool(self.relevant or self.violations or self.bench_shifts)

    def to_json(self) -> dict[str, Any]:
        """What `driftcheck check --format json` prints: the explain report, the violations, the verdict."""
        report = self.explained.to_json()
        report["violations"] = self.violations
        report["drift"] = self.drift
        report["bench_shifts"] = [str(row.get("name")) for row in self.bench_shifts]
        return report


def check_min_confidence(value: object) -> float:
    """`value` if it is a usable confidence floor (a finite number from 0 to 1); OptionError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        raise OptionError("min_confidence", repr(value), "give a number from 0 to 1")
    return float(value)


def check_against(reference: Snapshot, fresh: Snapshot, policy: Policy | None = None,
                  min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> CheckResult:
    """Compare `fresh` with `reference` (only the probes `fresh` took) and apply the policy.

    `min_confidence` must be a finite number from 0 to 1 (OptionError otherwise): nan or 5 would pass
    any drift, a gate switched off by a typo."""
    check_min_confidence(min_confidence)
    policy = policy or Policy()
    base = restricted_to(reference, list(fresh.document["probes"]))
    explained = explain(diff_snapshots(base, fresh), ignore=policy.ignores)
    return CheckResult(reference, fresh, explained, violations(policy, fresh), min_confidence)

