"""The facts table (driftcheck/snapshot/facts.yaml) asked about a path inside one probe's data."""

from __future__ import annotations

from driftcheck.probes.base import Probe
from driftcheck.snapshot import facts
from driftcheck.snapshot.paths import parse_path


def category_of(probe: type[Probe], data_path: str) -> str:
    """The category of a change at `data_path` inside `probe`'s data."""
    return facts.category_of(("probes", probe.name, "data", *parse_path(data_path)))


def is_reading(probe: type[Probe], data_path: str) -> bool:
    """Whether a change at `data_path` inside `probe`'s data is a reading (never a cause)."""
    return facts.is_reading(("probes", probe.name, "data", *parse_path(data_path)))
