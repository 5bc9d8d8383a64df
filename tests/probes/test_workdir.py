"""The workdir probe: the git commit of the directory `driftcheck run` ran in, read from a real git repository
made in the test, and `explain` of two runs at two commits naming the code first."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.probes.workdir import parse_git
from tests.conftest import CliResult

SHA1 = "0123456789abcdef0123456789abcdef01234567"


def test_git_output_is_read_as_a_commit_and_a_count_of_changed_tracked_files() -> None:
    assert parse_git(SHA1 + "\n", " M bench.py\nM  model.py\n") == {"commit": SHA1, "modified_files": 2}
    assert parse_git(SHA1, "") == {"commit": SHA1, "modified_files": 0}
    assert parse_git("ab" * 32, None) == {"commit": "ab" * 32, "modified_files": None}  # a SHA-256 repository
    with pytest.raises(ValueError, match="no object name"):
        parse_git("fatal: not a git repository", "")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                           "-c", "commit.gpgsign=false", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _run_here(cli_process: Callable[..., CliResult], repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)  # the run's working directory
    done = cli_process("run", "--probe", "env", "--", sys.executable, "-c", "print('done')")
    assert done.returncode == 0, done.stderr


def test_two_runs_at_two_commits_name_the_code_first(cli_process: Callable[..., CliResult], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "bench"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "bench.py").write_text("BATCH = 8\n", "utf-8")
    _git(repo, "add", "bench.py")
    _git(repo, "commit", "-q", "-m", "a")
    first = _git(repo, "rev-parse", "HEAD")
    _run_here(cli_process, repo, monkeypatch)
    (repo / "bench.py").write_text("BATCH = 1\n", "utf-8")
    _git(repo, "commit", "-q", "-am", "b")
    second = _git(repo, "rev-parse", "HEAD")
    (repo / "bench.py").write_text("BATCH = 2\n", "utf-8")  # and a change on top, not committed
    _run_here(cli_process, repo, monkeypatch)

    shown = cli_process("show", "run:2", "--full", "--format", "json")
    workdir = json.loads(shown.stdout)["probes"]["workdir"]
    assert workdir["status"] == "ok" and workdir["data"] == {"commit": second, "modified_files": 1}
    assert str(repo) not in shown.stdout.split('"cwd"')[0]  # the probe keeps no path

    explained = json.loads(cli_process("explain", "run:1", "run:2", "--format", "json").stdout)
    top = explained["explanations"][0]
    assert top["rule"] == "benchmark-commit-changed", [e["title"] for e in explained["explanations"]]
    assert first in top["title"] and second in top["title"] and f"git checkout {first}" in top["fix"]
    assert top["fix_kind"] == "advice"  # A's code comes back only from the user's repository


def test_a_directory_outside_git_is_said_so(cli_process: Callable[..., CliResult], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    _run_here(cli_process, tmp_path, monkeypatch)
    workdir = json.loads(cli_process("show", "run:1", "--full", "--format", "json").stdout)["probes"]["workdir"]
    assert workdir["status"] == "unavailable" and "not in a git work tree" in workdir["error"]["message"]
