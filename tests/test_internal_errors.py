"""The internal errors the issue found, each now a one-line error with exit 2: a path component over 255
characters, DRIFTCHECK_HOME naming a file, a run number past SQLite's integers."""

from __future__ import annotations

import resource
import sqlite3
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


def test_a_figure_that_is_not_finite_is_no_figure(cli: Callable[..., CliResult]) -> None:
    """`try -- echo 1e999 ms` (the issue's case): the figure reads as infinity, which no ratio can use."""
    done = cli("try", "--max-pairs", "2", "-q", "--", "echo", "1e999", "ms")
    assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
    ran = cli("run", "--probe", "env", "--", "echo", "1e999", "ms")
    assert ran.returncode == 0 and "no figure found" in ran.stderr + ran.stdout
    assert "Infinity" not in cli("runs", "1", "--format", "json").stdout


def test_a_signing_key_that_is_a_device_is_refused(cli: Callable[..., CliResult], driftcheck_home: Path) -> None:
    driftcheck_home.mkdir(parents=True, exist_ok=True)
    (driftcheck_home / "signing_key.pem").symlink_to("/dev/zero")
    done = cli("key", "show")
    _one_line_trouble(done)
    assert "not a regular file" in done.stderr


def test_a_damaged_store_row_says_so(cli: Callable[..., CliResult], driftcheck_home: Path) -> None:
    assert cli("snapshot", "--probe", "env", "-q").returncode == 0
    db = sqlite3.connect(driftcheck_home / "snapshots.db")
    db.execute("UPDATE snapshots SET status_counts = '[[['")
    db.commit()
    db.close()
    for args in (("log",), ("gc", "--dry-run", "--keep-last", "1")):
        done = cli(*args)
        _one_line_trouble(done)
        assert "damaged in the store" in done.stderr


def test_a_snapshot_of_millions_of_empty_objects_is_refused_before_it_is_built(cli: Callable[..., CliResult],
                                                                                 tmp_path: Path) -> None:
    """The issue's 250 MB snapshot of `{}` needed over 4 GiB; 30 MB of them (the shape, smaller) is refused in
    one line, with the memory it cost bounded."""
    path = tmp_path / "objects.json"
    path.write_text('{"schema":1,"probes":{"p":{"status":"ok","data":[' + ",".join(["{}"] * 10_000_000) + "]}}}")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    done = cli("show", str(path))
    _one_line_trouble(done)
    assert "objects and arrays" in done.stderr
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 400 * 1024  # KiB
