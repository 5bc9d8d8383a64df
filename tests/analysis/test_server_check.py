"""`check --server URL`: the gate compares the running engine with the reference's (SGLang 0.5.23's
/server_info as its own code computes it, tests/data/servers/sglang-0.5.23, served by a replay server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.servers import SERVERS_DATA

Replay = Callable[[dict[str, Any]], str]
pytestmark = pytest.mark.slow


def _sglang_0_5_23(replay_server: Replay, name: str) -> str:
    body = (SERVERS_DATA / "sglang-0.5.23" / f"{name}.json").read_bytes()
    return replay_server({"/server_info": (200, "application/json", body),
                          "/v1/models": (200, "application/json", b'{"object": "list", "data": []}')})


def test_check_gates_a_running_server(cli: Any, replay_server: Replay) -> None:
    done = cli("snapshot", "--probe", "python", "--server", _sglang_0_5_23(replay_server, "start-a"), "-q")
    assert done.returncode == 0, done.stderr
    # The same flags, restarted: only its startup timings differ, and those are no cause.
    same = cli("check", "--against", "@latest", "--probe", "python", "--no-bench", "--no-store", "--format", "json",
               "--server", _sglang_0_5_23(replay_server, "start-b"))
    assert same.returncode == 0, same.stdout + same.stderr
    drift = cli("check", "--against", "@latest", "--probe", "python", "--no-bench", "--no-store", "--format", "json",
                "--server", _sglang_0_5_23(replay_server, "decode-cuda-graph-off"))
    assert drift.returncode == 1, drift.stderr
    top = json.loads(drift.stdout)["explanations"][0]
    assert top["rule"] == "server-phase-cuda-graph-disabled"
    assert top["fix"] == "restart the server without --disable-decode-cuda-graph"


def test_check_refuses_a_server_that_is_not_a_url(cli: Any) -> None:
    done = cli("check", "--server", "localhost:30000", "--no-bench")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
