"""Running probes: concurrently, each under its own time limit, never letting one sink the snapshot.

Every probe ends in an outcome: ok, unavailable, denied, timeout, error (type, message, short
traceback) or skipped (a probe it requires did not succeed). A probe that hangs is abandoned at its
limit (its thread is a daemon; an isolated probe's process is killed) and the rest goes on.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from driftcheck.errors import ProbeUnavailable, probe_status, probe_status_by_name
from driftcheck.hosts import Host, ScriptCall
from driftcheck.hosts.child import ChildDied, ChildFailed, ChildTimeout, call
from driftcheck.hosts.shared import HeldBackScripts, SharedCommandsHost, SharedScriptsHost
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue


@dataclass
class ProbeOutcome:
    """How one probe ended, and its data when it succeeded."""

    status: str
    data: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    duration_s: float = 0.0

    def to_json(self) -> JSONObject:
        return {"status": self.status, "data": self.data, "error": self.error,
                "duration_s": round(self.duration_s, 4)}


ProgressCallback = Callable[[str, ProbeOutcome, int, int], None]


def _short_traceback(exc: BaseException, frames: int = 4) -> str:
    import traceback  # only here: a snapshot whose probes all end well never formats one (it brings textwrap)

    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-frames)).strip()


def outcome_from_exception(exc: BaseException, duration_s: float) -> ProbeOutcome:
    """The outcome a probe ends in when `gather` or `parse` raised `exc` (see errors.PROBE_OUTCOMES)."""
    message = str(exc) or type(exc).__name__
    status = probe_status(exc)
    error = {"type": type(exc).__name__, "message": message}
    if status == "error":
        error["traceback"] = _short_traceback(exc)
    return ProbeOutcome(status, error=error, duration_s=duration_s)


def _probe_reference(probe: Probe) -> str:
    cls = type(probe)
    return f"{cls.__module__}:{cls.__qualname__}"


def _gather_isolated(probe: Probe, host: Host, options: ProbeOptions, timeout_s: float) -> JSONValue:
    """Run `probe.gather` in a child interpreter; a hang is killed, a crash is an error, not ours."""
    request = {"probe": _probe_reference(probe), "python": host.target_python, "options": options.to_json()}
    try:
        return call("driftcheck.probes.isolated", request, timeout_s, probe.steps)
    except ChildDied as exc:
        raise RuntimeError(f"isolated probe process {exc}") from None


def run_one(probe: Probe, host: Host, options: ProbeOptions) -> ProbeOutcome:
    """Gather and parse one probe in this thread, turning every failure into an outcome."""
    started = time.monotonic()
    try:
        reason = probe.unavailable_on(host)
        if reason is not None:
            raise ProbeUnavailable(reason)
        if probe.isolated_with(options) and host.capabilities.in_process:
            raw = _gather_isolated(probe, host, options, probe.timeout_s)
        else:
            raw = probe.gather(host, options)
        data = probe.parse(raw)
    except ChildTimeout as exc:
        return ProbeOutcome("timeout", error={"type": "timeout", "message": f"isolated probe {exc}"},
                            duration_s=time.monotonic() - started)
    except ChildFailed as exc:
        status = probe_status_by_name(exc.type_name)
        error = {"type": exc.type_name, "message": str(exc)}
        if status == "error":
            error["traceback"] = exc.child_traceback
        return ProbeOutcome(status, error=error, duration_s=time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - a probe must never bring down the snapshot
        return outcome_from_exception(exc, time.monotonic() - started)
    return ProbeOutcome("ok", data=data, duration_s=time.monotonic() - started)


def _dependency_waves(probes: Sequence[Probe]) -> list[list[Probe]]:
    """Probes grouped so that each runs after the probes it requires (those present in the run)."""
    names = {p.name for p in probes}
    done: set[str] = set()
    pending = list(probes)
    waves: list[list[Probe]] = []
    while pending:
        ready = [p for p in pending if all(r in done or r not in names for r in p.requires)]
        if not ready:  # a cycle: run the rest together rather than never
            ready = pending
        waves.append(ready)
        done.update(p.name for p in ready)
        pending = [p for p in pending if p not in ready]
    return waves


def run_probes(host: Host, probes: Sequence[Probe], options: ProbeOptions | None = None,
               progress: ProgressCallback | None = None) -> dict[str, ProbeOutcome]:
    """Run `probes` against `host` concurrently; returns name → outcome for every probe given."""
    options = options or ProbeOptions()
    outcomes: dict[str, ProbeOutcome] = {}
    total = len(probes)
    # Made anew for each run of the probes: a command's shared answer never outlives the snapshot it was run for.
    shared_commands = {tuple(argv) for probe in probes for argv in probe.shared_commands}
    if shared_commands:
        host = SharedCommandsHost(host, shared_commands)
    # Facts-script calls are held back from the prefetch: one run of the target interpreter answers them below.
    host.prefetch(lambda target: _gather_each(HeldBackScripts(target), probes, options))
    shared = _sharing_interpreter_runs(host, probes, options)
    if shared is not None:
        if host.capabilities.few_calls:
            # The reads that follow a script's answer (the files of sys.path, the tools a listing names) are
            # learnt ahead too, once the one run has answered: the prefetch speculates on the host itself.
            shared.wait()
            host.prefetch(lambda target: _gather_each(shared, probes, options))
        host = shared
    for wave in _dependency_waves(probes):
        runnable = []
        for probe in wave:
            failed = [r for r in probe.requires if r in outcomes and outcomes[r].status != "ok"]
            if failed:
                message = f"requires {', '.join(failed)}, which did not succeed"
                outcomes[probe.name] = ProbeOutcome("skipped", error={"type": "skipped", "message": message})
                if progress:
                    progress(probe.name, outcomes[probe.name], len(outcomes), total)
            else:
                runnable.append(probe)
        _run_wave(host, runnable, options, outcomes, progress, total)
    return outcomes


def _sharing_interpreter_runs(host: Host, probes: Sequence[Probe], options: ProbeOptions) -> SharedScriptsHost | None:
    """`host`, with the facts-script calls the probes name ahead answered by one run of the target interpreter
    (None: no probe names one).

    Only probes that will surely gather here take part: not one gathering in a child process (it has a host
    of its own there), not one that may be skipped for a probe it requires, not one unavailable on `host`.
    A probe that fails to name its calls names none; its gather then asks, and reports, as before.
    """
    names = {probe.name for probe in probes}
    calls: list[ScriptCall] = []
    for probe in probes:
        if (probe.isolated_with(options) and host.capabilities.in_process) or any(r in names for r in probe.requires):
            continue
        try:
            if probe.unavailable_on(host) is None:
                calls.extend(probe.interpreter_calls(host, options))
        except Exception:  # noqa: BLE001, S112 - its own run below reports the probe's failure
            continue
    return SharedScriptsHost(host, calls) if calls else None


def _gather_each(host: Host, probes: Sequence[Probe], options: ProbeOptions) -> None:
    """Every probe's gather once against `host`, failures ignored: a host learns from it what will be asked."""
    for probe in probes:
        if probe.isolated_with(options) and host.capabilities.in_process:
            continue
        try:
            probe.gather(host, options)
        except Exception:  # noqa: BLE001, S112 - the real run below reports each probe's failure
            continue


