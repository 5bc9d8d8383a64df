"""Running the user's command: its output passed through unchanged while it is scanned, its exit code kept.

stdout and stderr are read in threads and written, byte for byte, to ours as they arrive, and read for figures
by the output reader every verb uses (`driftcheck.runs.output`). Where our
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

import collections
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import IO, Protocol

from driftcheck.errors import CommandNotRunnable
from driftcheck.hosts.process_tree import signal_tree
from driftcheck.hosts.signals import ENDING, handlers_installed


class OutputSink(Protocol):
    """What reads the command's output (runs/output.py `OutputReader`): its chunks, stream by stream, then each
    stream's end."""

    def feed(self, data: bytes, stream: int = 0) -> None: ...

    def close(self, stream: int = 0) -> None: ...


# Where the command's output goes: our stdout/stderr (text, written through their buffer) or a byte stream.
Stream = IO[str] | IO[bytes]
_TERMINAL_SIGNALS = (signal.SIGINT,)
# After the command ends, its output pipes may stay open in a daemon it left behind: stop reading then.
_DRAIN_S = 2.0
_PIPE_BYTES = 1 << 20
# A command writes its log in small pieces (Python: 8 KiB; often a line), and a reader that wakes on each one
# reads 1-2 KiB at a time: 100 MiB of log was ~50,000-200,000 reads, each a wake-up of ours that takes a CPU
# from the command. After a read shorter than a pipe that holds `_PIPE_BYTES`, the pump pauses up to
# `_COALESCE_S` so that its next read takes what the command wrote meanwhile in one piece (~550 reads of
# ~190 KiB for the same log). What was read is passed on before the pause, so a line waits at most 5 ms.
# The pause is shorter for a command that writes fast: at most the time it takes, at the rate the last read
# saw, to fill `_COALESCE_FILL` of the pipe. A command writing 100 MiB at ~200 MB/s (in 8 KiB blocks) filled the
# whole pipe within 5 ms and then waited on it: 1.25-1.49x its time alone to /dev/null, 1.09-1.2x with the pause
# fitted to its rate (9 interleaved runs each). No pause follows a full read. A terminal is read without
# pauses: its buffer is a few KiB, and pausing would throttle the command.
_COALESCE_S = 0.005
_COALESCE_FILL = 0.75
# While the command runs, the copying thread should get the interpreter lock back from the scan thread
# within a tenth of a millisecond, not the default 5 ms: at a lock wait per read, 5 ms made 20 MiB of
# log take three times as long to pass.
_SWITCH_INTERVAL_S = 0.0001
# How long the scan may take to reach the end of the output once the command has ended.
_SCAN_CATCH_UP_S = 120.0


@dataclass(frozen=True)
class Finished:
    """How the command ended: the exit code to pass on, and the signal that interrupted it, if any."""

    exit_code: int
    signal: str | None
    forwarded: bool
    started_at: float
    duration_s: float
    pid: int


