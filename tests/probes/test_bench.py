"""The bench probe's contract: opt-in, local only, volatile, never raising out of the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftcheck.hosts import RECORDING_FORMAT, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.bench import BenchProbe
from driftcheck.probes.runner import run_one
from tests.probes.facts_of import is_reading


def test_on_a_replayed_machine_it_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "host.json").write_text(json.dumps({"format": RECORDING_FORMAT, "host": {"name": "old"}}))
    outcome = run_one(BenchProbe(), ReplayHost(tmp_path), ProbeOptions())
    assert outcome.status == "unavailable"
    assert outcome.error and "local machine" in outcome.error["message"]


def test_every_result_path_is_reading() -> None:
    assert is_reading(BenchProbe, "results.gemm_fp32_1024_gflops.median")
    assert is_reading(BenchProbe, "threads")
    assert BenchProbe.on_request and BenchProbe.runs_alone and not BenchProbe.cheap and BenchProbe.isolated


def test_parse_rejects_output_without_results() -> None:
    with pytest.raises(ValueError):
        BenchProbe().parse({"suite": "quick"})
    assert BenchProbe().parse({"results": {}})["results"] == {}
