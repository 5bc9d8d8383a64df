"""Serving probe: measure a running OpenAI-compatible server (SGLang, vLLM, ...) with a fixed request set.

The request set is deterministic (seeded prompts of fixed length, greedy, fixed output length,
`ignore_eos` where the server supports it) so two runs ask for the same work. Each request streams
(server-sent events): time to first token (TTFT), the gaps between streamed chunks (inter-token
latency, ITL), and output tokens per second at concurrency 1 and at a fixed concurrency. What the
server says about itself is recorded too: SGLang's `/get_server_info` (every server argument:
speculative decoding, attention backend, CUDA-graph settings), vLLM's `/version`, and `/v1/models`.
Only the standard library talks HTTP.
"""

from __future__ import annotations

import http.client
import json
import random
import time
import urllib.parse
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from driftcheck.baselines.deps import import_sglang
from driftcheck.baselines.stats import percentile, summarize
from driftcheck.errors import DriftcheckError, UsageError

# A fixed, plain vocabulary: prompts must tokenize to roughly the same length on any tokenizer.
_WORDS = ("time", "year", "people", "way", "day", "man", "thing", "woman", "life", "child", "world", "school",
          "state", "family", "student", "group", "country", "problem", "hand", "part", "place", "case", "week",
          "company", "system", "program", "question", "work", "government", "number", "night", "point", "home",
          "water", "room", "mother", "area", "money", "story", "fact", "month", "lot", "right", "study", "book")


class ServerError(DriftcheckError):
    """The server could not be reached or did not answer like an OpenAI-compatible server."""


@dataclass(frozen=True)
class ServingPlan:
    """The fixed request set and the concurrency levels it is sent at."""

    requests: int = 16
    prompt_words: int = 256
    output_tokens: int = 128
    concurrency: int = 8
    seed: int = 20240601
    timeout_s: float = 300.0
    model: str | None = None

    def check(self) -> None:
        """UsageError unless every count is at least 1."""
        for name in ("requests", "prompt_words", "output_tokens", "concurrency"):
            if getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1")

    def prompts(self) -> list[str]:
        """The deterministic prompts, one per request."""
        prompts = []
        for index in range(self.requests):
            rng = random.Random(self.seed + index)
            prompts.append(" ".join(rng.choice(_WORDS) for _ in range(self.prompt_words)))
        return prompts


@dataclass
class RequestTiming:
    """One streamed request: seconds from sending to each content chunk, and the tokens it produced."""

    ttft_s: float | None = None
    chunk_times_s: list[float] = field(default_factory=list)
    output_tokens: int = 0
    total_s: float = 0.0
    error: str | None = None

    @property
    def itl_s(self) -> list[float]:
        times = self.chunk_times_s
        return [b - a for a, b in zip(times, times[1:], strict=False)]


def _split_url(url: str) -> tuple[str, str, int, str]:
    try:
        parsed = urllib.parse.urlsplit(url)
        port = parsed.port  # raises on a port that is not a number
    except ValueError:
        raise UsageError(f"--server {url!r}: expected an http(s)://HOST[:PORT] URL") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise UsageError(f"--server {url!r}: expected an http(s)://HOST[:PORT] URL")
    port = port or (443 if parsed.scheme == "https" else 80)
    return parsed.scheme, parsed.hostname, port, parsed.path.rstrip("/")


def _connection(url: str, timeout_s: float) -> tuple[http.client.HTTPConnection, str]:
    scheme, hostname, port, prefix = _split_url(url)
    cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    return cls(hostname, port, timeout=timeout_s), prefix


