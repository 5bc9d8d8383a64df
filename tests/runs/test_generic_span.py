"""The generic figure ('N tok/s', 'N ms') is searched only where it can be, and found exactly as before.

`_generic_span` narrows the search of `_GENERIC_RATE` to the stretch of a line between the label before its
first number-and-unit and its last unit. These lines, made of the pieces that make the search hard (signs the
label may take, separators, tabs and Unicode spaces, units inside words, labels longer than 41 letters, a
log line's tail), are each searched both ways: the matches must be the same, position for position.
"""

from __future__ import annotations

import random

import pytest

from driftcheck.runs.metrics import _GENERIC_RATE, _generic, _generic_span
from driftcheck.runs.output import scan_text

PIECES = ["throughput", "tok/s", "tokens/s", "token/s", "ms", "msx", "tok/sx", "s", " ", "  ", "\t", "\u00a0",
          "\u2003", ":", "=", "-", "+", "_", "1", "12.5", "-3", "+4e-2", "3.0e-4", "0.0231", "step", "lr",
          "loss", "latency", "x" * 40, "a" * 45, "/", ",", "(", ")", "e", "E", "|", "élan", "Output token",
          "5ms", "7 ms/", "9 msec", "mean ITL (ms):",
          # digits to `str.isdigit` that are not ASCII: where the number's run is found by a loop, not `rstrip`
          "\u0661\u0662", "\u00b2", "\u0663.5"]


def _plain(line: str) -> list[tuple[int, int, dict[str, str | None]]]:
    return [(m.start(), m.end(), m.groupdict()) for m in _GENERIC_RATE.finditer(line)]


def _narrowed(line: str) -> list[tuple[int, int, dict[str, str | None]]]:
    span = _generic_span(line)
    if span is None:
        return []
    return [(m.start(), m.end(), m.groupdict()) for m in _GENERIC_RATE.finditer(line, *span)]


def test_random_lines_of_hard_pieces_find_the_same_matches() -> None:
    rng = random.Random(35)
    for _ in range(20_000):
        line = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        assert _narrowed(line) == _plain(line), repr(line)


@pytest.mark.parametrize("line", [
    "step 12345: loss 2.3145 lr 3.0e-4 throughput 1234.5 tok/s elapsed 0.0231 s " + "x" * 40,
    "x -5 ms", "a-5 ms", "-5 ms", "foo: bar 5 ms", "a : b : 5 ms", "time ms latency 3 ms",
    "Output token throughput (tok/s): 94.1", "mean ITL (ms):  12.5", "gen 10 tok/s, prefill 2000 tokens/s",
    "decode\u00a0=\u2003 17 ms", "b" * 60 + " 5 ms", "5 msx 6 ms", "nothing here", "",
])
def test_lines_from_logs_and_corners_find_the_same_matches(line: str) -> None:
    assert _narrowed(line) == _plain(line)


def test_the_figures_of_a_log_line_are_still_read() -> None:
    assert _generic("step 3: loss 2.31 throughput 1234.5 tok/s elapsed 0.02 s xxxx") == [
        ("throughput", 1234.5, "tok/s", "throughput")]
    assert {m.name: m.value for m in scan_text("warmup\nprefill 2000 tokens/s, decode 31.5 ms\n")} == {
        "prefill": 2000.0, "decode": 31.5}
