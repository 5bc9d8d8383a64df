"""Each pinned engine release replayed as it answers (tests/servers.py `release_routes`, the data computed by
the release's own code): two identical restarts snapshotted through the command line rank no cause and exit 0,
and one changed setting ranks first with a fix that release's flag table accepts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.serving.flag_tables import load_table
from tests.servers import REPLAYED_RELEASES, release_routes

Replay = Callable[[dict[str, Any]], str]

# release -> (the start with one setting changed, the rule that ranks it, the field, A's value, the fix)
CHANGED = {
    "sglang-0.5.9": ("cuda-graph-off", "server-cuda-graph-disabled", "disable_cuda_graph", False,
                     "restart the server without --disable-cuda-graph"),
    "sglang-0.5.23": ("decode-cuda-graph-off", "server-phase-cuda-graph-disabled", "disable_decode_cuda_graph", False,
                      "restart the server without --disable-decode-cuda-graph"),
    "vllm-0.22.0": ("memory-lowered", "server-vllm-gauge-memory-lowered", "gpu_memory_utilization", 0.92,
                    "restart the server with --gpu-memory-utilization 0.92"),
    "vllm-0.34.0": ("kv-cache-fp8", "server-vllm-kv-cache-dtype", "kv_cache_dtype", "auto",
                    "restart the server with --kv-cache-dtype auto"),
}


def _snapshot(cli: Any, replay_server: Replay, release: str, start: str, path: Path) -> dict[str, Any]:
    done = cli("snapshot", "--probe", "server", "--server", replay_server(release_routes(release, start)),
               "--no-store", "-o", str(path), "-q")
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return document


# vLLM 0.34.0 started with VLLM_SERVER_DEV_MODE=1 (vllm-0.34.0/dev-*, make_vllm_dev_replies.py): it also answers
# /server_info with its whole resolved configuration, and the server is still vLLM (by what the reply holds).
DEV_MODE = ("vllm-0.34.0", "dev-start-a", "dev-start-b", "dev-kv-cache-fp8")


@pytest.mark.parametrize(("release", "start_a", "start_b"),
                         [(release, "start-a", "start-b") for release in REPLAYED_RELEASES] + [DEV_MODE[:3]])
def test_two_identical_restarts_rank_no_cause(release: str, start_a: str, start_b: str, cli: Any,
                                              replay_server: Replay, tmp_path: Path) -> None:
    a = _snapshot(cli, replay_server, release, start_a, tmp_path / "a.json")
    _snapshot(cli, replay_server, release, start_b, tmp_path / "b.json")
    server = a["probes"]["server"]
    assert server["status"] == "ok" and f"{server['data']['engine']}-{server['data']['version']}" == release
    done = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["explanations"] == []


@pytest.mark.parametrize("release", REPLAYED_RELEASES)
def test_one_changed_setting_ranks_first_with_a_fix_the_release_accepts(release: str, cli: Any, replay_server: Replay,
                                                                      tmp_path: Path) -> None:
    start, rule, field, before, fix = CHANGED[release]
    _snapshot(cli, replay_server, release, "start-a", tmp_path / "a.json")
    _snapshot(cli, replay_server, release, start, tmp_path / "b.json")
    done = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    top = json.loads(done.stdout)["explanations"][0]
    assert (top["rule"], top["fix"]) == (rule, fix)
    restoration = load_table(release).restoring(field, before)
    assert restoration is not None and fix.endswith(restoration.text)
    if restoration.add:
        namespace, unknown = load_table(release).parser().parse_known_args(list(restoration.add))
        assert unknown == [] and getattr(namespace, field) == before
    else:
        assert load_table(release).spec(field).default == before  # type: ignore[union-attr]


def test_dev_mode_vllm_kv_cache_dtype_ranks_first_with_a_fix_0_34_0_accepts(cli: Any, replay_server: Replay,
                                                                          tmp_path: Path) -> None:
    """Dev mode's /server_info is read as vLLM's resolved configuration: the KV-cache dtype it reports ranks
    first, told once with the launch flag that set it, and the fix parses back to A's value."""
    release, start_a, _, changed = DEV_MODE
    a = _snapshot(cli, replay_server, release, start_a, tmp_path / "a.json")
    _snapshot(cli, replay_server, release, changed, tmp_path / "b.json")
    data = a["probes"]["server"]["data"]
    assert data["engine"] == "vllm" and data["endpoints"]["/server_info?config_format=json"] == 200
    # read from the configuration the release resolved, not from the launch line alone
    assert data["server_args"]["kv_cache_dtype"] == "auto" and data["server_args"]["tensor_parallel_size"] == 4
    assert data["server_args"]["max_num_batched_tokens"] == 8192  # vLLM's default for an H100 behind its server
    done = cli("explain", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    assert done.returncode == 1, done.stdout + done.stderr
    explanations = json.loads(done.stdout)["explanations"]
    top = explanations[0]
    assert (top["rule"], top["fix"]) == ("server-kv-cache-dtype", "restart the server with --kv-cache-dtype auto")
    assert "probes.server.data.server_args.kv_cache_dtype" in top["evidence"]
    assert len(explanations) == 1, explanations
    restoration = load_table(release).restoring("kv_cache_dtype", "auto")
    assert restoration is not None and top["fix"].endswith(restoration.text)
    namespace, unknown = load_table(release).parser().parse_known_args(list(restoration.add))
    assert unknown == [] and namespace.kv_cache_dtype == "auto"
