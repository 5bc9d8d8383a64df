"""One reader of a command's output, for `run`, `try`, `bisect` and `explain --confirm`: where its lines end,
and the figures the patterns of `driftcheck.runs.metrics` find in them.

A line is what a terminal shows as one: it ends at \\n, at \\r\\n, or at the \\r with which a progress bar
redraws itself in place. Nothing else ends a line. `str.splitlines` also ends lines at \\v, \\f, \\x1c-\\x1e,
\\x85 and \\u2028/\\u2029, which no terminal starts a new line at the left margin for; reading them as line ends
made `try` find, in `epoch 3\\fscore 12.5`, a `^score` figure that `run` (and the user looking at the screen)
did not. One rule, here, and every verb reads the same figures from the same output.
"""

from __future__ import annotations

import codecs
import collections
import os
import re
import threading
from collections.abc import Iterable
from typing import IO

from driftcheck.runs.metrics import Metric, MetricScanner, Pattern

_LINE_END = re.compile(r"\r\n|\r|\n")
# One read takes at most what a pipe holds (64 KiB on Linux).
_READ_BYTES = 1 << 16
# A "line" longer than this (a progress bar redrawn without line ends) is not kept whole: nothing is read there.
MAX_LINE_CHARS = 1 << 16
TAIL_LINES = 12


def _split(text: str) -> list[str]:
    """`text` cut at every line end: by `str.split` where it holds no \\r (a log's usual case: ~10x the speed of
    the regex, which 100 MiB of log made 0.7 s of the scan), else by `_LINE_END`."""
    return _LINE_END.split(text) if "\r" in text else text.split("\n")


def split_lines(text: str) -> list[str]:
    """The lines of a whole output, as a terminal shows them (no empty line after a final line end)."""
    lines = _split(text)
    if lines and not lines[-1]:
        lines.pop()
    return lines


class OutputLines:
    """Bytes of one stream in, its complete lines out: UTF-8 decoded (invalid bytes replaced), a line end cut
    between two reads (\\r | \\n) waited for, an unended line kept to its last `MAX_LINE_CHARS` characters."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, data: bytes) -> list[str]:
        """The lines `data` completes."""
        text = self._pending + self._decoder.decode(data)
        lines = _split(text)
        self._pending = lines.pop()
        if text.endswith("\r"):  # a \r\n may be split between two reads: wait for the next byte
            self._pending = lines.pop() + "\r" if lines else "\r"
        if len(self._pending) > MAX_LINE_CHARS:
            self._pending = self._pending[-MAX_LINE_CHARS:]
        return lines

    def close(self) -> list[str]:
        """The stream ended: its last line, if it did not end with a line end."""
        rest = (self._pending + self._decoder.decode(b"", final=True)).rstrip("\r")
        self._pending = ""
        return [rest] if rest else []


class OutputReader:
    """A command's output, fed as it comes (one or more streams, each cut into lines on its own), its lines
    scanned for figures in bulk (`MetricScanner.feed_lines`) and its last lines kept to show on a failure.

    Thread-safe: a thread may feed while another asks for what was found so far. Scanning line by line as they
    came once filled the command's pipe (20,000 lines doubled a 0.67 s run of `try`); scanning all of it after
    the command ended added that time to each run. In bulk, chunk by chunk, the scan keeps up at ~1 us a line.
    """

    def __init__(self, patterns: Iterable[Pattern] = (), tail_lines: int = TAIL_LINES) -> None:
        self._scanner = MetricScanner(tuple(patterns))
        self._streams: dict[int, OutputLines] = {}
        self._tail_lines = tail_lines
        self._tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self._lock = threading.Lock()

    def feed(self, data: bytes, stream: int = 0) -> None:
        """Take a chunk of `stream`'s output."""
        self._take(self._lines_of(stream).feed(data))

    def close(self, stream: int = 0) -> None:
        """`stream` ended: its last, unended line is read too."""
        self._take(self._lines_of(stream).close())

    def read(self, source: IO[bytes], stream: int = 0) -> None:
        """Read `source` to its end (run in a thread beside the command, so its pipe seldom waits)."""
        descriptor = source.fileno()
        while chunk := os.read(descriptor, _READ_BYTES):
            self.feed(chunk, stream)
        self.close(stream)

    def read_text(self, text: str) -> None:
        """Take a whole output at once (a saved log)."""
        self._take(split_lines(text))

    def metrics(self) -> list[Metric]:
        """The figures found so far, in the order first seen."""
        with self._lock:
            return self._scanner.metrics()

    def tail(self) -> list[str]:
        """The last lines read so far."""
        with self._lock:
            return list(self._tail)

    def _lines_of(self, stream: int) -> OutputLines:
        lines = self._streams.get(stream)
        if lines is None:
            lines = self._streams[stream] = OutputLines()
        return lines

    def _take(self, lines: list[str]) -> None:
        if not lines:
            return
        with self._lock:
            self._scanner.feed_lines(lines)
            self._tail.extend(lines[-self._tail_lines:])


def scan_text(text: str, user: Iterable[Pattern] = ()) -> list[Metric]:
    """The figures in a whole output (a saved log), read as `run` and `try` read them."""
    reader = OutputReader(user)
    reader.read_text(text)
    return reader.metrics()
