"""Running the user's command: its output passed through unchanged while it is scanned, its exit code kept.

stdout and stderr are read in threads and written, byte for byte, to ours as they arrive. Where our
side is a terminal the command gets a pseudo-terminal instead of a pipe, so it prints, colours and
redraws progress exactly as it would when run directly (a pipe would make Python block-buffer and
print everything at the end); its environment is left untouched.

Signals: Ctrl-C in a terminal reaches the whole foreground process group, the command included, so
driftcheck does not send it a second one. A SIGINT, SIGTERM or SIGHUP sent to driftcheck alone (kill,
a scheduler) is forwarded to the command. Either way the command decides how to end, driftcheck waits
for it, and the run records the signal. A command killed by a signal exits 128 + its number, as in a
shell.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import re
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import IO, Any

from driftcheck.errors import CommandNotRunnable

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_TERMINAL_SIGNALS = (signal.SIGINT,)
_LINE_END = re.compile(r"\r\n|\r|\n")
# After the command ends, its output pipes may stay open in a daemon it left behind: stop reading then.
_DRAIN_S = 2.0


@dataclass(frozen=True)
class Finished:
    """How the command ended: the exit code to pass on, and the signal that interrupted it, if any."""

    exit_code: int
    signal: str | None
    forwarded: bool
    started_at: float
    duration_s: float
    pid: int


class LineSplitter:
    """Bytes in, complete text lines out (split at \\n, \\r\\n and the \\r of redrawn progress bars)."""

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._on_line = on_line

    def feed(self, data: bytes) -> None:
        """Take more output."""
        text = self._pending + self._decoder.decode(data)
        parts = _LINE_END.split(text)
        self._pending = parts.pop()
        if text.endswith("\r"):  # a \r\n may be split between two reads: wait for the next byte
            self._pending = parts.pop() + "\r" if parts else "\r"
        for line in parts:
            self._on_line(line)

    def close(self) -> None:
        """The output ended: pass on what is left."""
        rest = (self._pending + self._decoder.decode(b"", final=True)).rstrip("\r")
        if rest:
            self._on_line(rest)
        self._pending = ""


def _pump(source: int, sink: IO[bytes], splitter: LineSplitter, lock: threading.Lock) -> None:
    """Copy `source` to `sink` as it comes, feeding a copy to `splitter`, until end of file."""
    while True:
        try:
            data = os.read(source, 65536)
        except OSError:  # EIO: the pseudo-terminal's other side closed
            data = b""
        if not data:
            break
        try:
            sink.write(data)
            sink.flush()
        except (BrokenPipeError, ValueError):
            pass  # our reader left (`| head`): the command still runs to its end and is still scanned
        with lock:
            splitter.feed(data)
    with lock:
        splitter.close()


def _terminal_size_of(stream: IO[Any]) -> bytes | None:
    try:
        return fcntl.ioctl(stream.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
    except (OSError, ValueError):
        return None


def _output_channel(ours: IO[Any]) -> tuple[int, int]:
    """(the fd the command writes to, the fd we read): a pseudo-terminal where `ours` is a terminal, else a pipe."""
    if ours.isatty():
        reader, writer = os.openpty()
        size = _terminal_size_of(ours)
        if size is not None:
            fcntl.ioctl(writer, termios.TIOCSWINSZ, size)
        # No \n -> \r\n on this side: the bytes reach our terminal as the command wrote them, and it translates.
        attrs = termios.tcgetattr(writer)
        attrs[1] &= ~termios.ONLCR
        termios.tcsetattr(writer, termios.TCSANOW, attrs)
        return writer, reader
    reader, writer = os.pipe()
    return writer, reader


def _in_foreground_of_terminal() -> bool:
    """Whether our process group is the foreground group of our terminal: then Ctrl-C reached the command too."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            if stream.isatty():
                return os.tcgetpgrp(stream.fileno()) == os.getpgrp()
        except (OSError, ValueError, AttributeError):
            continue
    return False


class _SignalRelay:
    """While installed, notes SIGINT/SIGTERM/SIGHUP and passes them to the command unless it already got them."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.received: str | None = None
        self.forwarded = False
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = signal.Signals(signum).name
        if self.pid is None:
            return
        if signum in _TERMINAL_SIGNALS and _in_foreground_of_terminal():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signum)
            self.forwarded = True

    @contextlib.contextmanager
    def installed(self) -> Iterator[_SignalRelay]:
        """While in the block, our SIGINT/SIGTERM/SIGHUP handlers stand in for the previous ones."""
        if threading.current_thread() is not threading.main_thread():
            yield self  # signal handlers live in the main thread only; elsewhere the defaults stay
            return
        for forwarded in _FORWARDED:
            self._previous[forwarded] = signal.signal(forwarded, self._handle)
        try:
            yield self
        finally:
            for number, handler in self._previous.items():
                signal.signal(number, handler)


def _start(argv: Sequence[str], out_fd: int, err_fd: int, cwd: str | None) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(list(argv), stdout=out_fd, stderr=err_fd, cwd=cwd)
    except FileNotFoundError:
        raise CommandNotRunnable(argv[0], "command not found", 127) from None
    except PermissionError:
        raise CommandNotRunnable(argv[0], "permission denied", 126) from None
    except OSError as exc:
        raise CommandNotRunnable(argv[0], exc.strerror or str(exc), 126) from None


def run_command(argv: Sequence[str], on_line: Callable[[str], None], on_start: Callable[[int], None] | None = None,
                stdout: IO[Any] | None = None, stderr: IO[Any] | None = None, cwd: str | None = None) -> Finished:
    """Run `argv` with its output passed to `stdout`/`stderr` (default: ours) and every line to `on_line`.

    `on_start` gets the command's pid as soon as it runs (to watch its process tree). Returns how it
    ended; CommandNotRunnable when it could not start.
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    lock = threading.Lock()
    relay = _SignalRelay()
    out_w, out_r = _output_channel(stdout)
    err_w, err_r = _output_channel(stderr)
    pumps = []
    with relay.installed():
        started_at, started = time.time(), time.monotonic()
        try:
            process = _start(argv, out_w, err_w, cwd)
        except CommandNotRunnable:
            os.close(out_r)
            os.close(err_r)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        relay.pid = process.pid
        for source, sink in ((out_r, stdout), (err_r, stderr)):
            buffer = getattr(sink, "buffer", sink)
            thread = threading.Thread(target=_pump, args=(source, buffer, LineSplitter(on_line), lock),
                                      name="run-output", daemon=True)
            thread.start()
            pumps.append(thread)
        if on_start is not None:
            on_start(process.pid)
        returncode = process.wait()
        duration = time.monotonic() - started
    deadline = time.monotonic() + _DRAIN_S
    for thread, fd in zip(pumps, (out_r, err_r), strict=True):
        thread.join(max(0.0, deadline - time.monotonic()))
        if not thread.is_alive():  # a pump still blocked in read keeps its fd until we exit
            with contextlib.suppress(OSError):
                os.close(fd)
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return Finished(128 - returncode, name, relay.forwarded, started_at, duration, process.pid)
    return Finished(returncode, relay.received, relay.forwarded, started_at, duration, process.pid)
