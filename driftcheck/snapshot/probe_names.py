"""The names of the built-in probes, in a snapshot's report order: the one list of them.

`driftcheck.probes` registers one class under each name, in this order (and fails to import where a name and the
classes disagree). Kept apart from the classes so that what only needs the names (the command line's help, the
order of a report's sections) does not import every probe (~30 ms of a `run`'s start, while its target interpreter
could already be at work).
"""

from __future__ import annotations

PROBE_NAMES: tuple[str, ...] = (
    "python",
    "env",
    "packages",
    "kernels",
    "torch",
    "gpu",
    "pcie",
    "nccl",
    "system",
    "cpu",
    "daemons",
    "clocksource",
    "process",
    "server",
    "workdir",
    "bench",
)