class _Scanner:
    """Lines of the command's output, scanned once the command has ended, off the copying path.

    The copy to our stdout must go at pipe speed whatever the scan costs (100 MiB of log once took 612 s
    through a scan on the copying path, and the command blocked on its full pipe meanwhile). A scan running
    beside the copy still slowed it (the two share the interpreter lock), so chunks only wait here while the
    command runs, and the scan reads them when it has ended. Past `max_backlog` bytes the oldest chunks are
    skipped, whole, and counted: the figures a benchmark prints come at its end, and memory stays bounded.
    Scanning beside the command instead, now that the scan runs at C speed (`MetricScanner.feed_lines`, ~0.03 s
    CPU for those 8 MiB), was measured and left: 100 MiB of log is ~0.4 s of scan that the command's CPUs would
    share, against 0.03 s after it, hidden behind the reading after the run.
    """

    def __init__(self, reader: OutputSink, streams: int, max_backlog: int = 8 * 1024 * 1024) -> None:
        self._reader = reader
        self._streams = streams
        self._chunks: collections.deque[tuple[int, bytes | None]] = collections.deque()
        self._backlog = 0
        self._max_backlog = max_backlog
        self._ready = threading.Condition()
        self.skipped_bytes = 0
        self._go = threading.Event()
        self._thread = threading.Thread(target=self._run, name="run-scan", daemon=True)
        self._thread.start()

    def put(self, stream: int, data: bytes | None) -> None:
        """Queue a chunk of stream `stream` (None: that stream ended)."""
        with self._ready:
            self._chunks.append((stream, data))
            self._backlog += len(data or b"")
            ends: list[tuple[int, bytes | None]] = []
            while self._backlog > self._max_backlog and self._chunks:
                dropped_stream, dropped = self._chunks.popleft()
                if dropped is None:
                    # Never drop an end of stream, and never stop dropping at one: a stream that ended early
                    # (`exec >results.txt`) would leave the other's backlog without bound.
                    ends.append((dropped_stream, dropped))
                    continue
                self._backlog -= len(dropped)
                self.skipped_bytes += len(dropped)
            self._chunks.extendleft(reversed(ends))  # an ended stream has no chunk after its end: order holds
            self._ready.notify()

    def _run(self) -> None:
        self._go.wait()
        ended = 0
        while ended < self._streams:
            with self._ready:
                while not self._chunks:
                    self._ready.wait()
                stream, data = self._chunks.popleft()
                self._backlog -= len(data or b"")
            if data is None:
                self._reader.close(stream)
                ended += 1
            else:
                self._reader.feed(data, stream)

    def join(self, timeout: float) -> None:
        """Scan what was kept, waiting up to `timeout` for it to reach the end of every stream."""
        self._go.set()
        self._thread.join(timeout)


def _pump(source: int, sink: IO[bytes], scanner: _Scanner, stream: int, coalesce: bool) -> None:
    """Copy `source` to `sink` as it comes, handing each chunk to `scanner`, until end of file; with `coalesce`,
    a read that does not fill the pipe is followed by a pause that lets the next read take more (`_pause_after`)."""
    broken = False
    since = time.monotonic()
    while True:
        try:
            data = os.read(source, _PIPE_BYTES)
        except OSError:  # EIO: the pseudo-terminal's other side closed
            data = b""
        if not data:
            break
        read_at = time.monotonic()
        if not broken:
            try:
                sink.write(data)
                sink.flush()
            except (BrokenPipeError, ValueError, OSError):
                broken = True  # our reader left (`| head`): the command still runs to its end and is still scanned
        scanner.put(stream, data)
        if coalesce and len(data) < _PIPE_BYTES:
            # After passing this piece on: it is not held back, the next read is.
            time.sleep(_pause_after(len(data), read_at - since))
        since = time.monotonic()
    scanner.put(stream, None)


def _pause_after(read: int, waited_s: float) -> float:
    """How long the pump pauses after a read of `read` bytes (less than the pipe holds) that came `waited_s`
    after the previous pause ended: `_COALESCE_S`, or less where the rate it shows would fill `_COALESCE_FILL` of
    the pipe sooner."""
    rate = read / max(waited_s, 1e-6)
    return min(_COALESCE_S, _COALESCE_FILL * _PIPE_BYTES / rate)


def _terminal_size_of(stream: Stream) -> bytes | None:
    try:
        return fcntl.ioctl(stream.fileno(), termios.TIOCGWINSZ, b"\0" * 8)
    except (OSError, ValueError):
        return None


