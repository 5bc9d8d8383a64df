"""What a running inference server reports about itself: which engine, which version, which settings.

`gather_replies` does the I/O (a handful of GETs); `describe` is a pure function of the replies, so a
test feeds it real responses recorded from SGLang, vLLM and `transformers serve`.

- SGLang answers `/get_server_info` (newer releases: `/server_info`) with every server argument
  flattened at the top level, the scheduler's limits, `internal_states` (one entry per DP rank:
  resolved backends, memory use, last throughput) and `version`; `/get_model_info` (`/model_info`)
  describes the model.
- vLLM answers `/version` and publishes its configuration as Prometheus "info" gauges on `/metrics`
  (`vllm:cache_config_info{block_size="16",cache_dtype="auto",...} 1.0`; 0.22 and 0.34 publish only
  that one), one series per engine. Started with `VLLM_SERVER_DEV_MODE=1` it also answers `/server_info`
  (vllm/entrypoints/serve/dev/server_info/api_router.py of 0.34.0): `{"vllm_config": ..., "vllm_env": ...,
  "system_env": ...}`, the configuration as text, or as JSON sections (`cache_config`, `parallel_config`,
  ...) with `?config_format=json`. Which engine answered is decided by what the reply holds, never by
  the path: SGLang's `/server_info` holds its arguments, vLLM's a `vllm_config`.
- Any OpenAI-compatible server lists its models at `/v1/models`; one that answers neither
  `/get_server_info` nor `/version` is still identified, as `openai-compatible`, with what it exposes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from driftcheck.serving.flag_tables import table_for
from driftcheck.serving.http import ServerError, get
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty

SGLANG_INFO_PATHS = ("/get_server_info", "/server_info")
SGLANG_MODEL_PATHS = ("/get_model_info", "/model_info")
# Keys of /get_server_info that are not server arguments: the scheduler's limits and its state.
_SGLANG_NOT_ARGS = ("internal_states", "version", "status", "max_total_num_tokens", "max_req_input_len")
# Keys of SGLang 0.5.23's /server_info that describe this start, not a setting (sglang/srt/entrypoints/
# http_server.py `server_info`, sglang/srt/utils/common.py `build_server_info`): how long each startup phase
# took, the command line as text (its flags are read as fields elsewhere), where KV events are published,
# which frontend answers, and the HiCache storage layout the scheduler reports.
_SGLANG_CONTEXT = ("startup_time", "launch_command", "kv_events", "frontend", "hicache_object_layout")
VLLM_DEV_INFO_JSON = "/server_info?config_format=json"
_PROM_LINE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)")
_PROM_LABEL = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
# vLLM's info gauges that describe configuration (a `*_config_info` gauge dumps one config object).
_VLLM_CONFIG_GAUGE = re.compile(r"^vllm:[a-z_]*config_info$")
_MODEL_KEYS = ("owned_by", "root", "parent", "max_model_len")

Scrub = Callable[[str, str], str]


def gather_replies(url: str, timeout_s: float = 10.0) -> JSONObject:
    """GET the self-describing endpoints of the server at `url`: path → {status, body, content_type, server}.

    /get_model_info is asked only of a server that answered /get_server_info, /metrics only of one that
    answered /version (vLLM): elsewhere they say nothing about configuration. An unreachable server raises
    ServerError on the first request; a later endpoint that fails is recorded with its error (status None).
    """
    replies: JSONObject = {}

    def ask(path: str) -> bool:
        try:
            reply = get(url, path, timeout_s)
        except ServerError as exc:
            if not replies:
                raise  # the server is not there at all
            # It answered before: one endpoint that hangs or drops the connection is a fact about that endpoint.
            replies[path] = {"status": None, "error": str(exc)}
            return False
        replies[path] = {"status": reply.status, "content_type": reply.content_type, "server": reply.server,
                         "body": reply.text()}
        return reply.status == 200

    ask("/v1/models")
    if any(ask(path) for path in SGLANG_INFO_PATHS):
        if _is_vllm_info(_json_body(replies, *SGLANG_INFO_PATHS)):
            ask(VLLM_DEV_INFO_JSON)
        else:
            any(ask(path) for path in SGLANG_MODEL_PATHS)
    if ask("/version"):
        ask("/metrics")
    return {"url": url, "replies": replies}


def _json_body(replies: JSONObject, *paths: str) -> JSONValue:
    """The decoded JSON of the first of `paths` that answered 200 with JSON, else None."""
    for path in paths:
        reply = object_or_empty(replies.get(path))
        if reply.get("status") == 200:
            try:
                decoded: JSONValue = json.loads(_body(reply))
            except ValueError:
                continue
            return decoded
    return None


def _body(reply: JSONObject) -> str:
    """The text a recorded reply carried ("" for none)."""
    body = reply.get("body")
    return body if isinstance(body, str) else ""


def prometheus_info_gauges(text: str, keep: Callable[[str], bool]) -> dict[str, list[dict[str, str]]]:
    """The label sets of the Prometheus series whose metric name `keep` accepts: name → [labels, ...]."""
    found: dict[str, list[dict[str, str]]] = {}
    for line in text.splitlines():
        match = _PROM_LINE.match(line.strip())
        if not match or not keep(match.group("name")):
            continue
        labels = {key: value.replace('\\"', '"').replace("\\\\", "\\")
                  for key, value in _PROM_LABEL.findall(match.group("labels") or "")}
        found.setdefault(match.group("name"), []).append(labels)
    return found


def label_value(text: str) -> bool | int | float | str | None:
    """A Prometheus label value as the fact it stands for: "None" → None, "True" → True, "0.9" → 0.9."""
    if text in ("None", "none", "null"):
        return None
    if text in ("True", "true", "False", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _vllm_config(metrics_text: str, scrub: Scrub) -> JSONObject:
    """vLLM's configuration gauges: gauge (without `vllm:`) → engine index → label → value."""
    config: JSONObject = {}
    for name, series in prometheus_info_gauges(metrics_text, lambda name: bool(_VLLM_CONFIG_GAUGE.match(name))).items():
        per_engine: JSONObject = {}
        for index, labels in enumerate(series):
            engine = labels.pop("engine", None) or str(index)
            per_engine[engine] = {key: scrub(key, value) if isinstance(value, str) else value
                                  for key, value in ((k, label_value(v)) for k, v in sorted(labels.items()))}
        config[name.removeprefix("vllm:")] = per_engine
    return config


