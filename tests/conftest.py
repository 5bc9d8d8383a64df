"""Shared fixtures: every test gets its own DRIFTCHECK_HOME (key, secret, store) under tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from driftcheck.cli import main
from tests.serving import engines

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


# Fixtures that start a real peer (a server, a venv) or spawn the CLI: every test using one is `slow`, marked
# here once rather than by hand in each file. `pytest -m "not slow"` is the inner loop.
SLOW_FIXTURES = frozenset({"cli_process", "transformers_server", "tiny_model", "sshd", "sshd_factory", "remote_python",
                           "pristine_venv", "wheel_venv", "engine_path", "engine_source"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test that uses one of `SLOW_FIXTURES`, and put every slow test in one xdist group.

    With `-n 2 --dist loadgroup` (the README's test command) the slow tests run one after another on one
    worker, never two at once: they start servers and benchmarks, and several time the machine. The other
    worker takes the rest (in-process, ~3,700 tests), which the slow ones were written to withstand, as
    they withstand a shared CI machine.
    """
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("slow") is not None:
            item.add_marker(pytest.mark.xdist_group("slow"))


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
    """Run `driftcheck ARGS` in-process; returns exit code and captured output.

    A usage error (argparse exits) comes back as its exit code, as it would from the process; anything else
    that escapes `main` (a traceback a user would see) fails the test.
    """

    def run(*args: str) -> CliResult:
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run


@pytest.fixture
def cli_process() -> Callable[..., CliResult]:
    """Run `python -m driftcheck ARGS` as a real process, where a process is the point (signals, pipes, what
    a fresh interpreter imports); a test using it belongs under `@pytest.mark.slow`. Else use `cli`."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> CliResult:
        full_env = {**os.environ, **(env or {})}
        full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), full_env.get("PYTHONPATH")]))
        done = subprocess.run([sys.executable, "-m", "driftcheck", *args], capture_output=True, text=True,
                              env=full_env, timeout=timeout, check=False)
        return CliResult(done.returncode, done.stdout, done.stderr)

    return run


# Inference servers (a real `transformers serve`, a replay of recorded SGLang/vLLM answers): tests/servers.py.
from tests.servers import replay_server, tiny_model, transformers_server  # noqa: E402, F401 - fixtures

_T = TypeVar("_T")


def _or_skip(provide: Callable[[str], _T]) -> Callable[[str], _T]:
    """`provide` (of tests/serving/engines.py) with a release it cannot provide skipping the test, with the reason."""
    def provided(name: str) -> _T:
        try:
            return provide(name)
        except engines.EngineUnavailable as exc:
            pytest.skip(f"{name} cannot be provided here: {exc}")

    return provided


@pytest.fixture(scope="session")
def engine_path() -> Callable[[str], str]:
    """`engine_path("vllm-0.34.0")`: the PYTHONPATH under which that real release imports (tests/serving/engines.py:
    downloaded once into a cache outside the venv, or given by DRIFTCHECK_ENGINE_PATHS); the test is skipped, with
    the reason, where the release cannot be provided (no network, or its modules need a GPU build)."""
    return _or_skip(engines.engine_path)


@pytest.fixture(scope="session")
def engine_source() -> Callable[[str], Path]:
    """`engine_source("sglang-0.5.9")`: that release's unpacked wheel, its source only (cached as `engine_path`)."""
    return _or_skip(engines.engine_source)
