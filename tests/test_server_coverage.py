"""benchmarks/server_coverage.py, run as a user runs it: every throughput/latency field of every pinned engine
release either has a directed rule or says why the engine's own words give none (issue 29, item 2)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "benchmarks" / "server_coverage.py"


def _figures() -> dict[str, dict[str, object]]:
    done = subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True, timeout=300,
                          check=False, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    return {row["release"]: row for row in json.loads(done.stdout)}


def test_every_field_without_a_direction_says_why() -> None:
    figures = _figures()
    assert set(figures) == {"sglang-0.5.9", "sglang-0.5.23", "vllm-0.22.0", "vllm-0.34.0"}
    for release, row in figures.items():
        without = row["without_direction"]
        assert isinstance(without, dict)
        assert [field for field, why in without.items() if why == "no reason recorded"] == [], release
        # each reason names what kind of silence it is and whose words it reads
        for field, why in without.items():
            assert why.split(":")[0] in {"no direction", "no direction for a list", "workload-dependent",
                                         "trade-off", "conditional", "no one direction for a nested configuration"}
            assert "SGLang's" in why if release.startswith("sglang") else "vLLM's" in why, (release, field)


def test_directions_from_the_engines_words_are_counted() -> None:
    figures = _figures()
    for release in ("sglang-0.5.9", "sglang-0.5.23"):
        without = figures[release]["without_direction"]
        assert isinstance(without, dict)
        assert "chunked_prefill_size" not in without and "enable_symm_mem" not in without
        assert without["schedule_conservativeness"].startswith("workload-dependent")
    for release, field in (("sglang-0.5.9", "cuda_graph_max_bs"), ("sglang-0.5.23", "cuda_graph_max_bs_decode")):
        without = figures[release]["without_direction"]
        assert isinstance(without, dict) and field not in without
    for release in ("vllm-0.22.0", "vllm-0.34.0"):
        without = figures[release]["without_direction"]
        assert isinstance(without, dict)
        assert "enable_chunked_prefill" not in without and "enforce_eager" not in without
        assert without["max_num_batched_tokens"].startswith("trade-off")
