"""The `server` probe against recorded real SGLang / vLLM answers (replayed over HTTP) and a real
`transformers serve` (tests/servers.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from driftcheck.hosts import Host, LocalHost
from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.redact import REDACTED_PATTERN, Redactor
from driftcheck.probes.runner import run_one
from driftcheck.probes.server import ServerProbe, is_secret_argument
from driftcheck.serving.engine import describe, label_value, prometheus_info_gauges
from tests.servers import SERVERS_DATA, RunningServer, recorded_routes

Replay = Callable[[dict[str, Any]], str]


def probe_at(url: str) -> Any:
    return run_one(ServerProbe(Redactor(b"k" * 32)), LocalHost(), ProbeOptions(server_url=url))


def test_sglang_every_server_argument_version_and_rank_state(replay_server: Replay) -> None:
    outcome = probe_at(replay_server(recorded_routes("sglang-docs-native-api")))
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data["engine"] == "sglang" and data["version"] == "0.0.0.dev1+g753da2753"
    args = data["server_args"]
    assert args["cuda_graph_max_bs"] == 4 and args["cuda_graph_bs"] == [1, 2, 4]
    assert args["attention_backend"] == "fa3" and args["sampling_backend"] == "flashinfer"
    assert args["mem_fraction_static"] == 0.836 and args["chunked_prefill_size"] == 8192
    assert args["speculative_algorithm"] is None and args["disable_cuda_graph"] is False
    assert "internal_states" not in args and "version" not in args
    assert data["scheduler"] == {"status": "ready", "max_total_num_tokens": 20480, "max_req_input_len": 20474}
    rank = data["internal_states"]["0"]
    # What the rank resolved (the decode backend left unset on the command line) and measured; not the repeats.
    assert rank["resolved"] == {"decode_attention_backend": "fa3", "pp_max_micro_batch_size": 128,
                                "prefill_attention_backend": "fa3"}
    assert rank["state"]["memory_usage"]["graph"] == 0.06 and rank["state"]["use_mla_backend"] is False
    assert data["model_info"]["architectures"] == ["Qwen2ForCausalLM"]
    assert data["endpoints"]["/get_server_info"] == 200 and "/metrics" not in data["endpoints"]


def test_sglang_api_key_is_kept_as_a_digest(replay_server: Replay) -> None:
    info = json.loads((SERVERS_DATA / "sglang-docs-native-api" / "get_server_info.json").read_text())
    info.update(api_key="sk-live-0123456789abcdefghijklmnop", admin_api_key="hunter2")
    data = probe_at(replay_server(recorded_routes("sglang-docs-native-api", **{"get_server_info.json": info}))).data
    assert REDACTED_PATTERN.fullmatch(data["server_args"]["api_key"])
    assert REDACTED_PATTERN.fullmatch(data["server_args"]["admin_api_key"])
    assert "hunter2" not in json.dumps(data) and "sk-live" not in json.dumps(data)
    assert data["server_args"]["tokenizer_path"] == "qwen/qwen2.5-0.5b-instruct"  # a token*izer* is no secret


def test_vllm_version_and_cache_config_gauge(replay_server: Replay) -> None:
    data = probe_at(replay_server(recorded_routes("vllm-pr3100"))).data
    assert data["engine"] == "vllm" and data["version"] == "0.3.3"
    cache = data["vllm_config"]["cache_config_info"]["0"]
    assert cache == {"block_size": 16, "cache_dtype": "auto", "gpu_memory_utilization": 0.9, "num_cpu_blocks": 7281,
                     "num_gpu_blocks": 24188, "sliding_window": None, "swap_space_bytes": 4294967296}


def test_load_gauges_are_not_configuration() -> None:
    text = (SERVERS_DATA / "vllm-production-stack-318" / "metrics.txt").read_text()
    everything = prometheus_info_gauges(text, lambda name: True)
    assert everything["vllm:num_requests_running"] == [{"model_name": "Qwen/Qwen2.5-Coder-32B-Instruct"}]
    raw = {"url": "http://h:8000", "replies": {
        "/version": {"status": 200, "body": '{"version": "0.7.3"}'},
        "/metrics": {"status": 200, "body": text}}}
    assert describe(raw)["vllm_config"] == {}


def test_engine_label_keys_each_engine() -> None:
    text = ('vllm:cache_config_info{block_size="16",engine="0",gpu_memory_utilization="0.9"} 1.0\n'
            'vllm:cache_config_info{block_size="16",engine="1",gpu_memory_utilization="0.85"} 1.0\n')
    raw = {"replies": {"/version": {"status": 200, "body": '{"version": "0.10.0"}'},
                       "/metrics": {"status": 200, "body": text}}}
    config = describe(raw)["vllm_config"]["cache_config_info"]
    assert config["1"]["gpu_memory_utilization"] == 0.85 and set(config) == {"0", "1"}


@pytest.mark.parametrize(("text", "value"), [("None", None), ("True", True), ("16", 16), ("0.9", 0.9),
                                             ("auto", "auto")])
def test_label_values_become_facts(text: str, value: Any) -> None:
    assert label_value(text) == value


def test_recorded_transformers_serve_is_openai_compatible() -> None:
    raw = json.loads((SERVERS_DATA / "transformers-serve-5.24" / "replies.json").read_text())
    data = describe(raw)
    assert data["engine"] == "openai-compatible" and data["version"] is None
    assert data["models"] == {"tiny-llama": {"owned_by": "local"}}
    assert data["endpoints"] == {"/get_server_info": 404, "/server_info": 404, "/v1/models": 200, "/version": 404}
    assert data["http_server"] == "uvicorn"


def test_real_transformers_serve(transformers_server: RunningServer) -> None:
    outcome = probe_at(transformers_server.url)
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data["engine"] == "openai-compatible"
    assert list(data["models"]) == [transformers_server.model]
    assert data["endpoints"]["/v1/models"] == 200 and data["endpoints"]["/version"] == 404


def test_unreachable_server_is_unavailable_with_the_reason() -> None:
    outcome = probe_at("http://127.0.0.1:9")
    assert outcome.status == "unavailable"
    assert "cannot reach http://127.0.0.1:9" in outcome.error["message"]


def test_taken_only_when_asked() -> None:
    probes = builtin_probes(Redactor(b"k" * 32))
    assert "server" not in [p.name for p in select_probes(probes)]
    asked = ProbeOptions(server_url="http://127.0.0.1:30000")
    assert "server" in [p.name for p in select_probes(probes, ["env"], options=asked)]
    assert "server" in [p.name for p in select_probes(probes, cheap_only=True, options=asked)]


@pytest.mark.parametrize("name", ["api_key", "admin_api_key", "ssl_keyfile_password", "hf_token"])
def test_secret_arguments(name: str) -> None:
    assert is_secret_argument(name)


@pytest.mark.parametrize("name", ["tokenizer_path", "max_total_num_tokens", "skip_tokenizer_init", "ssl_keyfile"])
def test_not_secret_arguments(name: str) -> None:
    assert not is_secret_argument(name)


def test_snapshot_server_option(cli: Any, replay_server: Replay) -> None:
    url = replay_server(recorded_routes("sglang-docs-native-api"))
    result = cli("snapshot", "--probe", "python", "--server", url, "-q")
    assert result.returncode == 0, result.stderr
    shown = cli("show", "@latest", "--format", "json")
    server = json.loads(shown.stdout)["probes"]["server"]
    assert server["status"] == "ok" and server["data"]["server_args"]["cuda_graph_max_bs"] == 4
    bad = cli("snapshot", "--server", "localhost:30000")
    assert bad.returncode == 2 and "expected an http(s)://HOST[:PORT] URL" in bad.stderr


class _Remote(Host):
    """Another machine (as an SSH host is): nothing of it is read here, only its name matters."""

    kind = "ssh"

    @property
    def name(self) -> str:
        return "node7"

    def read_bytes(self, path: str) -> bytes:
        raise FileNotFoundError(path)

    def list_dir(self, path: str) -> list[str]:
        raise FileNotFoundError(path)

    def run(self, argv: Any, timeout_s: float = 30.0) -> Any:
        raise FileNotFoundError(argv[0])

    def python(self, script_name: str, args: Any = (), timeout_s: float = 60.0) -> Any:
        raise FileNotFoundError(script_name)

    def environ(self) -> dict[str, str]:
        return {}


def test_a_loopback_url_is_not_asked_for_another_host(replay_server: Replay) -> None:
    probe = ServerProbe(Redactor(b"k" * 32))
    for url in ("http://127.0.0.1:30000", "http://localhost:30000", "http://[::1]:30000"):
        outcome = run_one(probe, _Remote(), ProbeOptions(server_url=url))
        assert outcome.status == "unavailable" and "loopback, not node7's" in outcome.error["message"]
    # A URL this machine reaches by name is asked from here.
    url = replay_server(recorded_routes("sglang-docs-native-api")).replace("127.0.0.1", "ip6-localhost-not")
    assert "loopback" not in str(run_one(probe, _Remote(), ProbeOptions(server_url=url)).error)


def test_a_version_endpoint_alone_does_not_make_vllm() -> None:
    raw = {"replies": {"/version": {"status": 200, "body": '{"version": "2.1.0"}'},
                       "/v1/models": {"status": 200, "body": '{"data": [{"id": "m", "owned_by": "someone"}]}'},
                       "/metrics": {"status": 200, "body": "process_open_fds 45.0\n"}}}
    data = describe(raw)
    assert data["engine"] == "openai-compatible" and data["version"] == "2.1.0" and "vllm_config" not in data
    raw["replies"]["/v1/models"]["body"] = '{"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 4096}]}'
    assert describe(raw)["engine"] == "vllm"


def test_an_endpoint_that_hangs_is_recorded_not_fatal() -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    models = b'{"object":"list","data":[{"id":"m","object":"model"}]}'

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            request = conn.recv(4096)
            if request.startswith(b"GET /v1/models "):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(models)).encode() + b"\r\nConnection: close\r\n\r\n" + models)
                conn.close()
            # every other endpoint: accepted, never answered (the probe's timeout ends it)

    threading.Thread(target=serve, daemon=True).start()
    try:
        from driftcheck.serving.engine import gather_replies

        raw = gather_replies(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout_s=0.5)
    finally:
        listener.close()
    assert raw["replies"]["/v1/models"]["status"] == 200
    hung = raw["replies"]["/get_server_info"]
    assert hung["status"] is None and "timed out" in hung["error"]
    data = describe(raw)
    assert data["engine"] == "openai-compatible" and data["endpoints"]["/get_server_info"] is None
