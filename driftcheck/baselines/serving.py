"""Serving benchmark: measure a running OpenAI-compatible server (SGLang, vLLM, transformers serve, ...).

The request set is deterministic (seeded prompts of fixed length, greedy, a fixed output length) so two
runs ask for the same work — and the client checks that they got it: every request's output length and
`finish_reason` are recorded, and requests that ended before the asked length are reported, because a
server that stops at end-of-sequence does less work and looks faster.

Only standard OpenAI fields are sent unless the server is known to accept more: SGLang and vLLM take
`ignore_eos`/`min_tokens`, `transformers serve` takes a `generation_config` with `min_new_tokens`. The
unmeasured warm-up request settles what this server accepts: a field it rejects (HTTP 400/422) is
dropped and the reason kept, `/v1/chat/completions` replaces a missing `/v1/completions`, and a
warm-up that fails for any other reason stops the run with one line.

Each request streams (server-sent events). Per request: time to first token (TTFT), the latency per
output token after the first ((total − TTFT) / (tokens − 1)), and the gaps between streamed chunks —
reported separately, because servers put several tokens in one chunk. Token counts come from the
`usage` the server reports (`stream_options.include_usage`); where it reports none, the count of
content chunks is used and the result says so.
"""

from __future__ import annotations

import http.client
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from driftcheck.baselines.deps import import_sglang
from driftcheck.errors import UsageError
from driftcheck.serving.engine import Scrub, describe_server, no_scrub
from driftcheck.serving.http import (
    TOO_SLOW,
    ServerError,
    connection,
    error_line,
    exchange_within,
    parse_url,
    read_body,
    stream_lines,
)
from driftcheck.stats.summary import percentile, summarize

__all__ = ["PROMPT_WORDS", "Dialect", "RequestTiming", "ServerError", "ServingPlan", "level_results",
           "measure_server", "measure_sglang_engine", "negotiate", "payload", "run_level", "server_info",
           "stream_request"]

# A fixed, plain vocabulary: prompts must tokenize to roughly the same length on any tokenizer.
PROMPT_WORDS = ("time", "year", "people", "way", "day", "man", "thing", "woman", "life", "child", "world", "school",
                "state", "family", "student", "group", "country", "problem", "hand", "part", "place", "case", "week",
                "company", "system", "program", "question", "work", "government", "number", "night", "point",
                "home", "water", "room", "mother", "area", "money", "story", "fact", "month", "lot", "right",
                "study", "book")
COMPLETIONS = "/v1/completions"
CHAT = "/v1/chat/completions"
# Engines known to accept sampling fields beyond the OpenAI standard that pin the output length.
_IGNORE_EOS_ENGINES = ("sglang", "vllm")
# Statuses that mean "no such endpoint here" rather than "bad request".
_NO_ENDPOINT = (404, 405, 501)
_REJECTED = (400, 422)


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
            prompts.append(" ".join(rng.choice(PROMPT_WORDS) for _ in range(self.prompt_words)))
        return prompts


@dataclass(frozen=True)
class Dialect:
    """How this server is asked: endpoint, the field that pins the output length, whether usage is requested."""

    endpoint: str = COMPLETIONS
    length_control: str = "none"  # ignore_eos | generation_config | none
    stream_usage: bool = True

    def describe(self) -> str:
        how = {"ignore_eos": "ignore_eos + min_tokens", "generation_config": "generation_config.min_new_tokens",
               "none": "none (standard fields only; the server may stop early)"}[self.length_control]
        return f"{self.endpoint}, output length pinned by: {how}"



class RequestRecord(TypedDict):
    """What a serving measurement keeps of one request: its length, why it ended, its timings (or its error)."""

    output_tokens: int
    tokens_from: str
    chunks: int
    finish_reason: str | None
    ttft_ms: float | None
    total_ms: float | None
    error: str | None