def _models(listing: JSONValue) -> JSONObject:
    """The served models by id, with what describes them (not creation times or permission ids)."""
    if not isinstance(listing, dict) or not isinstance(entries := listing.get("data"), list):
        return {}
    models: JSONObject = {}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") is not None:
            models[str(entry["id"])] = {key: entry[key] for key in _MODEL_KEYS if key in entry}
    return models


def _is_vllm_info(info: JSONValue) -> bool:
    """Whether a /server_info answer is vLLM's (dev mode): it holds a `vllm_config`."""
    return isinstance(info, dict) and "vllm_config" in info


def _sglang(info: JSONObject, model_info: JSONValue, scrub: Scrub) -> JSONObject:
    """SGLang's server arguments, scheduler limits and per-rank state, and the context of this start
    (timings, the launch command text), secrets scrubbed."""
    args: JSONObject = {key: _scrubbed(key, value, scrub) for key, value in sorted(info.items())
                        if key not in _SGLANG_NOT_ARGS and key not in _SGLANG_CONTEXT}
    # Older releases nest the arguments; newer ones flatten them (`**dataclasses.asdict(server_args)`).
    nested = args.pop("server_args", None)
    if isinstance(nested, dict):
        args.update({key: _scrubbed(key, value, scrub) for key, value in nested.items()})
    ranks = info.get("internal_states")
    states: JSONObject = {}
    if isinstance(ranks, list):
        for rank, state in enumerate(ranks):
            if isinstance(state, dict):
                states[str(rank)] = _rank_state(state, args, scrub)
    data: JSONObject = {"server_args": args, "internal_states": states,
                        "scheduler": {key: info[key] for key in _SGLANG_NOT_ARGS[2:] if key in info},
                        "context": {key: _scrubbed_deep(key, info[key], scrub)
                                    for key in _SGLANG_CONTEXT if key in info}}
    if isinstance(model_info, dict):
        data["model_info"] = {key: _scrubbed(key, value, scrub) for key, value in sorted(model_info.items())}
    return data


def _rank_state(state: JSONObject, args: JSONObject, scrub: Scrub) -> JSONObject:
    """One DP rank's report: what it measured (`state`) and the arguments it resolved to another value
    (`resolved`: an attention backend left unset on the command line). It repeats every other argument."""
    resolved: JSONObject = {key: _scrubbed(key, value, scrub) for key, value in sorted(state.items())
                            if key in args and args[key] != _scrubbed(key, value, scrub)}
    measured: JSONObject = {key: _scrubbed(key, value, scrub) for key, value in sorted(state.items())
                            if key not in args}
    return {"resolved": resolved, "state": measured}


def _scrubbed_deep(key: str, value: JSONValue, scrub: Scrub) -> JSONValue:
    """Every string of a nested value scrubbed (under the key it sits at)."""
    if isinstance(value, dict):
        return {inner: _scrubbed_deep(inner, item, scrub) for inner, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed_deep(key, item, scrub) for item in value]
    return scrub(key, value) if isinstance(value, str) else value


