"""Control characters in labels (and run commands) are shown escaped wherever they are printed: a newline never
forges a line, an ESC sequence never reaches the terminal, a backtick never ends a Markdown code span."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.snapshot.printable import printable
from tests.conftest import CliResult

LABEL = "ok\nFORGED 0000 line\x1b[2J\x1b]0;title\x07\x9b31m\u202eevil` | **x** <b>"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


@pytest.mark.parametrize(("text", "shown"), [
    ("plain label", "plain label"),
    ("a\nb\tc\r", "a\\nb\\tc\\r"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("\x00\x7f\x85\x9b", "\\x00\\x7f\\x85\\x9b"),
    ("\u202eevil\u2066\u2028", "\\u202eevil\\u2066\\u2028"),
    ("héllo — ünïcode 日本", "héllo — ünïcode 日本"),
])
def test_printable_escapes_controls_and_keeps_the_rest(text: str, shown: str) -> None:
    assert printable(text) == shown


def _assert_inert(name: str, text: str) -> None:
    assert not [c for c in RAW if c in text], (name, text)
    assert not [line for line in text.splitlines() if line.lstrip("-* ").startswith("FORGED")], (name, text)


def test_a_label_with_control_characters_is_shown_escaped_everywhere(cli: Callable[..., CliResult],
                                                                     tmp_path: Path) -> None:
    for _ in range(2):
        assert cli("snapshot", "--probe", "system", "--label", LABEL).returncode == 0
    ran = cli("run", "--probe", "system", "--label", LABEL, "--", sys.executable, "-c", "pass", "\x1b[2J\nFORGED")
    assert ran.returncode == 0, ran.stderr
    outputs = {}
    for args in (("log",), ("show", "@latest"), ("show", "@latest", "--full"), ("diff", "@prev", "@latest"),
                 ("explain", "@3", "@latest"), ("explain", "@3", "@latest", "--format", "markdown"),
                 ("explain", "run:@latest", "run:@latest"), ("runs",), ("runs", "1")):
        done = cli(*args)
        assert done.returncode in (0, 1), (args, done.stderr)
        outputs[" ".join(args)] = done.stdout + done.stderr
    report = tmp_path / "report"
    assert cli("report", "@latest", "--against", "@3", "--output", str(report)).returncode == 0
    outputs["report"] = (report / "report.md").read_text()
    page = tmp_path / "runs.html"
    assert cli("runs", "--html", str(page)).returncode == 0
    outputs["runs --html"] = page.read_text()
    outputs["run"] = ran.stderr
    for name, text in outputs.items():
        _assert_inert(name, text)
    assert "ok\\nFORGED 0000 line\\x1b[2J" in outputs["log"]
    assert "ok\\nFORGED" in outputs["runs 1"] and "\\x1b[2J\\nFORGED" in outputs["runs 1"]
    # In Markdown the label's own backtick and emphasis are inert too.
    markdown = outputs["explain @3 @latest --format markdown"]
    assert "evil\\` \\| \\*\\*x\\*\\* \\<b\\>" in markdown