@dataclass
class RequestTiming:
    """One streamed request: when its chunks arrived, how many tokens it produced, why it ended."""

    ttft_s: float | None = None
    chunk_times_s: list[float] = field(default_factory=list)
    usage_tokens: int | None = None
    finish_reason: str | None = None
    total_s: float = 0.0
    status: int | None = None
    error: str | None = None

    @property
    def chunks(self) -> int:
        return len(self.chunk_times_s)

    @property
    def output_tokens(self) -> int:
        """Tokens the server reports it generated; the content-chunk count only where it reports none."""
        return self.usage_tokens if self.usage_tokens is not None else self.chunks

    @property
    def tokens_from(self) -> str:
        return "usage" if self.usage_tokens is not None else "chunks"

    @property
    def chunk_gaps_s(self) -> list[float]:
        times = self.chunk_times_s
        return [b - a for a, b in zip(times, times[1:], strict=False)]

    @property
    def per_token_s(self) -> float | None:
        """Latency per output token after the first: (total − TTFT) / (tokens − 1); None under 2 tokens."""
        if self.ttft_s is None or self.output_tokens < 2:
            return None
        return (self.total_s - self.ttft_s) / (self.output_tokens - 1)

    def record(self) -> RequestRecord:
        """What is kept of the request in the results: its length, why it ended, its timings."""
        return {"output_tokens": self.output_tokens, "tokens_from": self.tokens_from, "chunks": self.chunks,
                "finish_reason": self.finish_reason, "ttft_ms": _ms(self.ttft_s), "total_ms": _ms(self.total_s),
                "error": self.error}


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


def server_info(url: str, scrub: Scrub = no_scrub) -> dict[str, Any]:
    """What the server reports about itself: engine, version, served models, settings (see serving.engine)."""
    parse_url(url)
    return describe_server(url, scrub=scrub)


def payload(plan: ServingPlan, model: str, prompt: str, dialect: Dialect) -> dict[str, object]:
    """The body of one streamed, greedy request of the plan's output length, phrased in `dialect`."""
    body: dict[str, object] = {"model": model, "max_tokens": plan.output_tokens, "temperature": 0.0, "top_p": 1.0,
                            "stream": True}
    if dialect.endpoint == CHAT:
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    if dialect.stream_usage:
        body["stream_options"] = {"include_usage": True}
    if dialect.length_control == "ignore_eos":
        body.update(ignore_eos=True, min_tokens=plan.output_tokens)
    elif dialect.length_control == "generation_config":
        # transformers serve builds its GenerationConfig from this JSON string.
        body["generation_config"] = json.dumps({"min_new_tokens": plan.output_tokens,
                                                "max_new_tokens": plan.output_tokens, "do_sample": False})
    return body


def _sse_events(response: http.client.HTTPResponse, deadline: float) -> Iterator[bytes]:
    """The `data:` payloads of a server-sent event stream, as they arrive, until `deadline` (a server sending
    one byte a second never ends a line, nor trips the socket's timeout)."""
    for raw in stream_lines(response, deadline):
        line = raw.strip()
        if line.startswith(b"data:"):
            data = line[5:].strip()
            if data == b"[DONE]":
                return
            yield data


def _content(choice: Mapping[str, object]) -> str:
    """The text a streamed choice carries: `text` (completions) or `delta.content` (chat)."""
    delta = choice.get("delta")
    if isinstance(delta, dict):
        return str(delta.get("content") or "")
    return str(choice.get("text") or "")


def _read_event(timing: RequestTiming, data: bytes, now: float) -> None:
    event = json.loads(data)
    if not isinstance(event, dict):
        raise ValueError(f"stream event is not an object: {data[:80]!r}")
    if isinstance(event.get("error"), dict | str):
        raise ValueError(f"server error in stream: {str(event['error'])[:160]}")
    usage = event.get("usage")
    if isinstance(usage, dict) and usage.get("completion_tokens") is not None:
        timing.usage_tokens = int(usage["completion_tokens"])
    choices = event.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise ValueError(f"stream event has no list of choices: {data[:80]!r}")
    if any(_content(choice) for choice in choices):
        timing.chunk_times_s.append(now)
    reasons = [c["finish_reason"] for c in choices if c.get("finish_reason")]
    if reasons:
        timing.finish_reason = str(reasons[0])


def stream_request(url: str, endpoint: str, body: Mapping[str, object], timeout_s: float,
                   clock: Callable[[], float] = time.perf_counter) -> RequestTiming:
    """Send one streaming request to `endpoint` and time its chunks; failures are recorded, not raised."""
    timing = RequestTiming()
    conn, prefix = connection(url, timeout_s)
    started = clock()
    # The headers within timeout_s, the stream within as much again (a server trickling either is cut).
    with exchange_within(conn, 2 * timeout_s) as cut:
        try:
            conn.request("POST", prefix + endpoint, body=json.dumps(body).encode("utf-8"),
                         headers={"Content-Type": "application/json", "Accept": "text/event-stream"})
            response = conn.getresponse()
            timing.status = response.status
            if cut.is_set():
                timing.error = f"BodyTooSlow: {TOO_SLOW}"
                return timing
            if response.status != 200:
                timing.error = error_line(response.status, read_body(response, 300, time.monotonic() + timeout_s))
                return timing
            for data in _sse_events(response, time.monotonic() + timeout_s):
                _read_event(timing, data, clock() - started)
            timing.ttft_s = timing.chunk_times_s[0] if timing.chunk_times_s else None
            if cut.is_set():  # the stream ended because it was cut: not a finished answer
                timing.error = f"BodyTooSlow: {TOO_SLOW}"
        except (OSError, ValueError, http.client.HTTPException) as exc:
            timing.error = f"BodyTooSlow: {TOO_SLOW}" if cut.is_set() else f"{type(exc).__name__}: {exc}"
        finally:
            timing.total_s = clock() - started
            conn.close()
    return timing


