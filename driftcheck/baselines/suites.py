"""The names of the benchmark suites and devices, apart from their plans.

The command line offers these as choices on every start of `snapshot`, `check` and `run`; the plans
(`driftcheck.baselines.plans`) pull in the workloads and timers, which only a benchmark that runs needs.
"""

from __future__ import annotations

SUITES = ("quick", "standard", "full")
DEVICES = ("auto", "cpu", "cuda")
