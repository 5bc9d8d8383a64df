"""The serving client and `snapshot --server` against a real `transformers serve` (tests/servers.py).

The model is random, so greedy decoding falls into a loop on its end-of-sequence token (tests/tiny_llama.py
chooses it so): a request that does not pin the output length really stops early here, as in the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from driftcheck.baselines.serving import (
    COMPLETIONS,
    Dialect,
    ServingPlan,
    length_warnings,
    negotiate,
    payload,
    run_level,
)
from tests.servers import RunningServer

# A real `transformers serve` (the fixture marks these too; said here for the reader).
pytestmark = pytest.mark.slow

PLAN = ServingPlan(requests=3, prompt_words=16, output_tokens=12, concurrency=2, timeout_s=120)


def test_bench_prints_ttft_itl_per_token_and_chunk_and_tok_s(cli: Callable[..., Any],
                                                              transformers_server: RunningServer) -> None:
    done = cli("bench", "--server", transformers_server.url, "--requests", "3", "--prompt-words", "16",
               "--output-tokens", "12", "--concurrency", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "engine: openai-compatible" in lines
    assert "requests: /v1/completions, output length pinned by: generation_config.min_new_tokens" in lines
    assert any(line.startswith("c1: 3 requests, output tokens 12, finish_reason length; 36 tokens in ")
               for line in lines), lines
    names = {line.split()[0] for line in lines if line.startswith("serving_")}
    assert names == {f"serving_c{c}_{m}" for c in (1, 2)
                     for m in ("ttft_ms", "itl_token_ms", "itl_chunk_ms", "output_tok_per_s")}
    tok_s = next(line for line in lines if line.startswith("serving_c1_output_tok_per_s")).split()
    assert float(tok_s[1]) > 0 and tok_s[3:6] == ["1", "-", "-"]
    assert not any(line.startswith("warning:") for line in lines), done.stdout


def test_bench_json_records_each_request(cli: Callable[..., Any], transformers_server: RunningServer) -> None:
    done = cli("bench", "--server", transformers_server.url, "--requests", "2", "--prompt-words", "16",
               "--output-tokens", "8", "--concurrency", "1", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    requests = data["levels"]["c1"]["requests"]
    kept = [(r["output_tokens"], r["tokens_from"], r["finish_reason"]) for r in requests]
    assert kept == [(8, "usage", "length")] * 2
    # Byte-level tokens are buffered until they decode: never more chunks than tokens.
    assert all(1 <= r["chunks"] <= 8 for r in requests)
    result = data["results"]["serving_c1_itl_token_ms"]
    assert result["n"] == 2 and result["median"] > 0
    assert data["server_info"]["engine"] == "openai-compatible" and data["model"] == transformers_server.model


def test_standard_fields_only_stop_early_and_are_flagged(transformers_server: RunningServer) -> None:
    dialect = Dialect(COMPLETIONS, "none", True)
    bodies = [payload(PLAN, transformers_server.model, prompt, dialect) for prompt in PLAN.prompts()]
    timings, _ = run_level(transformers_server.url, COMPLETIONS, bodies, 1, PLAN.timeout_s)
    assert all(t.error is None for t in timings), [t.error for t in timings]
    short = [t for t in timings if t.output_tokens < PLAN.output_tokens]
    assert short and {t.finish_reason for t in short} == {"stop"}
    warnings = length_warnings("concurrency 1", timings, PLAN.output_tokens)
    assert warnings and f"did not return the {PLAN.output_tokens} tokens asked" in warnings[0]


def test_extension_fields_rejected_by_the_server_are_dropped(transformers_server: RunningServer) -> None:
    """Asked as if it were SGLang or vLLM, the real server rejects ignore_eos with HTTP 422: dropped, said why."""
    dialect, notes = negotiate(transformers_server.url, PLAN, transformers_server.model, "vllm", PLAN.prompts()[0])
    assert dialect == Dialect(COMPLETIONS, "none", True)
    assert "HTTP 422" in notes[0] and "Unexpected fields in the request" in notes[0] and "ignore_eos" in notes[0]


def test_snapshot_records_what_the_server_reports(cli: Callable[..., Any],
                                                   transformers_server: RunningServer) -> None:
    done = cli("snapshot", "--probe", "python", "--server", transformers_server.url, "-q")
    assert done.returncode == 0, done.stderr
    server = json.loads(cli("show", "@latest", "--format", "json").stdout)["probes"]["server"]
    assert server["status"] == "ok"
    assert server["data"]["engine"] == "openai-compatible"
    assert server["data"]["models"] == {transformers_server.model: {"owned_by": "local"}}