def _output_channel(ours: Stream) -> tuple[int, int, bool]:
    """(the fd the command writes to, the fd we read, whether reads of it coalesce): a pseudo-terminal where
    `ours` is a terminal, else a pipe, which coalesces when it holds `_PIPE_BYTES`."""
    if ours.isatty():
        reader, writer = os.openpty()
        size = _terminal_size_of(ours)
        if size is not None:
            fcntl.ioctl(writer, termios.TIOCSWINSZ, size)
        # No \n -> \r\n on this side: the bytes reach our terminal as the command wrote them, and it translates.
        attrs = termios.tcgetattr(writer)
        attrs[1] &= ~termios.ONLCR
        termios.tcsetattr(writer, termios.TCSANOW, attrs)
        return writer, reader, False
    reader, writer = os.pipe()
    # A larger pipe means fewer, larger reads: the number of reads, not the bytes, sets the pass-through speed.
    # Where it cannot grow (a lowered /proc/sys/fs/pipe-max-size), a pause after a short read could fill its
    # 64 KiB and stall the command: no coalescing there.
    try:
        fcntl.fcntl(writer, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
        coalesce = fcntl.fcntl(writer, getattr(fcntl, "F_GETPIPE_SZ", 1032)) >= _PIPE_BYTES
    except OSError:
        coalesce = False
    return writer, reader, coalesce


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

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = signal.Signals(signum).name
        if self.pid is None:
            return
        if signum in _TERMINAL_SIGNALS and _in_foreground_of_terminal():
            return
        # A launcher's workers hold the GPUs: a signal for the command is for them too.
        if signal_tree(self.pid, signum):
            self.forwarded = True

    @contextlib.contextmanager
    def installed(self) -> Iterator[_SignalRelay]:
        """While in the block, our SIGINT/SIGTERM/SIGHUP handlers stand in for the previous ones (in the main
        thread; elsewhere the defaults stay)."""
        with handlers_installed(self._handle, ENDING):
            yield self


def _start(argv: Sequence[str], out_fd: int, err_fd: int, cwd: str | None) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(list(argv), stdout=out_fd, stderr=err_fd, cwd=cwd)
    except FileNotFoundError:
        raise CommandNotRunnable(argv[0], "command not found", 127) from None
    except PermissionError:
        raise CommandNotRunnable(argv[0], "permission denied", 126) from None
    except OSError as exc:
        raise CommandNotRunnable(argv[0], exc.strerror or str(exc), 126) from None


def run_command(argv: Sequence[str], reader: OutputSink, on_start: Callable[[int], None] | None = None,
                stdout: Stream | None = None, stderr: Stream | None = None, cwd: str | None = None,
                on_exit: Callable[[], None] | None = None) -> Finished:
    """Run `argv` with its output passed to `stdout`/`stderr` (default: ours) and read by `reader` (stdout as
    its stream 0, stderr as 1), which finds the figures in it.

    `on_start` gets the command's pid as soon as it runs (to watch its process tree); `on_exit` is called as
    soon as it has ended, before the rest of its output is drained and scanned (work that needs only the
    command gone starts then). Returns how it ended; CommandNotRunnable when it could not start.
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    relay = _SignalRelay()
    out_w, out_r, out_coalesce = _output_channel(stdout)
    err_w, err_r, err_coalesce = _output_channel(stderr)
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
        scanner = _Scanner(reader, streams=2)
        for stream, (source, sink, coalesce) in enumerate(((out_r, stdout, out_coalesce),
                                                           (err_r, stderr, err_coalesce))):
            buffer = getattr(sink, "buffer", sink)
            thread = threading.Thread(target=_pump, args=(source, buffer, scanner, stream, coalesce),
                                      name="run-output", daemon=True)
            thread.start()
            pumps.append(thread)
        if on_start is not None:
            on_start(process.pid)
        previous_interval = sys.getswitchinterval()
        sys.setswitchinterval(_SWITCH_INTERVAL_S)
        try:
            returncode = process.wait()
        finally:
            sys.setswitchinterval(previous_interval)
        duration = time.monotonic() - started
    if on_exit is not None:
        on_exit()
    deadline = time.monotonic() + _DRAIN_S
    for thread, fd in zip(pumps, (out_r, err_r), strict=True):
        thread.join(max(0.0, deadline - time.monotonic()))
        if not thread.is_alive():  # a pump still blocked in read keeps its fd until we exit
            with contextlib.suppress(OSError):
                os.close(fd)
    # The figures come at the end of the output: let the scan reach it (the copy did not wait for it).
    scanner.join(_SCAN_CATCH_UP_S)
    if returncode < 0:
        name = signal.Signals(-returncode).name
        return Finished(128 - returncode, name, relay.forwarded, started_at, duration, process.pid)
    return Finished(returncode, relay.received, relay.forwarded, started_at, duration, process.pid)
