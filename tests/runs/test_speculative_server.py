"""SGLang's `avg_spec_accept_length` (`/get_server_info` internal_states) as a run's accept length, and as a
reading of the `server` probe, never a cause.

The recorded answer (tests/data/servers/sglang-docs-native-api, source in its SOURCE) is of a server without
speculative decoding. With speculative decoding on, SGLang's scheduler adds one key to each rank's internal
state (python/sglang/srt/managers/scheduler.py, `get_internal_state`:
`ret["avg_spec_accept_length"] = self.cum_spec_accept_length / self.cum_spec_accept_count`); the tests add
that key, and only that key, to the recorded answer.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.runs.metrics import Metric
from driftcheck.runs.speculative import SERVER_SOURCE, accept_length, server_accept_length, with_server_accept_length
from driftcheck.runs.store import RunRecord
from driftcheck.serving.engine import describe
from driftcheck.snapshot.facts import is_reading
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import parse_path

DATA = Path(__file__).resolve().parent.parent / "data"
RECORDED = json.loads((DATA / "servers" / "sglang-docs-native-api" / "get_server_info.json").read_text("utf-8"))
PAIR = DATA / "pairs" / "server-speculative-num-steps" / "a.json"
ACCEPT_PATH = "probes.server.data.internal_states.0.state.avg_spec_accept_length"


def _server_data(info: dict[str, Any]) -> dict[str, Any]:
    """What the server probe stores of this /get_server_info answer."""
    replies = {"/get_server_info": {"status": 200, "body": json.dumps(info)}}
    return describe({"url": "http://127.0.0.1:30000", "replies": replies})


def _speculative(value: float) -> dict[str, Any]:
    info = copy.deepcopy(RECORDED)
    info["internal_states"][0]["avg_spec_accept_length"] = value
    return info


def _run(metrics: list[Metric]) -> RunRecord:
    return RunRecord(["bench"], "/", "host", "2026-12-02T00:00:00Z", 1.0, 0, None, metrics=metrics, id=4)


def test_the_server_probe_keeps_the_accept_length_and_it_is_read_back() -> None:
    assert server_accept_length(_server_data(RECORDED)) is None  # no speculative decoding: no key, no figure
    data = _server_data(_speculative(2.4625))
    assert data["internal_states"]["0"]["state"]["avg_spec_accept_length"] == 2.4625
    assert server_accept_length(data) == 2.4625


def test_ranks_are_averaged() -> None:
    data = _server_data(_speculative(2.0))
    data["internal_states"]["1"] = copy.deepcopy(data["internal_states"]["0"])
    data["internal_states"]["1"]["state"]["avg_spec_accept_length"] = 3.0
    assert server_accept_length(data) == pytest.approx(2.5)


def test_a_run_without_a_printed_accept_length_takes_the_servers() -> None:
    run = with_server_accept_length(_run([]), _server_data(_speculative(2.46)))
    found = accept_length(run)
    assert found is not None and found.value == 2.46 and found.source == SERVER_SOURCE
    printed = _run([Metric("accept_length", 2.0, "tok/step", "Accept length", "t")])
    kept = accept_length(with_server_accept_length(printed, _server_data(_speculative(2.46))))
    assert kept is not None and kept.value == 2.0  # the command's own figure wins
    assert with_server_accept_length(_run([]), None).metrics == []


def test_the_accept_length_is_a_reading_never_a_cause() -> None:
    assert is_reading(parse_path(ACCEPT_PATH))
    before = json.loads(PAIR.read_text("utf-8"))
    before["probes"]["server"]["data"]["internal_states"]["0"]["state"]["avg_spec_accept_length"] = 2.46
    after = copy.deepcopy(before)
    after["probes"]["server"]["data"]["internal_states"]["0"]["state"]["avg_spec_accept_length"] = 2.0
    result = explain(diff_snapshots(Snapshot(before), Snapshot(after)), include_volatile=True)
    assert result.explanations == []
    assert ACCEPT_PATH in {row["path"] for row in result.to_json()["readings"]}