def get_json(url: str, path: str, timeout_s: float = 10.0) -> Any:
    """GET `path` on the server; the decoded JSON, or None when the server has no such endpoint."""
    conn, prefix = _connection(url, timeout_s)
    try:
        conn.request("GET", prefix + path, headers={"Accept": "application/json"})
        response = conn.getresponse()
        body = response.read()
    except OSError as exc:
        raise ServerError(f"cannot reach {url}: {exc}") from None
    except http.client.HTTPException as exc:
        raise ServerError(f"{url} does not answer HTTP: {type(exc).__name__}") from None
    finally:
        conn.close()
    if response.status != 200:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def server_info(url: str) -> dict[str, Any]:
    """What the server reports about itself: SGLang server arguments, vLLM version, served models."""
    return {"get_server_info": get_json(url, "/get_server_info"), "version": get_json(url, "/version"),
            "models": get_json(url, "/v1/models")}


def completion_payload(plan: ServingPlan, model: str, prompt: str) -> dict[str, Any]:
    """The body of one streamed, greedy, fixed-length completion request."""
    return {"model": model, "prompt": prompt, "max_tokens": plan.output_tokens, "temperature": 0.0,
            "top_p": 1.0, "stream": True, "stream_options": {"include_usage": True},
            "ignore_eos": True, "min_tokens": plan.output_tokens}


def _sse_events(response: http.client.HTTPResponse) -> Any:
    """The `data:` payloads of a server-sent event stream, as they arrive."""
    while True:
        line = response.readline()
        if not line:
            return
        line = line.strip()
        if line.startswith(b"data:"):
            data = line[5:].strip()
            if data == b"[DONE]":
                return
            yield data