def _length_candidates(engine: str) -> list[str]:
    if engine in _IGNORE_EOS_ENGINES:
        return ["ignore_eos", "none"]
    # Not known to take any extension: offered once in the warm-up, kept only if accepted and honoured.
    return ["generation_config", "none"]


def negotiate(url: str, plan: ServingPlan, model: str, engine: str, prompt: str) -> tuple[Dialect, list[str]]:
    """Settle, with unmeasured warm-up requests, how this server is asked; the dialect and what was learnt.

    A field the server rejects (HTTP 400/422) is dropped, a missing /v1/completions is replaced by
    /v1/chat/completions, and a length field the server accepts but does not honour is dropped too. Any
    other failure raises ServerError: a run whose warm-up fails would only collect the same error.
    """
    notes: list[str] = []
    last_error = "no request sent"
    for endpoint in (COMPLETIONS, CHAT):
        attempts = [Dialect(endpoint, length, usage) for length in _length_candidates(engine)
                    for usage in (True, False) if usage or length == "none"]
        for dialect in attempts:
            timing = stream_request(url, endpoint, payload(plan, model, prompt, dialect), plan.timeout_s)
            if timing.error is None and timing.ttft_s is not None:
                if dialect.length_control != "none" and timing.output_tokens != plan.output_tokens:
                    notes.append(f"{dialect.length_control}: accepted but not honoured ({timing.output_tokens} of "
                                 f"{plan.output_tokens} tokens, finish_reason {timing.finish_reason}); dropped")
                    continue
                return dialect, notes
            last_error = timing.error or "the stream carried no content"
            if timing.status in _NO_ENDPOINT:
                notes.append(f"{endpoint}: {last_error}; trying {CHAT}" if endpoint == COMPLETIONS
                             else f"{endpoint}: {last_error}")
                break
            if timing.status not in _REJECTED:
                raise ServerError(f"{url}: warm-up request to {endpoint} failed ({last_error}); nothing measured")
            notes.append(f"sent {_fields(dialect)}: {last_error}; retrying with fewer fields")
    raise ServerError(f"{url}: warm-up request failed ({last_error}); nothing measured")


def _fields(dialect: Dialect) -> str:
    names = {"ignore_eos": "ignore_eos/min_tokens", "generation_config": "generation_config"}
    parts = [names[dialect.length_control]] if dialect.length_control in names else []
    if dialect.stream_usage:
        parts.append("stream_options")
    return " + ".join(parts) or "standard request"


def _result(unit: str, higher_is_better: bool, values: Sequence[float], **extra: Any) -> dict[str, Any]:
    summary = summarize(values).to_json()
    if len(values) < 2:
        # One value has no spread: no CV and no interval, rather than a 0.000 that reads as exact.
        summary.update(cv=None, ci_low=None, ci_high=None)
    return {"unit": unit, "higher_is_better": higher_is_better, **summary, "samples": list(values), **extra}


def level_results(prefix: str, timings: Sequence[RequestTiming], wall_s: float) -> dict[str, dict[str, Any]]:
    """Named results of one concurrency level: TTFT, ITL per token and per chunk, output tokens/s."""
    good = [t for t in timings if t.error is None and t.ttft_s is not None]
    results: dict[str, dict[str, Any]] = {}
    if not good:
        return results
    results[f"{prefix}_ttft_ms"] = _result("ms", False, [t.ttft_s * 1000.0 for t in good if t.ttft_s is not None])
    per_token = [t.per_token_s * 1000.0 for t in good if t.per_token_s is not None]
    if per_token:
        results[f"{prefix}_itl_token_ms"] = _result("ms", False, per_token)
    gaps = sorted(gap * 1000.0 for t in good for gap in t.chunk_gaps_s)
    tokens = sum(t.output_tokens for t in good)
    chunks = sum(t.chunks for t in good)
    if gaps:
        results[f"{prefix}_itl_chunk_ms"] = _result("ms", False, gaps, p99=percentile(gaps, 99),
                                                    tokens_per_chunk=round(tokens / chunks, 3) if chunks else None)
    results[f"{prefix}_output_tok_per_s"] = _result("tok/s", True, [tokens / wall_s] if wall_s > 0 else [0.0],
                                                    requests=len(good), output_tokens=tokens, wall_s=wall_s)
    return results


