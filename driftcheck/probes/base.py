"""The probe contract: a name, a time limit, `gather` (all I/O, through a Host) and `parse` (pure).

What a change inside a probe's `data` means (its category, whether it is volatile) is not asked of
the probe: it is one table, `driftcheck/snapshot/facts.yaml`, so reading a diff needs no probe code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from driftcheck.errors import ProbeDenied, ProbeUnavailable
from driftcheck.hosts import Host
from driftcheck.snapshot.vocabulary import CATEGORIES, STATUSES

__all__ = ["CATEGORIES", "STATUSES", "Probe", "ProbeDenied", "ProbeOptions", "ProbeUnavailable"]




@dataclass(frozen=True)
class ProbeOptions:
    """Choices the user made that change what probes gather. JSON-able, to cross process boundaries."""

    deep: bool = False
    pids: tuple[int, ...] = ()
    process_patterns: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeOptions:
        return cls(deep=bool(data.get("deep", False)), pids=tuple(data.get("pids", ())),
                   process_patterns=tuple(data.get("process_patterns", ())), extra=dict(data.get("extra", {})))


class Probe(ABC):
    """One facet of the machine. Subclasses set the class attributes and implement gather/parse."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    timeout_s: ClassVar[float] = 20.0
    # Gather in a child process on a local host: for work that can hang or crash the interpreter.
    isolated: ClassVar[bool] = False
    # Names of probes whose success this one needs; if one of them did not succeed, this is `skipped`.
    requires: ClassVar[tuple[str, ...]] = ()
    # Built as `cls(redactor)`: the probe handles values that may hold secrets. Isolated probes must not.
    needs_redactor: ClassVar[bool] = False
    # Part of the cheap default set `driftcheck check` takes before every benchmark.
    cheap: ClassVar[bool] = True
    # Taken only when the user's options ask for it (e.g. `process` needs --pid or --process).
    on_request: ClassVar[bool] = False
    # Runs after the other probes have finished, alone: a benchmark would otherwise measure their work.
    runs_alone: ClassVar[bool] = False

    @abstractmethod
    def gather(self, host: Host, options: ProbeOptions) -> Any:
        """Read what the probe needs through `host`; returns JSON-able raw material."""

    @abstractmethod
    def parse(self, raw: Any) -> dict[str, Any]:
        """Turn the raw material into the probe's JSON-ready data. Pure: no I/O."""

    @classmethod
    def requested(cls, options: ProbeOptions) -> bool:
        """For an `on_request` probe: whether `options` ask for it."""
        return False
