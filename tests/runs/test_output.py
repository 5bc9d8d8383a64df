"""One output reader: `run` and `try` cut a command's output into the same lines and read the same figures."""

from __future__ import annotations

import io
import os
import sys

import pytest

from driftcheck.runs.execute import run_command
from driftcheck.runs.metrics import user_pattern
from driftcheck.runs.output import OutputLines, OutputReader, scan_text, split_lines
from driftcheck.runs.trial import TrialError, TrialPlan, Variant, _run_command, run_trial

_SCORE = "score=^score ([0-9.]+)"


def test_a_form_feed_does_not_end_a_line() -> None:
    # The case: the figure after \f is not at the start of a line as a terminal shows it.
    assert scan_text("epoch 3\fscore 12.5\n", [user_pattern(_SCORE)]) == []
    assert [m.value for m in scan_text("epoch 3\nscore 12.5\n", [user_pattern(_SCORE)])] == [12.5]


def test_only_the_line_ends_a_terminal_shows_end_a_line() -> None:
    others = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
    assert split_lines(f"a\r\nb\rc\nd{others}e\n") == ["a", "b", "c", f"d{others}e"]
    lines = OutputLines()
    assert lines.feed(f"x{others}y\r".encode()) == [] and lines.feed(b"\nz") == [f"x{others}y"]
    assert lines.close() == ["z"]


_PRINTS = ("import sys; o = sys.stdout; o.write('epoch 3\\fscore 12.5\\n'); o.write('10%\\r100%\\rscore 7.5\\r\\n'); "
           "o.write('a\\x85score 1.0\\n'); o.write('b\\u2028score 2.0\\n'); o.write('decode: 61.5 tok/s\\vscore 3\\n')")


def test_run_and_try_read_the_same_figures_from_the_same_output() -> None:
    patterns = (user_pattern(_SCORE),)
    argv = [sys.executable, "-c", _PRINTS]
    reader = OutputReader(patterns)
    finished = run_command(argv, reader, stdout=io.BytesIO(), stderr=io.BytesIO())
    tried = _run_command(argv, dict(os.environ), patterns, None)
    assert finished.exit_code == 0 and tried.exit_code == 0
    run_figures = [m.to_json() for m in reader.metrics()]
    assert run_figures == [m.to_json() for m in tried.metrics]
    # Only the score that starts a line a terminal shows (after the redrawn progress) counts.
    assert {m["name"]: m["value"] for m in run_figures} == {"score": 7.5, "decode": 61.5}


def test_try_finds_no_figure_where_run_finds_none() -> None:
    plan = TrialPlan(command=(sys.executable, "-c", "print('epoch 3\\fscore 12.5')"),
                     variants=(Variant("A"), Variant("B")), patterns=(user_pattern(_SCORE),), metric="score",
                     max_pairs=2, seed=1, record=False)
    with pytest.raises(TrialError, match="held no the figure 'score'"):
        run_trial(plan)


def test_a_figure_split_across_two_chunks_is_read_once_whole() -> None:
    # A pipe's read ends anywhere: inside a figure's line, its number, or between the \r and \n of its line end.
    line = "Output token throughput (tok/s):          1915.40\r\n"
    data = ("step 1: 812.5 tok/s\n" * 3 + line + "step 2: 820.0 tok/s\n").encode()
    start = data.index(b"Output")
    for cut in (start + 10, start + len(line) - 4, start + len(line) - 1):
        reader = OutputReader()
        reader.feed(data[:cut])
        reader.feed(data[cut:])
        reader.close()
        assert [(m.name, m.value, m.count) for m in reader.metrics()] == [
            ("tokens_per_second", 820.0, 4), ("output_token_throughput", 1915.4, 1)]
        assert reader.tail()[-2:] == [line.rstrip("\r\n"), "step 2: 820.0 tok/s"]