Progress = Callable[[str], None]


def run_level(url: str, endpoint: str, payloads: Sequence[Mapping[str, object]], concurrency: int,
              timeout_s: float, progress: Progress | None = None) -> tuple[list[RequestTiming], float]:
    """Send every payload with at most `concurrency` in flight; the timings and the wall time."""
    started = time.perf_counter()
    done: list[RequestTiming] = []

    def one(body: Mapping[str, object]) -> RequestTiming:
        timing = stream_request(url, endpoint, body, timeout_s)
        done.append(timing)
        if progress:
            progress(f"concurrency {concurrency}: {len(done)}/{len(payloads)} requests")
        return timing

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        timings = list(pool.map(one, payloads))
    return timings, time.perf_counter() - started


def length_warnings(level: str, timings: Sequence[RequestTiming], asked: int) -> list[str]:
    """What makes this level's work differ from what was asked: short outputs, token counts from chunks."""
    good = [t for t in timings if t.error is None]
    warnings = []
    off = [t for t in good if t.output_tokens != asked]
    if off:
        lengths = ", ".join(str(t.output_tokens) for t in off[:8]) + (", ..." if len(off) > 8 else "")
        reasons = ", ".join(sorted({str(t.finish_reason) for t in off}))
        warnings.append(f"{level}: {len(off)} of {len(good)} requests did not return the {asked} tokens asked "
                        f"({lengths}; finish_reason {reasons}): this run did {sum(t.output_tokens for t in good)} "
                        f"of {asked * len(good)} tokens of work")
    from_chunks = [t for t in good if t.tokens_from == "chunks"]
    if from_chunks:
        warnings.append(f"{level}: the server reported no token usage for {len(from_chunks)} requests; their "
                        "tokens are counted as streamed chunks, which undercounts when a chunk holds several")
    return warnings


def measure_server(url: str, plan: ServingPlan | None = None, scrub: Scrub = no_scrub,
                   progress: Progress | None = None) -> dict[str, Any]:
    """Measure the server at `url`: what it reports, the warm-up, then the request set at concurrency 1 and N.

    `progress` receives a short line as the work advances (the CLI shows it on a terminal)."""
    plan = plan or ServingPlan()
    plan.check()
    info = server_info(url, scrub)
    model = plan.model or next(iter(info.get("models") or {}), None)
    if model is None:
        raise ServerError(f"{url} lists no model at /v1/models; pass --model NAME")
    prompts = plan.prompts()
    if progress:
        progress(f"warm-up ({info.get('engine')}, {model})")
    dialect, notes = negotiate(url, plan, model, str(info.get("engine")), prompts[0])
    payloads = [payload(plan, model, prompt, dialect) for prompt in prompts]
    results: dict[str, dict[str, Any]] = {}
    levels: dict[str, Any] = {}
    errors: list[str] = []
    warnings: list[str] = []
    for concurrency in sorted({1, plan.concurrency}):
        timings, wall_s = run_level(url, dialect.endpoint, payloads, concurrency, plan.timeout_s, progress)
        errors += [t.error for t in timings if t.error]
        results.update(level_results(f"serving_c{concurrency}", timings, wall_s))
        warnings += length_warnings(f"concurrency {concurrency}", timings, plan.output_tokens)
        levels[f"c{concurrency}"] = {"wall_s": wall_s, "requests": [t.record() for t in timings]}
    if not results:
        raise ServerError(f"{url}: no request succeeded ({errors[0] if errors else 'no output'})")
    return {"server": url, "engine": info.get("engine"), "engine_version": info.get("version"), "model": model,
            "server_info": info, "plan": {**asdict(plan), "model": model},
            "dialect": {**asdict(dialect), "description": dialect.describe(), "notes": notes},
            "levels": levels, "errors": errors[:10], "warnings": warnings, "results": results}


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
                meta = chunk.get("meta_info") or {}
                timing.usage_tokens = int(meta.get("completion_tokens", 0))
                reason = meta.get("finish_reason")
                timing.finish_reason = reason.get("type") if isinstance(reason, dict) else reason
            timing.ttft_s = timing.chunk_times_s[0] if timing.chunk_times_s else None
            timing.total_s = time.perf_counter() - began
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
            "server_info": info, "plan": asdict(plan), "results": results,
            "warnings": length_warnings("engine", timings, plan.output_tokens)}