def _vllm_server_args(config: JSONValue, version: JSONValue, scrub: Scrub) -> JSONObject:
    """vLLM's resolved configuration (dev-mode /server_info as JSON) as engine arguments: each section's
    field under the argument that sets it (`cache_config.cache_dtype` -> kv_cache_dtype, through the
    release's flag table); a field no argument sets keeps its `section.field` name; a top-level value is
    kept only where an argument sets it (`optimization_level`)."""
    if not isinstance(config, dict):
        return {}
    table = table_for("vllm", version)
    args: JSONObject = {}
    for section, fields in sorted(config.items()):
        if not isinstance(fields, dict):
            # A setting of VllmConfig itself (optimization_level, performance_mode), kept where an argument sets
            # it; the others (an instance id drawn at every start) are no settings.
            field = table.field_at(f"vllm_config.{section}") if table is not None else None
            if field is not None:
                args[field] = _scrubbed_deep(section, fields, scrub)
            continue
        for key, value in sorted(fields.items()):
            path = f"{section}.{key}"
            name = (table.field_at(path) if table is not None else None) or path
            args[name] = _scrubbed_deep(key, value, scrub)
    return args


def _scrubbed(key: str, value: JSONValue, scrub: Scrub) -> JSONValue:
    if isinstance(value, str):
        return scrub(key, value)
    if isinstance(value, list):
        return [scrub(key, item) if isinstance(item, str) else item for item in value]
    return value


def engine_name(replies: JSONObject) -> str:
    """sglang, vllm, openai-compatible (lists models or has a /version, nothing engine-specific), or unknown."""
    info = _json_body(replies, *SGLANG_INFO_PATHS)
    if _is_vllm_info(info):
        return "vllm"
    if isinstance(info, dict):
        return "sglang"
    models = _models(_json_body(replies, "/v1/models"))
    if _vllm_signs(replies, models):
        return "vllm"
    if models or _version(replies) is not None:
        return "openai-compatible"
    return "unknown"


def _version(replies: JSONObject) -> JSONValue:
    version = _json_body(replies, "/version")
    return version.get("version") if isinstance(version, dict) else None


def _vllm_signs(replies: JSONObject, models: JSONObject) -> bool:
    """A /version answer is not enough (other servers have one): vLLM also owns its models or its metrics."""
    if _version(replies) is None:
        return False
    metrics = object_or_empty(replies.get("/metrics"))
    return any(object_or_empty(m).get("owned_by") == "vllm" for m in models.values()) or \
        (metrics.get("status") == 200 and "vllm:" in _body(metrics))


def no_scrub(key: str, value: str) -> str:
    """A Scrub that keeps every value (tests, and callers that show the data only to its owner)."""
    return value


def describe(raw: JSONObject, scrub: Scrub = no_scrub) -> JSONObject:
    """The facts in `gather_replies` output: engine, version, models, settings (pure).

    `scrub(key, value)` returns what may be stored of a string value (API keys and passwords among the
    server arguments are replaced by a digest, so a change stays visible and the value does not).
    """
    replies = object_or_empty(raw.get("replies"))
    engine = engine_name(replies)
    data: JSONObject = {
        "url": raw.get("url"),
        "engine": engine,
        "version": None,
        "endpoints": {path: object_or_empty(reply).get("status") for path, reply in sorted(replies.items())},
        "http_server": next((server for reply in replies.values()
                             if (server := object_or_empty(reply).get("server"))), None),
        "models": _models(_json_body(replies, "/v1/models")),
    }
    if engine == "sglang":
        info = _json_body(replies, *SGLANG_INFO_PATHS)
        data["version"] = info.get("version") if isinstance(info, dict) else None
        if isinstance(info, dict):
            data.update(_sglang(info, _json_body(replies, *SGLANG_MODEL_PATHS), scrub))
    else:
        data["version"] = _version(replies)
    if engine == "vllm":
        metrics = object_or_empty(replies.get("/metrics"))
        if metrics.get("status") == 200:
            data["vllm_config"] = _vllm_config(_body(metrics), scrub)
        dev_info = _json_body(replies, VLLM_DEV_INFO_JSON)
        if isinstance(dev_info, dict):
            data["server_args"] = _vllm_server_args(dev_info.get("vllm_config"), data["version"], scrub)
    return data


def describe_server(url: str, timeout_s: float = 10.0, scrub: Scrub = no_scrub) -> JSONObject:
    """Ask the server at `url` and describe it (ServerError when it cannot be reached)."""
    return describe(gather_replies(url, timeout_s), scrub)


__all__ = ["ServerError", "describe", "describe_server", "engine_name", "gather_replies", "label_value",
           "no_scrub", "prometheus_info_gauges"]