def stream_completion(url: str, payload: dict[str, Any], timeout_s: float,
                      clock: Callable[[], float] = time.perf_counter) -> RequestTiming:
    """Send one streaming completion and time its chunks; failures are recorded, not raised."""
    timing = RequestTiming()
    conn, prefix = _connection(url, timeout_s)
    started = clock()
    try:
        conn.request("POST", prefix + "/v1/completions", body=json.dumps(payload).encode("utf-8"),
                     headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
        response = conn.getresponse()
        if response.status != 200:
            # One line: an error page's HTML would otherwise flood the report.
            body = " ".join(response.read(300).decode("utf-8", "replace").split())
            timing.error = f"HTTP {response.status}: {body[:160]}"
            return timing
        chunks = 0
        usage_tokens = None
        for data in _sse_events(response):
            now = clock() - started
            event = json.loads(data)
            if not isinstance(event, dict):
                raise ValueError(f"stream event is not an object: {data[:80]!r}")
            usage: dict[str, Any] = event["usage"] if isinstance(event.get("usage"), dict) else {}
            if usage.get("completion_tokens") is not None:
                usage_tokens = int(usage["completion_tokens"])
            choices = event.get("choices")
            if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
                raise ValueError(f"stream event has no list of choices: {data[:80]!r}")
            if any(choice.get("text") for choice in choices):
                chunks += 1
                timing.chunk_times_s.append(now)
        timing.ttft_s = timing.chunk_times_s[0] if timing.chunk_times_s else None
        timing.output_tokens = usage_tokens if usage_tokens is not None else chunks
    except (OSError, ValueError, http.client.HTTPException) as exc:
        timing.error = f"{type(exc).__name__}: {exc}"
    finally:
        timing.total_s = clock() - started
        conn.close()
    return timing


def _result(unit: str, higher_is_better: bool, values: Sequence[float], **extra: Any) -> dict[str, Any]:
    return {"unit": unit, "higher_is_better": higher_is_better, **summarize(values).to_json(),
            "samples": list(values), **extra}


def level_results(prefix: str, timings: Sequence[RequestTiming], wall_s: float) -> dict[str, dict[str, Any]]:
    """Named results of one concurrency level: TTFT, ITL (median and p99), output tokens/s."""
    good = [t for t in timings if t.error is None and t.ttft_s is not None]
    results: dict[str, dict[str, Any]] = {}
    if not good:
        return results
    results[f"{prefix}_ttft_ms"] = _result("ms", False, [t.ttft_s * 1000.0 for t in good if t.ttft_s is not None])
    itl = sorted(gap * 1000.0 for t in good for gap in t.itl_s)
    if itl:
        results[f"{prefix}_itl_ms"] = _result("ms", False, itl, p99=percentile(itl, 99))
        results[f"{prefix}_itl_p99_ms"] = _result("ms", False, [percentile(itl, 99)])
    tokens = sum(t.output_tokens for t in good)
    results[f"{prefix}_output_tok_per_s"] = _result("tok/s", True, [tokens / wall_s] if wall_s > 0 else [0.0],
                                                    requests=len(good), output_tokens=tokens, wall_s=wall_s)
    return results


def run_level(url: str, payloads: Sequence[dict[str, Any]], concurrency: int,
              timeout_s: float) -> tuple[list[RequestTiming], float]:
    """Send every payload with at most `concurrency` in flight; the timings and the wall time."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        timings = list(pool.map(lambda p: stream_completion(url, p, timeout_s), payloads))
    return timings, time.perf_counter() - started


def measure_server(url: str, plan: ServingPlan | None = None) -> dict[str, Any]:
    """Measure the server at `url`: server info, then the request set at concurrency 1 and the plan's."""
    plan = plan or ServingPlan()
    plan.check()
    _split_url(url)
    info = server_info(url)
    model = plan.model or _first_model(info)
    if model is None:
        raise ServerError(f"{url} lists no model at /v1/models; pass --model NAME")
    payloads = [completion_payload(plan, model, prompt) for prompt in plan.prompts()]
    results: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    # One request first, unmeasured: the server's own warm-up (graph capture, caches) is not its speed.
    stream_completion(url, payloads[0], plan.timeout_s)
    for concurrency in sorted({1, plan.concurrency}):
        timings, wall_s = run_level(url, payloads, concurrency, plan.timeout_s)
        errors += [t.error for t in timings if t.error]
        results.update(level_results(f"serving_c{concurrency}", timings, wall_s))
    if not results:
        raise ServerError(f"{url}: no request succeeded ({errors[0] if errors else 'no output'})")
    return {"server": url, "model": model, "server_info": info, "plan": asdict(plan), "errors": errors[:10],
            "results": results}


def _first_model(info: dict[str, Any]) -> str | None:
    models = info.get("models")
    if isinstance(models, dict) and models.get("data"):
        first = models["data"][0]
        return str(first.get("id")) if isinstance(first, dict) and first.get("id") else None
    return None


def measure_sglang_engine(model_path: str, plan: ServingPlan | None = None) -> dict[str, Any]:
    """Measure sglang's offline engine on `model_path` with the same request set (needs sglang)."""
    plan = plan or ServingPlan()
    plan.check()
    sglang = import_sglang()
    engine = sglang.Engine(model_path=model_path)
    try:
        params = {"temperature": 0.0, "max_new_tokens": plan.output_tokens, "ignore_eos": True}
        prompts = plan.prompts()
        engine.generate(prompts[0], params)
        timings = []
        started = time.perf_counter()
        for prompt in prompts:
            timing = RequestTiming()
            began = time.perf_counter()
            for chunk in engine.generate(prompt, params, stream=True):
                timing.chunk_times_s.append(time.perf_counter() - began)
                timing.output_tokens = int((chunk.get("meta_info") or {}).get("completion_tokens", 0))
            timing.ttft_s = timing.chunk_times_s[0] if timing.chunk_times_s else None
            timings.append(timing)
        results = level_results("engine_c1", timings, time.perf_counter() - started)
        started = time.perf_counter()
        outputs = engine.generate(prompts, params)
        wall_s = time.perf_counter() - started
        tokens = sum(int((o.get("meta_info") or {}).get("completion_tokens", 0)) for o in outputs)
        results[f"engine_batch{len(prompts)}_output_tok_per_s"] = _result("tok/s", True, [tokens / wall_s],
                                                                          output_tokens=tokens, wall_s=wall_s)
        get_info = getattr(engine, "get_server_info", None)
        info = get_info() if callable(get_info) else None
    finally:
        engine.shutdown()
    return {"engine": "sglang", "model_path": model_path, "sglang_version": getattr(sglang, "__version__", None),
            "server_info": info, "plan": asdict(plan), "results": results}
