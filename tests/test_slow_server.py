"""A server that answers one byte at a time never trips a socket's timeout: each GET and each streamed request
is bounded by its total time instead (issue 31: `bench --server` never ended on such a server)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from driftcheck.baselines.serving import stream_request
from driftcheck.serving.http import ServerError, get


def _trickle(head: bytes) -> Iterator[str]:
    """A server that sends `head` at once, then one byte every 0.1 s for ever (until closed)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(head)
                while not stop.is_set():
                    conn.sendall(b"x")
                    time.sleep(0.1)
            except OSError:
                pass

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    listener.close()


@pytest.fixture
def trickling_server() -> Iterator[str]:
    """A valid header, then the body a byte at a time."""
    yield from _trickle(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000000\r\n\r\n")


@pytest.fixture
def trickling_headers() -> Iterator[str]:
    """A status line, then one header that never ends, a byte at a time (each byte well inside a socket's
    timeout; http.client allows a header line of 64 KiB: 1.8 hours at this pace)."""
    yield from _trickle(b"HTTP/1.1 200 OK\r\nX-Slow: ")


def test_a_get_ends_within_its_time(trickling_server: str) -> None:
    started = time.monotonic()
    with pytest.raises(ServerError, match="did not end within the time"):
        get(trickling_server, "/get_server_info", timeout_s=1.0)
    assert time.monotonic() - started < 5


def test_a_streamed_request_ends_within_its_time(trickling_server: str) -> None:
    started = time.monotonic()
    timing = stream_request(trickling_server, "/v1/completions", {"prompt": "x"}, timeout_s=1.0)
    assert time.monotonic() - started < 5
    assert timing.error is not None and "did not end within the time" in timing.error


def test_headers_sent_a_byte_at_a_time_end_within_the_time_too(trickling_headers: str) -> None:
    started = time.monotonic()
    with pytest.raises(ServerError, match="did not end within the time"):
        get(trickling_headers, "/get_server_info", timeout_s=1.0)
    timing = stream_request(trickling_headers, "/v1/completions", {"prompt": "x"}, timeout_s=1.0)
    assert timing.error is not None and "did not end within the time" in timing.error
    assert time.monotonic() - started < 10
