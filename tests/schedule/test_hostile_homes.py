"""A home path that holds `$`, `%`, a backslash before `%`, or a Unicode line separator: the unit or cron line
either carries it exactly as the path is, or install refuses it in one line (issue 31: `$` became `$$` in
Environment=, `\\%` broke the cron line, U+2028 made `schedule remove` leave the units and exit 0)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.schedule.installer import systemd_running
from tests.conftest import CliResult

without_systemd = pytest.mark.skipif(systemd_running(), reason="systemd runs this machine: no cron fallback")


def cron_command(line: str) -> str:
    """The command cron gives the shell for a crontab line's command part, as cronie's do_command.c cuts it
    (src/do_command.c: `\\%` becomes `%`, any other backslash stays, the first bare `%` ends the command)."""
    kept: list[str] = []
    escaped = False
    for char in line:
        if escaped:
            if char == "%":
                kept[-1] = "%"
            else:
                kept.append(char)
            escaped = False
            continue
        if char == "\\":
            escaped = True
            kept.append(char)
            continue
        if char == "%":
            break
        kept.append(char)
    return "".join(kept)


@without_systemd
@pytest.mark.parametrize("name", ["50%\\%d", "a\\%%b", "x$HOME$$y", "tail\\", "%"])
def test_cron_carries_the_home_exactly(name: str, cli: Callable[..., CliResult], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / name
    monkeypatch.setenv("DRIFTCHECK_HOME", str(home))
    cron_d = tmp_path / "cron.d"
    cron_d.mkdir()
    done = cli("schedule", "install", "--cron-dir", str(cron_d))
    assert done.returncode == 0, done.stderr
    line = (cron_d / "driftcheck").read_text("utf-8").splitlines()[-1]
    words = shlex.split(cron_command(line.split(" root ", 1)[1]))
    assert f"DRIFTCHECK_HOME={home}" in words


def test_systemd_environment_keeps_a_dollar_as_it_is(cli: Callable[..., CliResult], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """systemd.exec(5): in Environment= "variable expansion is not performed inside the strings, and $ has no
    special meaning"; in ExecStart= `$$` is a dollar."""
    home = tmp_path / "a$b"
    monkeypatch.setenv("DRIFTCHECK_HOME", str(home))
    root = tmp_path / "image"
    root.mkdir()
    assert cli("schedule", "install", "--root", str(root)).returncode == 0
    service = next(root.rglob("driftcheck-scheduled.service")).read_text("utf-8")
    environment = next(line for line in service.splitlines() if line.startswith("Environment="))
    assert f"DRIFTCHECK_HOME={home}" in environment and "$$" not in environment


@pytest.mark.parametrize("separator", ["\u2028", "\u0085", "\u2029"])
def test_a_line_separator_in_the_home_is_refused(separator: str, cli: Callable[..., CliResult], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFTCHECK_HOME", str(tmp_path / f"a{separator}b"))
    root = tmp_path / "image"
    root.mkdir()
    done = cli("schedule", "install", "--root", str(root))
    assert done.returncode == 2 and "control character" in done.stderr, done.stderr
    assert not any(path.is_file() for path in root.rglob("*"))
