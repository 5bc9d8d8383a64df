"""`slurm_health`: Slurm's HealthCheckProgram (or an NHC check) for drift. Check this node against its
baseline within a deadline; on drift drain it with the first cause as the reason; resume it only when driftcheck
drained it and the drift is gone. A node drained for any other reason is left as it is."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from driftcheck.analysis.drift_summary import drift_verdict, reference_name
from driftcheck.api.bounded import within
from driftcheck.api.check import CheckRequest, check
from driftcheck.errors import OptionError
from driftcheck.remote.slurm_drain import NodeState, drain, drain_reason, node_state, resume, this_node
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.store.snapshots import Store

# Slurm kills a HealthCheckProgram that runs longer than 60 s (slurm.conf(5), Slurm 22.05); the check gets
# this much of it, the rest is for starting the interpreter and the two Slurm commands (10 s each at most).
SLURM_LIMIT_S = 60.0
DEFAULT_DEADLINE_S = 30.0

DRAINED = "drained"
RESUMED = "resumed"
KEPT = "kept drained"
NOT_OURS = "left alone (drained by someone else)"
NOTHING = "none"


@dataclass(frozen=True)
class SlurmHealthRequest:
    """`against`: the reference (default as `check`: baseline `default`, else the newest snapshot probed here);
    `policy`: a policy YAML file; `node`: this node's Slurm NodeName (default: the short host name);
    `deadline_s`: how long the check may take (never the benchmark: a health check reruns none)."""

    against: str | None = None
    policy: str | Path | None = None
    node: str | None = None
    deadline_s: float = DEFAULT_DEADLINE_S

    def __post_init__(self) -> None:
        if not 0 < self.deadline_s < SLURM_LIMIT_S:
            raise OptionError("deadline_s", f"{self.deadline_s:g}",
                              f"give more than 0 and less than Slurm's {SLURM_LIMIT_S:g} s")


@dataclass(frozen=True)
class SlurmHealth:
    """What the health check found and did: `action` is one of DRAINED, RESUMED, KEPT, NOT_OURS, NOTHING."""

    node: str
    verdict: DriftVerdict
    state_before: NodeState
    action: str
    reason: str | None
    elapsed_s: float

    def to_json(self) -> JSONObject:
        """The outcome as `driftcheck slurm-health --format json` prints it."""
        return {"node": self.node, "drift": self.verdict.drift, "reference": self.verdict.reference,
                "first_cause": self.verdict.first_cause, "state_before": self.state_before.state,
                "reason_before": self.state_before.reason or None, "action": self.action, "reason": self.reason,
                "elapsed_s": round(self.elapsed_s, 3)}


def _act(state: NodeState, verdict: DriftVerdict) -> tuple[str, str | None]:
    """Drain on drift, resume our own drain once the drift is gone; never touch another's drain."""
    if state.drained and not state.drained_by_driftcheck:
        return NOT_OURS, state.reason
    if verdict.drift:
        if state.drained_by_driftcheck:
            return KEPT, state.reason
        reason = drain_reason(verdict.first_cause or "drift")
        drain(state.node, reason)
        return DRAINED, reason
    if state.drained_by_driftcheck:
        resume(state.node)
        return RESUMED, None
    return NOTHING, None


def slurm_health(request: SlurmHealthRequest | None = None, *, store: Store | None = None) -> SlurmHealth:
    """Check this node within `request.deadline_s` and drain or resume it by the verdict.

    Trouble (no baseline, a deadline passed, Slurm's commands missing) raises before the node is touched, so a
    health check that cannot tell never drains a node, nor resumes one.
    """
    request = request or SlurmHealthRequest()
    started = time.monotonic()
    store = store or Store()
    node = request.node or this_node()
    checked = CheckRequest(against=request.against, policy=request.policy, rerun_bench=False, keep=False,
                           label="driftcheck slurm-health")
    result = within(request.deadline_s, lambda: check(checked, store=store), "the check")
    verdict = drift_verdict(result, reference_name(request.against, result, store))
    state = node_state(node)
    action, reason = _act(state, verdict)
    return SlurmHealth(node, verdict, state, action, reason, time.monotonic() - started)