def _run_wave(host: Host, probes: Sequence[Probe], options: ProbeOptions, outcomes: dict[str, ProbeOutcome],
              progress: ProgressCallback | None, total: int) -> None:
    finished: queue.Queue[tuple[str, ProbeOutcome]] = queue.Queue()
    started = time.monotonic()
    for probe in probes:
        thread = threading.Thread(target=lambda p=probe: finished.put((p.name, run_one(p, host, options))),
                                  name=f"probe-{probe.name}", daemon=True)
        thread.start()
    # Isolated probes enforce their own limit in the child; a small grace lets that report arrive first.
    deadlines = {p.name: started + p.timeout_s + (1.0 if p.isolated_with(options) else 0.0) for p in probes}
    waiting = set(deadlines)
    while waiting:
        remaining = min(deadlines[name] for name in waiting) - time.monotonic()
        try:
            name, outcome = finished.get(timeout=max(remaining, 0.0))
        except queue.Empty:
            now = time.monotonic()
            for name in sorted(n for n in waiting if deadlines[n] <= now):
                limit = deadlines[name] - started
                outcomes[name] = ProbeOutcome("timeout", error={"type": "timeout",
                                              "message": f"no answer within {limit:g} s; abandoned"},
                                              duration_s=now - started)
                waiting.discard(name)
                if progress:
                    progress(name, outcomes[name], len(outcomes), total)
            continue
        if name in waiting:
            outcomes[name] = outcome
            waiting.discard(name)
            if progress:
                progress(name, outcome, len(outcomes), total)
