"""A host whose sessions were measured not to differ: every figure's between-session spread 0 over nine sessions
(what the one-way ANOVA of driftcheck.stats.sessions gives when session means scatter no more than their runs).

Verdicts against the past now count a between-session spread, assumed large where a host has not measured its
own (issue 36). The tests of the rules *within* two records (the pooled t-test, the looks, the control, the
disturbance rule) judge their records on this host, where the added term is zero, so what they check is what
they checked before; the between-session term has its own tests (tests/analysis/test_between_sessions.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from driftcheck.analysis.bench_verdicts import VerdictRow, verdict
from driftcheck.analysis.sessions import FIGURES, BetweenSessions
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.stats.sessions import SessionSpread

MEASURED_STEADY = SessionSpread(0.0, 8, 9, True)


def steady(device: str = "cpu") -> BetweenSessions:
    """Every figure measured steady between sessions on `device`."""
    return BetweenSessions({figure: MEASURED_STEADY for figure in FIGURES}, device)


def steady_between(*names: str) -> dict[str, JSONObject]:
    """A record's `between_sessions` for `names`: every figure measured steady."""
    return {name: {figure: MEASURED_STEADY.to_json() for figure in FIGURES} for name in names}


def on_a_steady_host(record: dict) -> dict:
    """`record` (a bench record with results) as a check takes it on the steady host."""
    return {**record, "between_sessions": steady_between(*record.get("results", {}))}


def verdict_on_a_steady_host(name: str, before: Mapping[str, object] | None, after: Mapping[str, object] | None,
                             device: str = "cpu") -> VerdictRow:
    """`verdict` on the steady host."""
    return verdict(name, before, after, device, steady(device))
