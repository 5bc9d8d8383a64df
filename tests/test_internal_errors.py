"""The internal errors the issue found, each now a one-line error with exit 2: a path component over 255
characters, DRIFTCHECK_HOME naming a file, a run number past SQLite's integers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult


def _one_line_trouble(done: CliResult) -> None:
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("args", [("runs", "--html", "{long}.html"), ("record", "{long}", "--probe", "env"),
                                  ("snapshot", "--probe", "env", "--output", "{long}.json"),
                                  ("show", "{long}")])
def test_a_path_component_over_255_characters(args: tuple[str, ...], cli: Callable[..., CliResult],
                                              tmp_path: Path) -> None:
    long = str(tmp_path / ("a" * 300))
    _one_line_trouble(cli(*(arg.format(long=long) for arg in args)))


@pytest.mark.parametrize("args", [("log",), ("snapshot", "--probe", "env"), ("runs",), ("key", "show")])
def test_a_home_that_is_a_file(args: tuple[str, ...], cli: Callable[..., CliResult], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory")
    monkeypatch.setenv("DRIFTCHECK_HOME", str(home))
    done = cli(*args)
    _one_line_trouble(done)
    assert str(home) in done.stderr


@pytest.mark.parametrize("reference", ["99999999999999999999999", "run:99999999999999999999999",
                                       "run:@99999999999999999999999"])
def test_a_run_number_past_any_stored(reference: str, cli: Callable[..., CliResult]) -> None:
    _one_line_trouble(cli("runs", reference))
