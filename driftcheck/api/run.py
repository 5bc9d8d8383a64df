"""`run`: the user's command run watched (GPUs, CPUs), read for its figures, between two cheap snapshots."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from driftcheck.errors import OptionError
from driftcheck.hosts.base import ScriptCall
from driftcheck.hosts.targets import local_host
from driftcheck.runs.interpreter import command_python

if TYPE_CHECKING:
    from driftcheck.runs.session import RunOutcome

# The facts-script calls of a run's snapshots that need nothing from the host (the python, nccl, packages and torch
# probes'; tests/runs/test_session.py checks they are among the calls the cheap probes make): answered by the
# target interpreter while the modules of the run are still being imported.
AHEAD_CALLS = (ScriptCall("python_facts"), ScriptCall("dist_facts", ("packages",)), ScriptCall("torch_facts"))

# The telemetry interval a run takes (seconds): finer sampling costs the run itself, coarser misses a throttle.
_INTERVAL_S = (0.1, 60.0)


def run(command: Sequence[str], *, label: str | None = None, metrics: Sequence[str] = (),
        probes: Sequence[str] | None = None, python: str | None = None, pids: Sequence[int] = (),
        processes: Sequence[str] = (), server: str | None = None, interval_s: float = 1.0, sign: bool = True,
        note: Callable[[str], None] | None = None, server_log: str | None = None) -> RunOutcome:
    """Snapshot this machine (the cheap probes, or `probes`), run `command` with its output passed through,
    sample the GPUs and CPUs every `interval_s` while it runs, snapshot again, and store the run record.

    `metrics`: `NAME[UNIT]=REGEX` patterns read beside the built-in ones. `python`: the interpreter whose
    packages matter (default: the command's own when it is a Python). `pids`/`processes` (regexes) and
    `server` (the engine's URL) name the processes that belong to the run, not sharers of its GPUs; the
    server's own report of its settings goes into both snapshots, and so do the settings its log
    (`server_log`) says it started with. `note` receives one-line progress.
    OptionError, before anything is taken, for no command, an interval outside 0.1-60 s or a server log this
    machine cannot read.
    """
    if not command:
        raise OptionError("command", None, "give the command to run")
    if not _INTERVAL_S[0] <= interval_s <= _INTERVAL_S[1]:
        raise OptionError("interval_s", f"{interval_s:g}", f"give between {_INTERVAL_S[0]:g} and {_INTERVAL_S[1]:g} "
                                                          "seconds")
    if probes is None:  # the cheap probes, which ask the target interpreter (a chosen few may not)
        _start_target_interpreter(command, python)
    # Imported only now, with the target interpreter's facts run under way beside them (~50 ms of modules: the
    # probes, the store, the run's session).
    from driftcheck.api._shared import checked_local_log
    from driftcheck.probes.base import ProbeOptions
    from driftcheck.runs.session import RunPlan, record_run

    # Imported only for patterns to read: the scan's module is otherwise loaded beside the snapshot before.
    if metrics:
        from driftcheck.runs.metrics import user_pattern

        patterns = tuple(user_pattern(spec) for spec in metrics)
    else:
        patterns = ()
    # The directory the command runs in: its git commit says which version of the benchmark ran.
    options = ProbeOptions(pids=tuple(pids), process_patterns=tuple(processes), server_url=server,
                           workdir=os.getcwd(), server_log=checked_local_log(server_log))
    plan = RunPlan(argv=list(command), label=label, user_patterns=patterns,
                   probes=list(probes) if probes is not None else None, python=python, options=options,
                   interval_s=interval_s, sign=sign, ahead_calls=AHEAD_CALLS)
    return record_run(plan, note=note)


def _start_target_interpreter(command: Sequence[str], python: str | None) -> None:
    """Start the facts run of the snapshot before (hosts/warm.py) in the interpreter it reads, the command's own
    when it is a Python, else `python`, else ours: `AHEAD_CALLS` are answered while the rest of driftcheck loads,
    on a CPU that is idle meanwhile. A `python` that is no interpreter is left to be refused where the run's host
    is made."""
    try:
        host = local_host(python or command_python(command))
    except OptionError:
        return
    host.warm_up(AHEAD_CALLS)
