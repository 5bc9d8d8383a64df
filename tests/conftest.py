"""Shared fixtures: every test gets its own DRIFTCHECK_HOME (key, secret, store) under tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from driftcheck.cli import main

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(autouse=True)
def driftcheck_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home for keys and the store, so no test reads or writes the user's real ones."""
    home = tmp_path / "dchome"
    monkeypatch.setenv("DRIFTCHECK_HOME", str(home))
    return home


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run `driftcheck ARGS` in-process; returns exit code and captured output."""

    def run(*args: str) -> CliResult:
        code = main(list(args))
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run


@pytest.fixture
def cli_process() -> Callable[..., CliResult]:
    """Run `python -m driftcheck ARGS` as a real process (for tracebacks, exit codes, environment)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> CliResult:
        full_env = {**os.environ, **(env or {})}
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), full_env.get("PYTHONPATH")]))
        done = subprocess.run([sys.executable, "-m", "driftcheck", *args], capture_output=True, text=True,
                              env=full_env, timeout=timeout, check=False)
        return CliResult(done.returncode, done.stdout, done.stderr)

    return run


# Inference servers (a real `transformers serve`, a replay of recorded SGLang/vLLM answers): tests/servers.py.
from tests.servers import replay_server, transformers_server  # noqa: E402, F401 - fixtures
