"""The serving client against a real local HTTP server that streams OpenAI-style SSE with known timing."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from driftcheck.baselines.serving import ServerError, ServingPlan, measure_server, server_info

TTFT_S = 0.060
GAP_S = 0.015
SERVER_INFO = {"version": "0.4.6", "attention_backend": "flashinfer", "speculative_algorithm": "EAGLE",
               "disable_cuda_graph": False, "cuda_graph_max_bs": 8}


class StreamingHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bodies: list[dict[str, Any]]

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": "llama-test", "object": "model"}]})
        elif self.path == "/get_server_info":
            self._json(200, SERVER_INFO)
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)  # type: ignore[attr-defined]
        if self.path != "/v1/completions":
            self._json(404, {"detail": "Not Found"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        time.sleep(TTFT_S)
        for index in range(body["max_tokens"]):
            if index:
                time.sleep(GAP_S)
            chunk = {"object": "text_completion", "choices": [{"index": 0, "text": f" t{index}"}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        usage = {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": body["max_tokens"]}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def server() -> Iterator[tuple[str, ThreadingHTTPServer]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StreamingHandler)
    httpd.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


def test_measures_ttft_itl_and_throughput_at_two_concurrencies(server: tuple[str, Any]) -> None:
    url, httpd = server
    plan = ServingPlan(requests=4, prompt_words=16, output_tokens=5, concurrency=4, timeout_s=10)
    data = measure_server(url, plan)
    results = data["results"]
    assert data["model"] == "llama-test"
    assert data["server_info"]["get_server_info"] == SERVER_INFO
    assert data["server_info"]["version"] is None  # not a vLLM server: endpoint absent, not an error
    ttft = results["serving_c1_ttft_ms"]
    assert ttft["n"] == 4 and TTFT_S * 1000 <= ttft["median"] < TTFT_S * 1000 + 100  # slack: a busy CI box
    itl = results["serving_c1_itl_ms"]
    assert itl["n"] == 16 and GAP_S * 1000 * 0.9 <= itl["median"] < GAP_S * 1000 + 30
    assert results["serving_c1_itl_p99_ms"]["median"] >= itl["median"]
    # 5 tokens take at least 0.12 s: one at a time at most ~42 tok/s, four at once about four times that
    c1 = results["serving_c1_output_tok_per_s"]["median"]
    c4 = results["serving_c4_output_tok_per_s"]["median"]
    assert results["serving_c4_output_tok_per_s"]["output_tokens"] == 20
    assert 10 < c1 < 42 and c4 > 2 * c1
    # warm-up + 4 at concurrency 1 + 4 at concurrency 4, all the same deterministic requests
    assert len(httpd.bodies) == 9
    first = httpd.bodies[1]
    assert first["stream"] is True and first["temperature"] == 0.0 and first["ignore_eos"] is True
    assert first["max_tokens"] == 5 and len(first["prompt"].split()) == 16
    # concurrency 4 sends the same four requests, in whatever order the server receives them
    assert sorted(b["prompt"] for b in httpd.bodies[1:5]) == sorted(b["prompt"] for b in httpd.bodies[5:9])
    assert len({b["prompt"] for b in httpd.bodies[1:5]}) == 4


def test_request_set_is_the_same_every_run() -> None:
    assert ServingPlan().prompts() == ServingPlan().prompts()
    assert ServingPlan(seed=1).prompts() != ServingPlan().prompts()


def test_unreachable_server_is_a_one_line_error() -> None:
    with pytest.raises(ServerError, match="cannot reach"):
        server_info("http://127.0.0.1:9")


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:abc", "ftp://127.0.0.1/", "127.0.0.1:30000"])
def test_malformed_server_urls_are_usage_errors(url: str) -> None:
    from driftcheck.errors import UsageError

    with pytest.raises(UsageError, match="expected an http"):
        measure_server(url, ServingPlan(requests=1))


def test_a_port_that_speaks_no_http_is_a_server_error() -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def answer() -> None:
        for _ in range(3):  # bounded: /get_server_info, /version, /v1/models at most
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
            conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        with pytest.raises(ServerError, match="does not answer HTTP"):
            server_info(f"http://127.0.0.1:{listener.getsockname()[1]}")
    finally:
        listener.close()
