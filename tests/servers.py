"""Inference servers for the tests: a real `transformers serve`, and a replay of recorded real responses.

`transformers_server` (session-scoped: one server per test run) starts
`transformers serve MODEL_DIR --host 127.0.0.1 --port P --device cpu` with HF_HUB_OFFLINE=1 over the tiny
random-weight Llama that tests/tiny_llama.py builds (`tiny_model`, also session-scoped, for tests that start
servers of their own); both are skipped only when the `transformers[serving]` extra is not installed.
`replay_server` answers GETs with responses recorded from real SGLang and vLLM servers (tests/data/servers/*),
for the engines that cannot run here; `release_routes` gives what a pinned release answers for one start.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
SERVERS_DATA = TESTS / "data" / "servers"
STARTUP_LIMIT_S = 240.0  # about 10 s on an idle machine; a busy CI box imports torch slowly


@dataclass(frozen=True)
class RunningServer:
    """A server the tests talk to: its URL, the model id it lists, the facts of the tiny model."""

    url: str
    model: str
    facts: dict[str, Any]
    log: Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now (the one place the tests pick their ports)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serving_extra_missing() -> str | None:
    missing = [name for name in ("transformers", "tokenizers", "fastapi", "uvicorn")
               if importlib.util.find_spec(name) is None]
    return ", ".join(missing) or None


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"transformers serve exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"transformers serve did not answer /health in {STARTUP_LIMIT_S:g} s: {log.read_text()[-2000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


@dataclass(frozen=True)
class TinyModel:
    """The tiny random Llama built for the tests, and how to serve it: the environment and the command."""

    path: Path
    facts: dict[str, Any]
    env: dict[str, str]

    def serve_command(self, port: int) -> list[str]:
        """`transformers serve` of this model on 127.0.0.1:`port`, on the CPU."""
        cli = Path(sys.executable).with_name("transformers")
        return [str(cli), "serve", str(self.path), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    """The tiny random Llama of tests/tiny_llama.py, built once per test run (no download); skipped only
    when the `transformers[serving]` extra is not installed."""
    missing = _serving_extra_missing()
    if missing:
        pytest.skip(f"transformers[serving] is not installed (missing {missing}); `pip install -e '.[test]'`")
    model_dir = tmp_path_factory.mktemp("tiny-model") / "tiny-llama"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    built = subprocess.run([sys.executable, str(TESTS / "tiny_llama.py"), str(model_dir)], env=env,
                           capture_output=True, text=True, timeout=600, check=False)
    if built.returncode != 0:
        raise RuntimeError(f"building the tiny model failed: {built.stderr[-2000:]}")
    return TinyModel(model_dir, json.loads(built.stdout.strip().splitlines()[-1]), env)


@pytest.fixture(scope="session")
def transformers_server(tmp_path_factory: pytest.TempPathFactory, tiny_model: TinyModel) -> Iterator[RunningServer]:
    """A real `transformers serve` on 127.0.0.1 over a tiny random Llama built here (no download)."""
    root = tmp_path_factory.mktemp("transformers-serve")
    port = free_port()
    log = root / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(tiny_model.serve_command(port), env=tiny_model.env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process, log)
        yield RunningServer(url, str(tiny_model.path), tiny_model.facts, log)
    finally:
        _stop(process)


class _ReplayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        routes: dict[str, tuple[int, str, bytes]] = self.server.routes  # type: ignore[attr-defined]
        status, content_type, body = routes.get(self.path, (404, "application/json", b'{"detail":"Not Found"}'))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


# Recorded file name → the endpoints that answered it (SGLang 0.5.9 answers /server_info and its deprecated
# alias /get_server_info alike, and /model_info and /get_model_info).
RECORDED_ENDPOINTS = {"get_server_info.json": ("/get_server_info",), "get_model_info.json": ("/get_model_info",),
                      "server_info.json": ("/server_info", "/get_server_info"),
                      "model_info.json": ("/model_info", "/get_model_info"),
                      # vLLM started with VLLM_SERVER_DEV_MODE=1: its /server_info, as text (the default) and as JSON
                      "server_info.text.json": ("/server_info",),
                      "server_info.config_json.json": ("/server_info?config_format=json",),
                      "version.json": ("/version",), "models.json": ("/v1/models",), "metrics.txt": ("/metrics",)}


# The pinned releases a replay answers for, each as that real version answers for a launch line (each folder's
# SOURCE says how: computed by the release's own code): start-a and start-b are the same flags restarted.
REPLAYED_RELEASES = ("sglang-0.5.9", "sglang-0.5.23", "vllm-0.22.0", "vllm-0.34.0")


def release_routes(release: str, start: str) -> dict[str, tuple[int, str, bytes]]:
    """What the release answers for one start (tests/data/servers/RELEASE/START/ holds one file per endpoint;
    SGLang 0.5.23's START.json is its /server_info, the one endpoint recorded of it)."""
    folder = SERVERS_DATA / release / start
    if folder.is_dir():
        return recorded_routes(f"{release}/{start}")
    return {"/server_info": (200, "application/json", (SERVERS_DATA / release / f"{start}.json").read_bytes())}


def recorded_routes(scenario: str, **overrides: Any) -> dict[str, tuple[int, str, bytes]]:
    """The recorded responses of tests/data/servers/SCENARIO as routes; `overrides` replace JSON bodies."""
    routes = {}
    for name, paths in RECORDED_ENDPOINTS.items():
        file = SERVERS_DATA / scenario / name
        if file.exists():
            kind = "text/plain; version=0.0.4" if name.endswith(".txt") else "application/json"
            routes.update({path: (200, kind, file.read_bytes()) for path in paths})
    for name, document in overrides.items():
        routes.update({path: (200, "application/json", json.dumps(document).encode())
                       for path in RECORDED_ENDPOINTS[name]})
    return routes


@pytest.fixture
def replay_server() -> Iterator[Any]:
    """Start a local HTTP server answering with given routes: `url = replay_server(routes)`."""
    started: list[ThreadingHTTPServer] = []

    def start(routes: dict[str, tuple[int, str, bytes]]) -> str:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ReplayHandler)
        httpd.routes = routes  # type: ignore[attr-defined]
        # accept(2): a connection its client reset between poll and accept is gone, and a blocking accept then
        # waits for the next one for ever (seen once in CI: every later request timed out and shutdown hung).
        # Non-blocking, serve_forever skips that round instead; the sockets accepted stay blocking.
        httpd.socket.setblocking(False)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def server_snapshot_pair(tmp_path: Path, a: dict[str, Any], b: dict[str, Any]) -> tuple[Any, Any]:
    """Two snapshots of the pairs corpus' base machine whose `server` probe read `a` and `b` (written and read back
    as files, so they are what `explain` of two stored snapshots sees)."""
    from driftcheck.snapshot.model import read_snapshot_file

    base = json.loads((SERVERS_DATA.parent / "pairs" / "base.json").read_text("utf-8"))
    paths = []
    for label, data in (("a", a), ("b", b)):
        doc = json.loads(json.dumps(base))
        doc["label"] = label
        doc["probes"]["server"] = {"status": "ok", "data": data, "error": None, "duration_s": 0.1}
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps(doc), "utf-8")
        paths.append(path)
    return read_snapshot_file(paths[0]), read_snapshot_file(paths[1])
