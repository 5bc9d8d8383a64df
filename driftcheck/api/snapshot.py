"""`take_snapshot`: probe a machine (this one, one over SSH, a recording) into a signed snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from driftcheck.api._shared import checked_local_log, frozen_tuple, given_host, options_for
from driftcheck.errors import OptionError
from driftcheck.hosts import Host
from driftcheck.hosts.child import StepReporter
from driftcheck.hosts.targets import LOCAL, host_for
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.kernels import HashProgress
from driftcheck.probes.kernels import hash_cache_note as kernels_hash_cache_note
from driftcheck.probes.prober import Prober
from driftcheck.probes.runner import ProgressCallback
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.printable import printable
from driftcheck.store.snapshots import Store


@dataclass(frozen=True)
class SnapshotRequest:
    """What `take_snapshot` probes, where, and what it does with the result.

    `target`: `local` (this machine), `replay:DIR` (a recording from `driftcheck record`) or
    `[user@]host[:port]` (over SSH). `python`: the interpreter whose packages matter there.
    `probes`/`skip` choose probes by name (default: every probe the options do not hold back;
    `cheap_only`: the cheap set `check` takes). `pids`/`processes` (regexes) also describe running
    processes; `server` (an http(s) URL) records what the SGLang / vLLM / OpenAI-compatible server there
    reports about itself, `server_log` (a path on the target) the settings the engine's log says it started
    with (SGLang or vLLM, running or not); `bench` embeds a calibrated benchmark. `sign=False` leaves it unsigned;
    `keep=False` keeps it out of the store. Checked when built (an OptionError names the field).
    """

    label: str | None = None
    probes: Sequence[str] = ()
    skip: Sequence[str] = ()
    target: str = LOCAL
    python: str | None = None
    pids: Sequence[int] = ()
    processes: Sequence[str] = ()
    deep: bool = False
    bench: BenchRequest | None = None
    server: str | None = None
    cheap_only: bool = False
    sign: bool = True
    keep: bool = True
    server_log: str | None = None

    def __post_init__(self) -> None:
        for name in ("probes", "skip", "pids", "processes"):
            frozen_tuple(self, name)
        self.probe_options()  # refuses a bad pid, pattern or URL now, not after the first probes ran

    def probe_options(self) -> ProbeOptions:
        """The options the probes see."""
        return ProbeOptions(deep=self.deep, pids=tuple(self.pids), process_patterns=tuple(self.processes),
                            bench=self.bench, server_url=self.server, server_log=self.server_log)

def take_snapshot(request: SnapshotRequest | None = None, *, label: str | None = None, probes: Sequence[str] = (),
                  skip: Sequence[str] = (), target: str = LOCAL, python: str | None = None, pids: Sequence[int] = (),
                  processes: Sequence[str] = (), deep: bool = False, bench: BenchRequest | None = None,
                  server: str | None = None, cheap_only: bool = False, sign: bool = True, keep: bool = True,
                  server_log: str | None = None, host: Host | None = None, store: Store | None = None,
                  progress: ProgressCallback | None = None, hash_progress: HashProgress | None = None,
                  step_progress: StepReporter | None = None) -> Snapshot:
    """Probe the machine `target` names (or `host`, e.g. a connected SSHHost) and return the snapshot,
    signed and kept in `store` (default: the user's) unless told otherwise:

        driftcheck.take_snapshot(label="before run", python="/opt/venv/bin/python")

    The options are SnapshotRequest's fields, as keywords (or a SnapshotRequest, not both); checked
    before anything is probed (an OptionError names the field).
    `progress`/`hash_progress`/`step_progress` receive progress reports (probes done; compiled files
    hashed; steps inside a long probe, a benchmark's runs).
    """
    asked = SnapshotRequest(label=label, probes=probes, skip=skip, target=target, python=python, pids=pids,
                            processes=processes, deep=deep, bench=bench, server=server, cheap_only=cheap_only,
                            sign=sign, keep=keep, server_log=server_log)
    if request is not None and asked != SnapshotRequest():
        raise OptionError("request", None, "give the options as keywords or as a SnapshotRequest, not both")
    request = request or asked
    reporters = (progress, hash_progress, step_progress)
    if host is not None:
        return _take(request, given_host(host, request.target, request.python), store, reporters)
    with host_for(request.target, request.python) as opened:
        return _take(request, opened, store, reporters)


def _take(request: SnapshotRequest, host: Host, store: Store | None,
          reporters: tuple[ProgressCallback | None, HashProgress | None, StepReporter | None]) -> Snapshot:
    progress, hash_progress, step_progress = reporters
    options = request.probe_options()
    if host.capabilities.in_process and not host.capabilities.recorded:
        options = replace(options, server_log=checked_local_log(request.server_log))
    prober = Prober.for_user(host, options_for(host, options), sign=request.sign,
                             store=(store or Store()) if request.keep else None, progress=progress,
                             hash_progress=hash_progress, step_progress=step_progress)
    return prober.snapshot(prober.probes(request.probes, request.skip, request.cheap_only), label=request.label)


def keep_snapshot(snapshot: Snapshot, *, store: Store | None = None) -> None:
    """Keep `snapshot` in `store` (default: the user's), as `take_snapshot` does unless told not to."""
    (store or Store()).add(snapshot)


def server_probe_note(snapshot: Snapshot) -> str | None:
    """One line when the server probe, which runs only when asked (`server`, `server_log`), could not give what it
    was asked: its outcome's reason (no server answered, the log holds no engine start), or, beside a server that
    answered, why the log's settings were not read. None when it gave it, or did not run. Control characters
    escaped (a path or a server's words are printed as they are)."""
    outcome = snapshot.document["probes"].get("server")
    if not isinstance(outcome, dict):
        return None
    if outcome.get("status") != "ok":
        error = outcome.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        return printable(f"server probe: {message or outcome.get('status')}")
    log = (snapshot.probe_data("server") or {}).get("server_log")
    if isinstance(log, dict) and not log.get("found") and log.get("why"):
        return printable(f"server probe: {log['why']}")
    return None


def hash_cache_note(snapshot: Snapshot) -> str | None:
    """One line on what the compiled-file hash cache saved while `snapshot` was taken; None when its
    kernels probe did not run."""
    return kernels_hash_cache_note(snapshot.probe_data("kernels"))
