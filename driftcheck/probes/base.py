"""The probe contract: a name, a time limit, `gather` (all I/O, through a Host) and `parse` (pure).

What a change inside a probe's `data` means (its category, whether it is volatile) is not asked of
the probe: it is one table, `driftcheck/snapshot/facts.yaml`, so reading a diff needs no probe code.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from driftcheck.errors import OptionError, ProbeDenied, ProbeUnavailable, UsageError
from driftcheck.hosts import Host, ScriptCall
from driftcheck.serving.http import parse_url
from driftcheck.snapshot.vocabulary import CATEGORIES, STATUSES

__all__ = ["CATEGORIES", "STATUSES", "BenchRequest", "Probe", "ProbeDenied", "ProbeOptions", "ProbeUnavailable"]


@dataclass(frozen=True)
class BenchRequest:
    """A calibrated benchmark suite to run into a snapshot: `runs` independent runs, each within `budget_s`.

    The probe only measures; a check judges. `max_runs` above `runs` says the check may take more runs, up to
    `max_runs` in all, where these leave a benchmark undecided: the record keeps the looks it planned, so
    each is judged at its share of the level (driftcheck.stats.looks). `taken_before`: the runs an earlier
    request of the same check took, which these runs continue (numbered after them)."""

    suite: str = "quick"
    runs: int = 1
    budget_s: float | None = None
    max_runs: int | None = None
    taken_before: int = 0

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise OptionError("runs", str(self.runs), "must be at least 1")
        if self.budget_s is not None and self.budget_s <= 0:
            raise OptionError("budget_s", f"{self.budget_s:g}", "must be positive")
        if self.max_runs is not None and self.max_runs < self.runs:
            raise OptionError("max_runs", str(self.max_runs), f"must be at least the runs ({self.runs})")
        if self.taken_before < 0:
            raise OptionError("taken_before", str(self.taken_before), "must be 0 or more")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchRequest:
        budget, most = data.get("budget_s"), data.get("max_runs")
        return cls(str(data.get("suite", "quick")), int(data.get("runs", 1)),
                   float(budget) if budget is not None else None, int(most) if most is not None else None,
                   int(data.get("taken_before") or 0))


@dataclass(frozen=True)
class ProbeOptions:
    """Choices the user made that change what probes gather, checked when built (an OptionError names the
    field). JSON-able, to cross process boundaries and to be kept in a recording.

    `bench` asks for the `bench` probe, `server_url` for the `server` probe (the engine's own report), and so
    does `server_log` (the path of the engine's log on the probed machine: the settings it started with, read
    from its startup lines, a server that runs no more included); `workdir` for the `workdir` probe (the git
    commit of the directory a run ran in)."""

    deep: bool = False
    pids: tuple[int, ...] = ()
    process_patterns: tuple[str, ...] = ()
    bench: BenchRequest | None = None
    server_url: str | None = None
    workdir: str | None = None
    server_log: str | None = None

    def __post_init__(self) -> None:
        bad_pids = [pid for pid in self.pids if pid <= 0]
        if bad_pids:
            raise OptionError("pids", str(bad_pids[0]), "a process id is a positive number")
        for pattern in self.process_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise OptionError("processes", repr(pattern), f"not a regular expression ({exc})") from None
        if self.server_url is not None and not _is_http_url(self.server_url):
            raise OptionError("server", repr(self.server_url), "expected an http(s)://HOST[:PORT] URL")
        if self.server_log is not None and (not self.server_log.strip() or "\0" in self.server_log):
            raise OptionError("server_log", repr(self.server_log), "give the path of the server's log file")

    def to_json(self) -> dict[str, Any]:
        return {"deep": self.deep, "pids": list(self.pids), "process_patterns": list(self.process_patterns),
                "bench": self.bench.to_json() if self.bench else None, "server_url": self.server_url,
                "workdir": self.workdir, "server_log": self.server_log}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeOptions:
        """Options as `to_json` wrote them (keys a recording of an older driftcheck holds are ignored)."""
        bench = data.get("bench")
        return cls(deep=bool(data.get("deep", False)), pids=tuple(data.get("pids", ())),
                   process_patterns=tuple(data.get("process_patterns", ())),
                   bench=BenchRequest.from_json(bench) if isinstance(bench, dict) else None,
                   server_url=data.get("server_url") or None, workdir=data.get("workdir") or None,
                   server_log=data.get("server_log") or None)


def _is_http_url(url: str) -> bool:
    """Whether `url` is an http(s) URL with a host, as the server probe's client reads URLs."""
    try:
        parse_url(url)
    except UsageError:
        return False
    return True


class Probe(ABC):
    """One facet of the machine. Subclasses set the class attributes and implement gather/parse."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    timeout_s: ClassVar[float] = 20.0
    # Gather in a child process on a local host: for work that can hang or crash the interpreter.
    isolated: ClassVar[bool] = False
    # Names of probes whose success this one needs; if one of them did not succeed, this is `skipped`.
    requires: ClassVar[tuple[str, ...]] = ()
    # Commands whose answer is one fact of the machine for every probe that asks (a listing that changes nothing,
    # such as `ldconfig -p`): their first answer in a snapshot serves every probe and step that asks
    # (driftcheck.hosts.shared.SharedCommandsHost). The next snapshot runs them again.
    shared_commands: ClassVar[tuple[tuple[str, ...], ...]] = ()
    # Built as `cls(redactor)`: the probe handles values that may hold secrets. Isolated probes must not.
    needs_redactor: ClassVar[bool] = False
    # Part of the cheap default set `driftcheck check` takes before every benchmark.
    cheap: ClassVar[bool] = True
    # Taken only when the user's options ask for it (e.g. `process` needs --pid or --process).
    on_request: ClassVar[bool] = False
    # Runs after the other probes have finished, alone: a benchmark would otherwise measure their work.
    runs_alone: ClassVar[bool] = False
    # Where a long probe reports the steps of its work (a benchmark's runs), one line each; None: nowhere.
    # An isolated probe's steps come back from its child as they happen (driftcheck.hosts.child).
    steps: Callable[[str], None] | None = None

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

    def isolated_with(self, options: ProbeOptions) -> bool:
        """Whether this run of the probe gathers in a child process (`isolated`); a probe whose risky work
        is only done with some options (torch's import with --deep) says so here."""
        return self.isolated

    def interpreter_calls(self, host: Host, options: ProbeOptions) -> list[ScriptCall]:
        """The facts-script calls `gather` will make of the target interpreter, named before it runs so
        that one run of that interpreter answers every probe's (driftcheck.hosts.shared). Any I/O needed
        to name them goes through `host`; a call not named here is still answered, by a run of its own."""
        return []

    def unavailable_on(self, host: Host) -> str | None:
        """Why nothing can be gathered on `host`, where a look of microseconds tells (no device, no driver),
        checked before `gather` and before an isolated probe's child is started; None: go on and gather."""
        return None

    # What a recording of the probe needs (driftcheck.probes.record asks every probe it records).

    def record_file(self, path: str, content: bytes) -> bytes | None:
        """What a recording stores of the file at `path` when the probe keeps less than the file (the boot
        flags of /proc/cmdline the system probe reads); None: the file is stored as read, redacted."""
        return None

    def recorded_processes(self, data: Mapping[str, object] | None, files: Mapping[str, bytes],
                           options: ProbeOptions) -> set[int]:
        """The processes whose /proc/<pid> files a replay of the probe needs, from its parsed `data` (None
        when it did not succeed) and the recorded `files`. A recording drops the files of every other
        process, so other users' command lines stay private."""
        return set()
