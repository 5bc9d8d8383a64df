"""Machine-wide settings only root changes, set for one run of a command and put back whatever happens.

Only the knobs listed in `KNOBS` (transparent huge pages: `enabled`, `defrag`) are ever written, and only
for `explain --confirm --allow-system-changes`. A run goes through this module as a wrapper process
(`python -m driftcheck.runs.system_knob PATH VALUE -- CMD ...`): it reads the knob, writes VALUE, runs CMD,
and writes the value it read back in a `finally`, also on SIGTERM/SIGHUP (which the trial sends to a run's
process tree when it is interrupted) and Ctrl-C; the value read back is checked. The confirmation itself
also holds a `guard` over every knob it may touch, which puts back the value each had at the start, so a
wrapper killed outright (SIGKILL) still leaves the machine as it found it once the confirmation ends. A
SIGKILL of the confirmation itself is the one case nothing can answer; `guard` says which value to restore.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

from driftcheck.errors import DriftcheckError
from driftcheck.probes.system import THP_DIR, selected_choice

# The facts of the system probe that name a knob this module may write, and its file.
KNOBS = {"probes.system.data.thp.enabled": f"{THP_DIR}/enabled",
         "probes.system.data.thp.defrag": f"{THP_DIR}/defrag"}


class KnobError(DriftcheckError):
    """A knob could not be read, written or put back; the message names it and the value it should have."""


def read(path: str) -> str:
    """The knob's current value (the bracketed choice of a selector such as `always [madvise] never`)."""
    try:
        value = selected_choice(Path(path).read_text())
    except OSError as exc:
        raise KnobError(f"cannot read {path}: {exc.strerror}") from None
    if value is None:
        raise KnobError(f"{path} is empty")
    return value


def write(path: str, value: str) -> None:
    """Write `value` to the knob and check that it took."""
    if path not in KNOBS.values():
        raise KnobError(f"{path} is not a knob driftcheck changes")
    try:
        Path(path).write_text(value)
    except OSError as exc:
        raise KnobError(f"cannot write {value!r} to {path}: {exc.strerror}") from None
    if read(path) != value:
        raise KnobError(f"{path} did not take {value!r} (it reads {read(path)!r})")


@contextlib.contextmanager
def set_for_a_while(path: str, value: str) -> Iterator[str]:
    """The knob at `value` inside the block, at what it was before after it (checked); yields that value."""
    before = read(path)
    try:
        write(path, value)
        yield before
    finally:
        write(path, before)


@contextlib.contextmanager
def guard(paths: Sequence[str]) -> Iterator[dict[str, str]]:
    """On the way out, every knob of `paths` back at the value it had on the way in (checked)."""
    before = {path: read(path) for path in dict.fromkeys(paths)}
    try:
        yield before
    finally:
        failed = []
        for path, value in before.items():
            try:
                if read(path) != value:
                    write(path, value)
            except KnobError as exc:
                failed.append(str(exc))
        if failed:
            raise KnobError("could not put back: " + "; ".join(failed))


def wrapper(path: str, value: str, command: Sequence[str]) -> list[str]:
    """The command line that runs `command` with the knob at `value` and puts it back after."""
    return [sys.executable, "-m", "driftcheck.runs.system_knob", path, value, "--", *command]


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str]) -> int:
    """`PATH VALUE -- CMD ...`: run CMD with the knob at VALUE; the exit code is CMD's (128 + N when signal N
    ended it)."""
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: python -m driftcheck.runs.system_knob PATH VALUE -- CMD [ARGS...]\n")
        return 2
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_exit)
    path, value, command = argv[0], argv[1], list(argv[3:])
    try:
        with set_for_a_while(path, value):
            process = subprocess.Popen(command)
            try:
                code = process.wait()
                # A command ended by signal N exits 128 + N, as a shell says it: a SIGTERM to the whole group
                # can end the command before this process's own handler runs, and -15 is no exit status.
                return 128 - code if code < 0 else code
            finally:
                if process.poll() is None:
                    process.terminate()
                    process.wait()
    except KnobError as exc:
        sys.stderr.write(f"driftcheck: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
