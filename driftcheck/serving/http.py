"""Plain HTTP to a server URL with the standard library: checked URLs, GETs that never raise on a status.

Only the standard library talks HTTP, so driftcheck needs no HTTP client in the benchmark's venv.
"""

from __future__ import annotations

import http.client
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from driftcheck.errors import DriftcheckError, UsageError

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


def _read_some(response: http.client.HTTPResponse, size: int, deadline: float) -> bytes:
    """What has arrived of the body, up to `size` bytes (b"" at its end); BodyTooSlow past `deadline`. The
    socket's own timeout bounds each wait; the deadline bounds them all together."""
    if time.monotonic() > deadline:
        raise BodyTooSlow("the answer did not end within the time given to it")
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
    """GET `path` on the server at `url`; any status is a Reply, an unreachable server a ServerError."""
    conn, prefix = connection(url, timeout_s)
    try:
        conn.request("GET", prefix + path, headers={"Accept": "application/json, text/plain"})
        response = conn.getresponse()
        body = read_body(response, MAX_BODY_BYTES, time.monotonic() + timeout_s)
        return Reply(response.status, body, response.getheader("Content-Type") or "",
                     response.getheader("Server") or "")
    except BodyTooSlow as exc:
        raise ServerError(f"{url}{path}: {exc}") from None
    except OSError as exc:
        raise ServerError(f"cannot reach {url}: {exc.strerror or exc}") from None
    except http.client.HTTPException as exc:
        raise ServerError(f"{url} does not answer HTTP: {type(exc).__name__}") from None
    finally:
        conn.close()





def error_line(status: int, body: bytes) -> str:
    """One line for an HTTP error: its status and the start of the body (an HTML page would flood the report)."""
    text = " ".join(body[:300].decode("utf-8", "replace").split())
    return f"HTTP {status}: {text[:200]}"
