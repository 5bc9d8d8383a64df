"""Plain HTTP to a server URL with the standard library: checked URLs, GETs that never raise on a status.

Only the standard library talks HTTP, so driftcheck needs no HTTP client in the benchmark's venv.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from driftcheck.errors import DriftcheckError, UsageError

if TYPE_CHECKING:
    # Imported where a request is made: every snapshot's options check URLs (parse_url), and http.client with
    # the email parser it loads took ~15 ms of a snapshot's imports, for a probe taken only with --server.
    import http.client

# A /metrics page can be large (one info gauge per engine and LoRA adapter); more than this is not
# configuration and is cut off rather than held in memory.
MAX_BODY_BYTES = 4 * 2**20


class ServerError(DriftcheckError):
    """The server could not be reached or did not answer like an OpenAI-compatible server."""


@dataclass(frozen=True)
class ServerURL:
    """A checked http(s)://HOST[:PORT][/PREFIX] URL."""

    scheme: str
    hostname: str
    port: int
    prefix: str

    @property
    def text(self) -> str:
        host = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return f"{self.scheme}://{host}:{self.port}{self.prefix}"


def parse_url(url: str, option: str = "--server") -> ServerURL:
    """The parts of `url`; a UsageError naming `option` when it is not an http(s) URL with a host."""
    try:
        parsed = urllib.parse.urlsplit(url)
        port = parsed.port  # raises on a port that is not a number
    except ValueError:
        raise UsageError(f"{option} {url!r}: expected an http(s)://HOST[:PORT] URL") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(f"{option} {url!r}: expected an http(s)://HOST[:PORT] URL")
    port = port or (443 if parsed.scheme == "https" else 80)
    return ServerURL(parsed.scheme, parsed.hostname, port, parsed.path.rstrip("/"))


def connection(url: str, timeout_s: float) -> tuple[http.client.HTTPConnection, str]:
    """An unopened connection to the server of `url`, and the path prefix every request starts with."""
    import http.client

    parts = parse_url(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname, parts.port, timeout=timeout_s), parts.prefix


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, the Server and Content-Type headers, and the body (cut at MAX_BODY_BYTES)."""

    status: int
    body: bytes
    content_type: str = ""
    server: str = ""

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class BodyTooSlow(TimeoutError):
    """A server kept sending, too slowly to end within the time a request is given (one byte a second)."""


TOO_SLOW = "the answer did not end within the time given to it"


@contextlib.contextmanager
def exchange_within(conn: http.client.HTTPConnection, seconds: float) -> Iterator[threading.Event]:
    """Cut `conn` once `seconds` have passed, whatever it is waiting for: a socket's timeout bounds one wait
    only, so a server sending its status line or headers a byte at a time would hold a request for hours. The
    event yielded says the connection was cut (the caller then reports TOO_SLOW, not the error the cut caused)."""
    cut = threading.Event()

    def shut() -> None:
        cut.set()
        sock = conn.sock
        if sock is not None:
            # shutdown, not close: it wakes a recv blocked in another thread
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(seconds, shut)
    timer.daemon = True
    timer.start()
    try:
        yield cut
    finally:
        timer.cancel()


def _read_some(response: http.client.HTTPResponse, size: int, deadline: float) -> bytes:
    """What has arrived of the body, up to `size` bytes (b"" at its end); BodyTooSlow past `deadline`. The
    socket's own timeout bounds each wait; the deadline bounds them all together."""
    if time.monotonic() > deadline:
        raise BodyTooSlow(TOO_SLOW)
    return response.read1(size)


def read_body(response: http.client.HTTPResponse, limit: int, deadline: float) -> bytes:
    """The body, cut at `limit` bytes, read by the chunk as it arrives; BodyTooSlow past `deadline`."""
    chunks: list[bytes] = []
    size = 0
    while size < limit and (chunk := _read_some(response, min(65536, limit - size), deadline)):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def stream_lines(response: http.client.HTTPResponse, deadline: float, longest: int = MAX_BODY_BYTES,
                 ) -> Iterator[bytes]:
    """The lines of a streamed body as they arrive (without their line ends); BodyTooSlow past `deadline`,
    ValueError for a line longer than `longest` (a stream is made of short events)."""
    pending = b""
    while chunk := _read_some(response, 65536, deadline):
        *complete, pending = (pending + chunk).split(b"\n")
        yield from complete
        if len(pending) > longest:
            raise ValueError(f"a streamed line longer than {longest} bytes")
    if pending:
        yield pending


def get(url: str, path: str, timeout_s: float = 10.0) -> Reply:
    """GET `path` on the server at `url`; any status is a Reply, an unreachable server a ServerError. The
    headers must come within `timeout_s` and the body within as much again."""
    import http.client

    conn, prefix = connection(url, timeout_s)
    with exchange_within(conn, 2 * timeout_s) as cut:
        try:
            conn.request("GET", prefix + path, headers={"Accept": "application/json, text/plain"})
            response = conn.getresponse()
            body = read_body(response, MAX_BODY_BYTES, time.monotonic() + timeout_s)
            if cut.is_set():  # what arrived before the cut may parse, but it is not the whole answer
                raise ServerError(f"{url}{path}: {TOO_SLOW}")
            return Reply(response.status, body, response.getheader("Content-Type") or "",
                         response.getheader("Server") or "")
        except BodyTooSlow as exc:
            raise ServerError(f"{url}{path}: {exc}") from None
        except (OSError, http.client.HTTPException) as exc:
            if cut.is_set():
                raise ServerError(f"{url}{path}: {TOO_SLOW}") from None
            if isinstance(exc, OSError):
                raise ServerError(f"cannot reach {url}: {exc.strerror or exc}") from None
            raise ServerError(f"{url} does not answer HTTP: {type(exc).__name__}") from None
        finally:
            conn.close()





def error_line(status: int, body: bytes) -> str:
    """One line for an HTTP error: its status and the start of the body (an HTML page would flood the report)."""
    text = " ".join(body[:300].decode("utf-8", "replace").split())
    return f"HTTP {status}: {text[:200]}"
