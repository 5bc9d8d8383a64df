"""A check's verdict as the operators' stacks need it: which reference, drift or not, its causes by category.

Prometheus metrics, node-feature-discovery labels and a Slurm drain reason are all written from this one
small record, built by the face from a `CheckResult`, so none of them reaches into the analysis.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DriftVerdict:
    """`reference`: what was checked against (a baseline name or a snapshot id); `drift`: the gate's verdict;
    `causes`: the number of causes confident enough to count, by category; `first_cause`: the title of the
    highest-ranked one (None when there is none); `checked_at`: when, in Unix seconds."""

    reference: str
    drift: bool
    checked_at: float
    causes: Mapping[str, int] = field(default_factory=dict)
    first_cause: str | None = None
