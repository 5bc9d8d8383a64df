"""`driftcheck check`: the pre-benchmark gate. A fresh snapshot against a reference, under a policy
(`driftcheck.analysis.policy`): which reference, which probes to retake, and the verdict.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explained, explain
from driftcheck.analysis.explain.model import NOISE_FLOOR
from driftcheck.analysis.policy import Policy, violations
from driftcheck.analysis.targets import Target, reference_target
from driftcheck.baselines.verdict import SHIFTS
from driftcheck.errors import OptionError, UnknownSnapshotError, UsageError
from driftcheck.probes import probe_class
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.named import NamedSnapshots
from driftcheck.store.snapshots import Store


def check_reference(against: str | None, store: Store, host_name: str,
                    resolve_snapshot: Callable[[str, Store], Snapshot]) -> Snapshot:
    """What `driftcheck check` compares with: `against` (a baseline name or any snapshot reference), else
    baseline `default`, else the newest snapshot probed on this host (never an import or a replay).
    `resolve_snapshot` turns a reference into a snapshot (the face's `api.references`)."""
    named = NamedSnapshots(store)
    names = [b.name for b in named.entries()]
    if against:
        if against in names:
            return named.snapshot(against)
        try:
            return resolve_snapshot(against, store)
        except UnknownSnapshotError as exc:
            known = f"baselines: {', '.join(names)}" if names else "no baselines saved yet"
            raise UnknownSnapshotError(against, f"no such baseline, and {exc.reason} ({known})") from None
    if "default" in names:
        return named.snapshot("default")
    for entry in store.entries():
        if entry.host != host_name:
            continue
        snapshot = resolve_snapshot(entry.id, store)
        if snapshot.document.get("origin") == "probed":
            return snapshot
    raise UsageError(f"nothing to check against: no baseline `default` and no snapshot probed on {host_name}; "
                     "run `driftcheck baseline save default` first")


def probes_to_check(reference: Snapshot) -> list[str]:
    """The cheap built-in probes that `reference` holds: what a fresh check must take to compare with it;
    the `server` probe too when the reference recorded the server it asked (`retaken_target` gives its URL)."""
    names = []
    server = reference_target(reference).server
    for name in reference.document["probes"]:
        cls = probe_class(name)
        if cls is not None and cls.cheap and (not cls.on_request or (name == "server" and server)):
            names.append(name)
    return names


def _runnable_here(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def retaken_target(reference: Snapshot, python: str | None, host_name: str, local: bool = True) -> Target:
    """What a check of `reference` probes: the interpreter the user named, else the one the reference
    recorded when it was taken on this host (`host_name`) and still runs here, else None (our own; the
    difference then leads the report); the server URL the reference asked. `local`: this machine is probed
    (on another host the reference's path cannot be checked from here, and is used as recorded)."""
    recorded = reference_target(reference)
    if python is None and recorded.python and recorded.host == host_name \
            and (not local or _runnable_here(recorded.python)):
        python = recorded.python
    return Target(python=python, host=host_name, server=recorded.server, bench_suite=recorded.bench_suite,
                  bench_runs=recorded.bench_runs)


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
    def relevant(self) -> list[Any]:
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

