"""Fixtures for the remote tests: real sshd servers on 127.0.0.1, a client HOME, a remote interpreter.

The remote interpreter is a venv of its own (not the one running the tests), so a snapshot over SSH
shows that the facts come from the interpreter named with --python on the far side.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.remote.sshd import Sshd, client_home, keygen, start_sshd


@pytest.fixture(scope="session")
def client_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The key the tests log in with (its .pub is authorized on every test sshd)."""
    return keygen(tmp_path_factory.mktemp("client") / "id_ed25519")


@pytest.fixture(scope="session")
def remote_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv other than the one running the tests: the interpreter the far side runs the readers with."""
    root = tmp_path_factory.mktemp("remote-venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    return root / "bin" / "python"


@pytest.fixture
def sshd_factory(tmp_path: Path, client_key: Path) -> Iterator[Callable[..., Sshd]]:
    """Start sshd servers for one test (`factory(name, set_env=..., host_key=...)`); all stopped after it."""
    started: list[Sshd] = []

    def start(name: str = "sshd", set_env: dict[str, str] | None = None, host_key: Path | None = None) -> Sshd:
        server = start_sshd(tmp_path / "servers" / name, client_key, set_env, host_key)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def sshd(sshd_factory: Callable[..., Sshd]) -> Sshd:
    """One running sshd for this test."""
    return sshd_factory()


@pytest.fixture
def ssh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    """Point HOME at a fresh client home (`make(key, {alias: server}, known=True)`); no ssh-agent."""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)

    def make(key: Path, servers: dict[str, Sshd], known: bool = True) -> Path:
        home = client_home(tmp_path / "home", key, servers, known)
        monkeypatch.setenv("HOME", str(home))
        return home

    return make
