"""One recorded run, end to end: a cheap snapshot, the command watched and scanned, a second reading, the record.

The snapshots are taken with the cheap probes (or the ones asked for) and kept in the store like any
other; the run record points at both. When the command is a Python interpreter (`python bench.py`,
`/root/ml-env/bin/python3 -m sglang.bench_serving`), that interpreter is the one whose packages the
snapshot describes, unless `--python` says otherwise.

What overlaps what: the snapshot before is taken whole before the command starts, never beside it. Gathered while
the command starts, it would read the command's own doing as the state it started in (a benchmark that sets clocks
or installs a package first, its process and memory on the GPUs, clocks raised by its load), and its probes (a
target interpreter started, kernel libraries hashed) would take CPU and disk from the command's first seconds,
which its recorded duration counts. What the snapshot before leaves idle is used: once its first probe has answered
(its probes then wait on the target interpreter), the signing key is loaded and the modules of watching the command
imported, in threads of their own. Once the command runs, the snapshot before is stored and the modules of its end
(the scan's patterns, the record) imported beside it (`_BesideCommand`): ~10 ms of CPU each, which held its start
back, and which a command leaves room for as it does for the pumps of its output (a command that takes every CPU
pays them once, early; its recorded duration may count them). The reading after starts the moment the command has
ended (its sampling stopped first), in a thread, while the rest of its output is drained and scanned: by then
nothing of the command runs that driftcheck waits for, and the scan is driftcheck's own work. Each snapshot's one
run of the target interpreter starts before its request is known (hosts/warm.py): the one before while
`driftcheck.api.run` still imports the run's modules, the one after at the command's end, from an interpreter
started at the command's start and held before site (facts_held: nothing it answers is read until the command has
ended). Nothing of the reading before is reused after: the command may change any of it (a new launch lets an
untaken one go).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from driftcheck.errors import DriftcheckError
from driftcheck.hosts.base import ScriptCall
from driftcheck.hosts.targets import local_host
from driftcheck.nvidia.driver import missing_driver
from driftcheck.probes.background import Background
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.prober import Prober, signing_key_loading
from driftcheck.runs.interpreter import command_python
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.printable import printable
from driftcheck.store.pins import Pin
from driftcheck.store.snapshots import Store

if TYPE_CHECKING:
    from driftcheck.runs.execute import Finished
    from driftcheck.runs.metrics import Metric, Pattern
    from driftcheck.runs.output import OutputReader
    from driftcheck.runs.shapes import SeriesJson
    from driftcheck.runs.store import RunRecord

# What watching the command from its start imports (~10-15 ms: its pumps, its sampling), loaded by
# `_import_watch_modules` while the snapshot before is taken: its probes mostly wait on the target interpreter
# then. What only the command's end needs (the scan's patterns, the run's summary and record) is imported beside
# the command (`_BesideCommand`).
_WATCH_MODULES = ("driftcheck.runs.execute", "driftcheck.runs.telemetry")
_END_MODULES = ("driftcheck.runs.summary", "driftcheck.runs.store")


@dataclass
class RunPlan:
    """What `driftcheck run` was asked to do."""

    argv: list[str]
    label: str | None = None
    user_patterns: tuple[Pattern, ...] = ()
    probes: list[str] | None = None
    python: str | None = None
    # `options.server_url` is the engine the benchmark talks to: its probe, and its process not a sharer.
    options: ProbeOptions = field(default_factory=ProbeOptions)
    interval_s: float = 1.0
    sign: bool = True
    nvml: Any | None = None  # an NVML module to sample with instead of pynvml (tests)
    # Facts-script calls the reading after the command asks its interpreter ahead of its request (hosts/warm.py).
    ahead_calls: tuple[ScriptCall, ...] = ()


@dataclass
class RunOutcome:
    """The stored record, how the command ended, and the snapshots around it."""

    record: RunRecord
    finished: Finished
    before: Snapshot | None
    after: Snapshot | None


def run_prober(plan: RunPlan) -> Prober:
    """The prober of the run's two snapshots: this machine, the command's interpreter (unless `plan.python`
    says otherwise; checked before anything runs). It keeps nothing: `record_run` stores each snapshot
    pinned for the run (store/pins.py), so no gc takes it before the record points at it. Its signing key is
    loaded beside the snapshot before (`signing_key_loading`, begun by `record_run` when that snapshot's first probe
    answers), not ahead of it."""
    prober = Prober.for_user(local_host(plan.python or command_python(plan.argv)), plan.options, sign=False)
    return replace(prober, key_loading=signing_key_loading()) if plan.sign else prober


def _take(prober: Prober, plan: RunPlan, label: str) -> Snapshot:
    return prober.snapshot(prober.probes(plan.probes, cheap_only=True), label=label)


def watch_modules(plan: RunPlan) -> tuple[str, ...]:
    """What watching `plan`'s command imports: `_WATCH_MODULES`, and psutil (~20 ms) where the watching asks it
    from the command's start: to tell the run's processes on a GPU from another's (an NVIDIA driver here), or to
    find the processes `--server`, `--pid` and `--process` name. Elsewhere nothing asks it before a signal is
    relayed, and then that relay imports it. The snapshot before is CPU-bound on a small machine (its probes, the
    target interpreter, git): an import nobody needs there costs its time."""
    options = plan.options
    asks_processes = plan.nvml is not None or bool(options.server_url or options.pids or options.process_patterns)
    if asks_processes or missing_driver(local_host()) is None:
        return (*_WATCH_MODULES, "psutil")
    return _WATCH_MODULES


def _import_watch_modules(names: tuple[str, ...]) -> None:
    """The modules `names` (`watch_modules`), imported in a thread of its own beside the snapshot before
    (`Background`, begun when that snapshot's first probe has answered: by then its probes' threads and the target
    interpreter's run have started, and these imports, sharing the interpreter lock, no longer hold them back). A
    thread gets no signal, so a Ctrl-C never lands inside these imports (see `driftcheck.__main__`); what one
    raises is raised again where the module is imported next, by the run's own thread."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - imported again, and raised, by the run's own thread
            return


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _watch(plan: RunPlan, reader: _ReaderBeside, on_start: Callable[[], None],
           on_exit: Callable[[], None]) -> tuple[Finished, SeriesJson]:
    """Run the command with its output scanned and the GPUs and CPUs sampled while it runs; (how it ended, the
    series). `on_start` is called once it runs, `on_exit` once it has ended and the sampling has stopped."""
    from driftcheck.runs.execute import run_command
    from driftcheck.runs.telemetry import TelemetrySampler, listener_pids, process_tree

    child: dict[str, int] = {}
    # The server a serving benchmark talks to uses the GPUs on the run's behalf: not a sharer.
    server = plan.options.server_url
    servers = sorted(listener_pids(server)) if server else []
    sampler = TelemetrySampler(local_host(), plan.interval_s, nvml=plan.nvml,
                               own_pids=lambda: process_tree(child.get("pid"), *plan.options.pids, *servers,
                                                             patterns=plan.options.process_patterns))
    stopped: list[SeriesJson] = []

    def ended() -> None:
        # Sampling ends with the command: what follows (the scan, the reading after) is driftcheck's, not its.
        stopped.append(sampler.stop().to_json())
        on_exit()

    def started(pid: int) -> None:
        child.update(pid=pid)
        on_start()

    sampler.start()
    try:
        finished = run_command(plan.argv, reader, on_start=started, on_exit=ended)
    finally:
        if not stopped:  # it never started, or its end was interrupted
            stopped.append(sampler.stop().to_json())
    return finished, stopped[0]


class _ReadingAfter:
    """The snapshot after the command: begun the moment the command has ended (`begin`), taken in a thread of its
    own while the rest of the output is drained; `result` waits for it. It only takes the snapshot; `record_run`
    writes the store."""

    def __init__(self, prober: Prober, plan: RunPlan, label: str) -> None:
        self._prober = prober
        self._plan = plan
        self._reading = Background(lambda: _take(prober, plan, label), "run-after")

    def hold(self) -> None:
        """At the command's start: the reading's target interpreter started, and held before it reads anything
        (hosts/warm.py `hold`: its core and standard modules loaded, not site), for `begin` to release. Its start,
        ~30 ms of the reading's wait, is spent beside the command, and nothing it answers is read before the
        command has ended."""
        if self._plan.probes is None:
            self._prober.host.warm_up(self._plan.ahead_calls, hold=True)

    def begin(self) -> None:
        """Start the reading. Its target interpreter goes on first (the one held, else a new one), from this
        thread, with the calls that need nothing from the host asked ahead (hosts/warm.py): the reading's own
        thread reaches its request only after its look at the host, and the scan of the output, which follows
        in the caller's, holds the interpreter lock in long stretches. With the interpreter held, the scan no
        longer waits for the reading to get under way: that wait (up to ~45 ms) had become the longer part
        after a long log."""
        if self._plan.probes is None:
            self._prober.host.warm_up(self._plan.ahead_calls)
        self._reading.start()

    def result(self) -> Snapshot:
        """The snapshot after, once taken; what taking it raised."""
        return self._reading.result()


def _output_reader(patterns: tuple[Pattern, ...]) -> OutputReader:
    """The reader of the command's output, made with the modules only the command's end needs imported."""
    for name in _END_MODULES:
        importlib.import_module(name)
    from driftcheck.runs.output import OutputReader

    return OutputReader(patterns)


class _ReaderBeside:
    """The command's output reader (runs/execute.py `OutputSink`), made beside the command: its output waits unscanned
    until the command ends (`_Scanner`), so nothing reads before then; what making it raised is raised to the first
    use."""

    def __init__(self, made: Background[OutputReader]) -> None:
        self._made = made

    def feed(self, data: bytes, stream: int = 0) -> None:
        self._made.result().feed(data, stream)

    def close(self, stream: int = 0) -> None:
        self._made.result().close(stream)

    def metrics(self) -> list[Metric]:
        """The figures found in the output."""
        return self._made.result().metrics()


class _BesideCommand:
    """What `record_run` does while the command runs, in threads begun once it has started (`begin`): the snapshot
    before stored, pinned (`kept`), and the reader of its output made (`reader`: the scan's patterns, the run's
    summary and record imported). Neither is needed before the command starts: its snapshot was taken whole
    before, and its output is scanned once it has ended. Done before it, they held its start back by ~15-30 ms
    (the store's delta encoding, its commit, ~10 ms of imports); beside it they take a CPU the command mostly
    leaves idle, as the pumps of its output do.

    A store that cannot keep the snapshot is told once the command has ended (`kept` raises it), not before it
    runs: it is the store `record_run` writes the run's record to then, so a failure there was never
    avoided, only told earlier."""

    def __init__(self, store: Store, before: Snapshot, pin: Pin, patterns: tuple[Pattern, ...]) -> None:
        self._kept = Background(lambda: store.add(before, pin=pin), "run-keep-before")
        self._reader_made = Background(lambda: _output_reader(patterns), "run-reader")
        self.reader = _ReaderBeside(self._reader_made)
        self._begun = False

    def begin(self) -> None:
        """Start both, once the command runs."""
        self._begun = True
        self._reader_made.start()
        self._kept.start()

    def kept(self) -> str:
        """The stored snapshot's id, once stored; what storing it raised."""
        return self._kept.result()

    def settle(self) -> str | None:
        """On a failure: the stored snapshot's id, once stored, where storing it had begun (None where it had not,
        or failed): the pin it holds is let go with the run's others."""
        if not self._begun:
            return None
        try:
            return self._kept.result()
        except Exception:  # noqa: BLE001 - the run's own failure is the one told
            return None


def _keep(store: Store, after: Snapshot | None, record: RunRecord, series: SeriesJson, pin: Pin,
          held: list[str]) -> None:
    """Store the reading after the run (when taken) and the run record in one transaction: one commit, one
    opening of the store instead of two (each a write of the log to disk and a checkpoint at its close), and
    no moment where the reading is stored but no record holds it."""
    from driftcheck.runs.store import RunStore

    with store.write_lock() as db:
        if after is not None:
            store.add(after, pin=pin)
            held.append(after.id)
        RunStore(store.path).add(record, series, pin=pin, within=db)


def record_run(plan: RunPlan, note: Callable[[str], None] | None = None) -> RunOutcome:
    """Snapshot, run `plan.argv` watched, snapshot again, store the record; returns it all.

    `note` receives one-line progress messages (the CLI shows them on a terminal only). Both snapshots
    are pinned from the moment they are stored until the record holds them; a run that fails before its
    record lets go of them.
    """
    prober = run_prober(plan)
    # The record, the snapshots' labels and every line printed hold the command and label scrubbed of
    # secrets (`--api-key X`, URL passwords, tokens): redacted before anything is cut or stored.
    command = prober.redactor.argv(plan.argv)
    label = prober.redactor.text(plan.label) if plan.label is not None else None
    name = label or " ".join(command)[:80]
    store, pin = Store(), Pin.this_process()
    if note:
        note("taking a snapshot before the run")
    modules = watch_modules(plan)
    preloading = Background(lambda: _import_watch_modules(modules), "run-preload")

    def first_answer(*progress: object) -> None:
        # The snapshot's probes now mostly wait on the target interpreter: the key and the modules load beside
        # that wait.
        if prober.key_loading is not None:
            prober.key_loading.start()
        preloading.start()

    before = _take(replace(prober, progress=first_answer), plan, f"run: {name}")
    held: list[str] = []
    beside = _BesideCommand(store, before, pin, plan.user_patterns)
    try:
        preloading.result()
        if note:
            note(f"snapshot {before.short_id} taken; running {printable(name)}")
        reading = _ReadingAfter(prober, plan, f"run: {name} (after)")

        def started() -> None:
            reading.hold()
            beside.begin()

        try:
            finished, series = _watch(plan, beside.reader, started, reading.begin)
        except BaseException:
            held.extend(filter(None, [beside.settle()]))
            raise
        held.append(beside.kept())
        from driftcheck.runs.store import RunRecord
        from driftcheck.runs.summary import summarize

        # Said only now, with the command's output drained: said when the reading starts, the note came before
        # the command's last lines, still in its pipe then.
        if note:
            note("taking the reading after the run")
        after: Snapshot | None = None
        try:
            after = reading.result()
        except KeyboardInterrupt:
            after = None  # a second Ctrl-C after the command ended: keep the record, skip the reading
        record = RunRecord(command=command, cwd=prober.redactor.text(os.getcwd()), host=socket.gethostname(),
                           started_at=_iso(finished.started_at), duration_s=round(finished.duration_s, 3),
                           exit_code=finished.exit_code, snapshot_id=before.id,
                           after_snapshot_id=after.id if after else None, label=label, signal=finished.signal,
                           metrics=beside.reader.metrics(), telemetry=summarize(series))
        try:
            _keep(store, after, record, series, pin, held)
        except KeyboardInterrupt:
            if after is None:
                raise
            # As a Ctrl-C while the reading was taken: the record is kept without it (the write was rolled back).
            after = None
            record.after_snapshot_id = None
            _keep(store, None, record, series, pin, held)
    except BaseException:
        with contextlib.suppress(DriftcheckError):
            store.release(held, pin)  # no record points at them: they are gc's again
        raise
    return RunOutcome(record, finished, before, after)
