"""The serving client against a local stand-in server that streams OpenAI-style SSE with known timing.

The real server of these tests is `transformers serve` (tests/baselines/test_serving_real.py). This
stand-in stays only for what the real one cannot show: exact, known chunk timing (one token per chunk
every GAP_S, so the measured latencies can be checked against the truth), an engine that accepts
`ignore_eos` (it answers /get_server_info like SGLang), a server without /v1/completions (the fall-back
to chat), a stream without `usage`, and a warm-up that fails with HTTP 500.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from driftcheck.baselines.render import results_text
from driftcheck.baselines.serving import (
    CHAT,
    RequestTiming,
    ServerError,
    ServingPlan,
    _read_event,
    measure_server,
    server_info,
)
from tests.servers import SERVERS_DATA

TTFT_S = 0.060
GAP_S = 0.015
SERVER_INFO = {"version": "0.4.6", "attention_backend": "flashinfer", "speculative_algorithm": "EAGLE",
               "disable_cuda_graph": False, "cuda_graph_max_bs": 8}


class StreamingHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    @property
    def settings(self) -> dict[str, Any]:
        return self.server.settings  # type: ignore[attr-defined, no-any-return]

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
        elif self.path == "/get_server_info" and self.settings["sglang"]:
            self._json(200, SERVER_INFO)
        else:
            self._json(404, {"detail": "Not Found"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append((self.path, body))  # type: ignore[attr-defined]
        if self.path not in self.settings["endpoints"]:
            self._json(404, {"detail": "Not Found"})
            return
        if self.settings["fail"]:
            self._json(500, {"detail": "CUDA out of memory"})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        time.sleep(TTFT_S)
        for index in range(body["max_tokens"]):
            if index:
                time.sleep(GAP_S)
            text = f" t{index}"
            choice = {"index": 0, "delta": {"content": text}} if self.path == CHAT else {"index": 0, "text": text}
            self.wfile.write(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())
            self.wfile.flush()
        last: dict[str, Any] = {"choices": [{"index": 0, "text": "", "finish_reason": "length"}]}
        if self.settings["usage"]:
            last["usage"] = {"prompt_tokens": 10, "completion_tokens": body["max_tokens"]}
        self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def start(**settings: Any) -> ThreadingHTTPServer:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StreamingHandler)
    httpd.bodies = []  # type: ignore[attr-defined]
    httpd.settings = {"sglang": True, "usage": True, "fail": False,  # type: ignore[attr-defined]
                      "endpoints": ("/v1/completions", CHAT), **settings}
    httpd.socket.setblocking(False)  # as tests/servers.py's replay: a reset connection never blocks accept
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture
def server() -> Iterator[tuple[str, ThreadingHTTPServer]]:
    httpd = start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def make_server() -> Iterator[Any]:
    made: list[ThreadingHTTPServer] = []

    def make(**settings: Any) -> tuple[str, ThreadingHTTPServer]:
        httpd = start(**settings)
        made.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}", httpd

    yield make
    for httpd in made:
        httpd.shutdown()
        httpd.server_close()


def test_measures_ttft_itl_and_throughput_at_two_concurrencies(server: tuple[str, Any]) -> None:
    url, httpd = server
    plan = ServingPlan(requests=4, prompt_words=16, output_tokens=5, concurrency=4, timeout_s=10)
    data = measure_server(url, plan)
    results = data["results"]
    assert data["model"] == "llama-test" and data["engine"] == "sglang" and data["engine_version"] == "0.4.6"
    assert data["server_info"]["server_args"]["cuda_graph_max_bs"] == 8
    assert data["dialect"]["length_control"] == "ignore_eos" and data["warnings"] == []
    ttft = results["serving_c1_ttft_ms"]
    assert ttft["n"] == 4 and TTFT_S * 1000 <= ttft["median"] < TTFT_S * 1000 + 100  # slack: a busy CI box
    chunk = results["serving_c1_itl_chunk_ms"]
    assert chunk["n"] == 16 and GAP_S * 1000 * 0.9 <= chunk["median"] < GAP_S * 1000 + 30
    assert chunk["p99"] >= chunk["median"] and chunk["tokens_per_chunk"] == 1.0
    # One token per chunk: the per-token latency is the gap too (plus the wait for the closing event).
    per_token = results["serving_c1_itl_token_ms"]
    assert per_token["n"] == 4 and GAP_S * 1000 * 0.9 <= per_token["median"] < GAP_S * 1000 + 30
    # 5 tokens take at least 0.12 s: one at a time at most ~42 tok/s, four at once about four times that
    c1 = results["serving_c1_output_tok_per_s"]
    c4 = results["serving_c4_output_tok_per_s"]["median"]
    assert results["serving_c4_output_tok_per_s"]["output_tokens"] == 20
    assert 10 < c1["median"] < 42 and c4 > 2 * c1["median"]
    assert c1["n"] == 1 and c1["cv"] is None and c1["ci_low"] is None  # one value is not a distribution
    assert [r["finish_reason"] for r in data["levels"]["c1"]["requests"]] == ["length"] * 4
    # warm-up + 4 at concurrency 1 + 4 at concurrency 4, all the same deterministic requests
    bodies = [body for _, body in httpd.bodies]
    assert len(bodies) == 9
    first = bodies[1]
    assert first["stream"] is True and first["temperature"] == 0.0 and first["ignore_eos"] is True
    assert first["min_tokens"] == 5 and first["stream_options"] == {"include_usage": True}
    assert first["max_tokens"] == 5 and len(first["prompt"].split()) == 16
    # concurrency 4 sends the same four requests, in whatever order the server receives them
    assert sorted(b["prompt"] for b in bodies[1:5]) == sorted(b["prompt"] for b in bodies[5:9])
    assert len({b["prompt"] for b in bodies[1:5]}) == 4


def test_falls_back_to_chat_when_completions_is_missing(make_server: Any) -> None:
    url, httpd = make_server(sglang=False, endpoints=(CHAT,))
    data = measure_server(url, ServingPlan(requests=2, prompt_words=8, output_tokens=3, concurrency=1, timeout_s=10))
    assert data["dialect"]["endpoint"] == CHAT and data["engine"] == "openai-compatible"
    assert any("/v1/completions: HTTP 404" in note for note in data["dialect"]["notes"])
    chat_bodies = [body for path, body in httpd.bodies if path == CHAT]
    assert chat_bodies[-1]["messages"][0]["role"] == "user" and "prompt" not in chat_bodies[-1]
    # Not known to take sampling extensions: no ignore_eos ever sent to it.
    assert all("ignore_eos" not in body for _, body in httpd.bodies)
    assert data["results"]["serving_c1_output_tok_per_s"]["output_tokens"] == 6


def test_without_usage_tokens_are_counted_as_chunks_and_said_so(make_server: Any) -> None:
    url, _ = make_server(usage=False)
    data = measure_server(url, ServingPlan(requests=2, prompt_words=8, output_tokens=3, concurrency=1, timeout_s=10))
    assert {r["tokens_from"] for r in data["levels"]["c1"]["requests"]} == {"chunks"}
    assert any("reported no token usage" in w for w in data["warnings"])
    assert "counted as streamed chunks" in results_text(data)


def test_failed_warm_up_stops_with_one_line(make_server: Any) -> None:
    url, httpd = make_server(fail=True)
    with pytest.raises(ServerError, match=r"warm-up request to /v1/completions failed \(HTTP 500: .*CUDA out of"):
        measure_server(url, ServingPlan(requests=8, prompt_words=8, output_tokens=3, timeout_s=10))
    assert len(httpd.bodies) == 1  # nothing more is sent after a failed warm-up


def test_text_output_shows_no_spread_for_one_value(server: tuple[str, Any]) -> None:
    url, _ = server
    data = measure_server(url, ServingPlan(requests=2, prompt_words=8, output_tokens=3, concurrency=2, timeout_s=10))
    lines = results_text(data).splitlines()
    tok_s = next(line for line in lines if line.startswith("serving_c1_output_tok_per_s")).split()
    assert tok_s[3:6] == ["1", "-", "-"]  # n, cv, ci95
    assert "0.000" not in " ".join(tok_s)
    assert "engine: sglang 0.4.6" in lines
    assert "c1: 2 requests, output tokens 3, finish_reason length; 6 tokens in 6 chunks" in lines


def test_recorded_transformers_stream_counts_tokens_not_chunks() -> None:
    """Byte-level tokens buffered into chunks: 13 content chunks carry the 16 tokens `usage` reports."""
    timing = RequestTiming()
    events = (SERVERS_DATA / "transformers-serve-5.24" / "completion-stream.txt").read_bytes().split(b"\n\n")
    for step, event in enumerate(e for e in events if e.strip()):
        _read_event(timing, event.strip()[5:].strip(), 0.1 * step)
    timing.ttft_s, timing.total_s = timing.chunk_times_s[0], 1.6
    assert timing.chunks == 13 and timing.output_tokens == 16 and timing.tokens_from == "usage"
    assert timing.finish_reason == "length"
    assert timing.per_token_s == pytest.approx((1.6 - 0.0) / 15)


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
        for _ in range(3):  # bounded: the first GET fails, nothing else is asked
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


def test_progress_reports_the_warm_up_and_each_request(server: tuple[str, Any]) -> None:
    url, _ = server
    lines: list[str] = []
    measure_server(url, ServingPlan(requests=2, prompt_words=8, output_tokens=2, concurrency=2, timeout_s=10),
                   progress=lines.append)
    assert lines[0] == "warm-up (sglang, llama-test)"
    assert lines[1:] == ["concurrency 1: 1/2 requests", "concurrency 1: 2/2 requests",
                         "concurrency 2: 1/2 requests", "concurrency 2: 2/2 requests"]
