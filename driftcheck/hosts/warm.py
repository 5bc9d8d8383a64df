"""Runs of a target interpreter started before their request is known: `facts_batch --ahead ... --stdin`.

A snapshot's critical path is one run of the target interpreter for its facts: its start (its site, its .pth
files: ~25 ms here) and the scripts' work (~40 ms: every distribution's METADATA and RECORD). Which calls it answers
is known only once the probes are loaded and have looked at the host (the kernels probe's call names the system's
libraries), ~60 ms into `driftcheck run`, during which one of two CPUs is idle. `start` launches the run then, with
the calls that need nothing from the host answered at once (`--ahead`); `take` hands it to the snapshot's facts
run, which writes the whole request on its stdin and reads the reply as from a run started then. A part asked ahead
is answered from the moment the interpreter started: earlier by the time driftcheck took to load, no more.

A launched run answers only the request of the same interpreter, environment and working directory (`take`
refuses another, and lets it go). One nobody takes reads the end of its stdin when this process exits, and ends
without a word.

A launch may also be held (`hold`): the interpreter started earlier still (a `run`'s reading after, at its
command's start) but stopped before anything it answers is read (facts_held: its core and standard modules loaded,
not site). `start` then releases it instead of starting another: ~30 ms of the reading after's wait spent beside
the command instead. A held start is released only into the same launch it was held for.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """How a run ended: exit code, stdout and stderr as bytes."""

    returncode: int
    stdout: bytes
    stderr: bytes


@dataclass
class _Started:
    process: subprocess.Popen[bytes]
    environ: dict[str, str]
    cwd: str
    at: float
    argv_tail: list[str]


# The oldest launched run `take` hands out: its answers ahead describe the machine as it was at its launch, and a
# snapshot takes it ~0.1 s later. One left over (its snapshot failed before asking, or asked one call alone, which
# runs on its own) is no answer for a later snapshot of a long-lived caller.
MAX_AGE_S = 5.0


_started: dict[str, _Started] = {}
_held: dict[str, _Started] = {}
_lock = threading.Lock()


def _launch(argv: list[str], environ: Mapping[str, str], cwd: str, own_session: bool = False,
            ) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=dict(environ), start_new_session=own_session)
    except OSError:
        return None


def start(python: str, argv_tail: Sequence[str], environ: Mapping[str, str], cwd: str) -> None:
    """Launch `python -c ...argv_tail` now (a `facts_batch` reading more on stdin), to answer the next batch
    asked of `python` with `environ` in `cwd`: the one `hold` held for that same launch, released, else a new one.
    One launched earlier and not taken is let go: its answers ahead describe the machine before (a run's reading
    after its command must never get those of the reading before). A launch that fails is forgotten: the batch's
    own run then starts the interpreter, and reports why not."""
    tail = list(argv_tail)
    with _lock:
        earlier = _started.pop(python, None)
        held = _held.pop(python, None)
        process = _released(held, tail, environ, cwd) if held is not None else None
        if process is None:
            process = _launch([python, "-c", *tail], environ, cwd)
        else:
            held = None  # it is the launch now, not one to let go
        if process is not None:
            _started[python] = _Started(process, dict(environ), cwd, time.monotonic(), tail)
    for let_go in (earlier, held):
        if let_go is not None:
            _let_go(let_go.process)


def hold(python: str, held_source: str, argv_tail: Sequence[str], environ: Mapping[str, str], cwd: str) -> None:
    """Start `python -S -c held_source ...argv_tail` (facts_held) now and keep it stopped before it reads any
    fact, for a later `start` of the same launch to release. One held earlier and not released is let go."""
    with _lock:
        earlier = _held.pop(python, None)
        # In a session of its own: a Ctrl-C at the terminal is for the command it is held beside, and would end
        # it there (a traceback, no answer) before the reading after that command asks it anything.
        process = _launch([python, "-S", "-c", held_source, *argv_tail], environ, cwd, own_session=True)
        if process is not None:
            _held[python] = _Started(process, dict(environ), cwd, time.monotonic(), list(argv_tail))
    if earlier is not None:
        _let_go(earlier.process)


def _released(held: _Started, argv_tail: list[str], environ: Mapping[str, str], cwd: str,
              ) -> subprocess.Popen[bytes] | None:
    """`held`, released to go on as the launch `argv_tail` (one byte written to its stdin), where it was held for
    that launch, with `environ` and `cwd`, and still waits; else None."""
    fits = held.argv_tail == argv_tail and held.environ == dict(environ) and held.cwd == cwd
    if not fits or held.process.poll() is not None or held.process.stdin is None:
        return None
    try:
        held.process.stdin.write(b"\n")
        held.process.stdin.flush()
    except OSError:
        return None
    return held.process


def take(python: str, environ: Mapping[str, str], cwd: str) -> subprocess.Popen[bytes] | None:
    """The run `start` launched for `python`, still waiting, with `environ` and `cwd`, at most `MAX_AGE_S` ago;
    else None (and a launched one that does not fit is let go)."""
    with _lock:
        started = _started.pop(python, None)
    if started is None:
        return None
    fits = started.environ == dict(environ) and started.cwd == cwd
    if fits and started.process.poll() is None and time.monotonic() - started.at <= MAX_AGE_S:
        return started.process
    _let_go(started.process)
    return None


def ask(process: subprocess.Popen[bytes], words: Sequence[str], timeout_s: float) -> Answer:
    """Write the request `words` to the taken run and wait for its reply; subprocess.TimeoutExpired (the process
    killed) past `timeout_s`."""
    # ensure_ascii: a word holding a path that is not UTF-8 (a lone surrogate, as os.listdir gives it) crosses as
    # an escape and is read back as the string the interpreter's own argv decoding would give.
    request = json.dumps(list(words)).encode("ascii")
    try:
        stdout, stderr = process.communicate(request, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return Answer(process.returncode, stdout, stderr)


def let_go_all() -> None:
    """Let every launched or held run go (ended, and reaped)."""
    with _lock:
        waiting = [*_started.values(), *_held.values()]
        _started.clear()
        _held.clear()
    for started in waiting:
        _let_go(started.process)


def _let_go(process: subprocess.Popen[bytes]) -> None:
    # Killed, not waited for: its answers ahead go nowhere, and the scripts only read. Then reaped.
    with contextlib.suppress(OSError):
        process.kill()
    process.communicate()
