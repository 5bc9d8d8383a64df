"""The SSH layer within bounds without a real sshd: a garbage server is one HostError and nothing on stderr
(paramiko's own tracebacks silenced), a hung ssh-agent is a HostError within its time limit, not a hang."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import paramiko
import pytest

from driftcheck.errors import HostError
from driftcheck.hosts.sshconnect import Endpoint, agent, connect


def _serve(listener: socket.socket, handle: Callable[[socket.socket], None]) -> threading.Thread:
    def loop() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def garbage_server() -> Iterator[int]:
    """A TCP server that sends an SSH banner, then bytes no SSH peer sends."""
    listener = socket.create_server(("127.0.0.1", 0))

    def handle(conn: socket.socket) -> None:
        try:
            conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + bytes(range(256)) * 64)
            time.sleep(0.5)
        except OSError:
            pass
        finally:
            conn.close()

    _serve(listener, handle)
    yield listener.getsockname()[1]
    listener.close()


def test_a_garbage_server_is_one_host_error_and_nothing_on_stderr(
        garbage_server: int, tmp_path: Path, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    endpoint = Endpoint("garbage", "127.0.0.1", garbage_server, "nobody", (), None, (str(tmp_path / "kh"),))
    with pytest.raises(HostError) as caught:
        connect(endpoint, True, 5.0, paramiko.SSHConfig())
    assert "\n" not in str(caught.value)
    time.sleep(0.3)  # paramiko's transport thread logs its failure as it ends
    out, err = capfd.readouterr()
    assert err == "", err


@pytest.fixture
def agent_socket(tmp_path: Path) -> Iterator[Callable[[bool], str]]:
    """A unix socket speaking as ssh-agent: `answer=False` accepts and never answers (a hung agent)."""
    listeners: list[socket.socket] = []

    def start(answer: bool) -> str:
        path = str(tmp_path / f"agent{len(listeners)}.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen()
        listeners.append(listener)

        def handle(conn: socket.socket) -> None:
            conn.recv(1024)
            if answer:  # SSH2_AGENT_IDENTITIES_ANSWER, no keys
                body = bytes([12]) + struct.pack(">I", 0)
                conn.sendall(struct.pack(">I", len(body)) + body)
            time.sleep(30)

        _serve(listener, handle)
        return path

    yield start
    for listener in listeners:
        listener.close()


def test_a_hung_agent_is_a_host_error_within_its_limit(agent_socket: Callable[[bool], str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", agent_socket(False))
    started = time.monotonic()
    with pytest.raises(HostError, match="did not answer within 0.5 s"):
        agent(0.5)
    assert time.monotonic() - started < 3


def test_a_working_agent_is_used_and_a_missing_one_is_no_error(agent_socket: Callable[[bool], str],
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", agent_socket(True))
    found = agent(2.0)
    assert found is not None and found.get_keys() == ()
    found.close()
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "gone.sock"))
    assert agent(2.0) is None
    monkeypatch.delenv("SSH_AUTH_SOCK")
    assert agent(2.0) is None
