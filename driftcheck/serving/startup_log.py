"""The settings a serving engine writes to its log as it starts (`--server-log FILE`): text in, settings out.

A server that is not running any more still has its log, and the log holds what it was started with:

- vLLM's launcher calls `log_version_and_model` and then `log_non_default_args` (vllm/entrypoints/utils.py
  of 0.22.0; vllm/entrypoints/common/startup.py of 0.34.0, called from entrypoints/launchers/launcher.py):
  `logger.info("non-default args: %s", non_default_args)`, the repr of a dict of the arguments that differ
  from the parser's defaults (0.34.0 first replaces `api_key`, `hf_token` and `watermark_config` by "***",
  `redact_sensitive_args`). The version is "vLLM server version %s, serving model %s" when the logger has
  no formatter or the logo is turned off, else a logo whose second line ends in "version %s" (coloured with
  ANSI escapes by the colour formatter); older releases (0.10, 0.11 in real logs, and 0.22.0's
  vllm/entrypoints/api_server.py) write "vLLM API server version %s".
- SGLang's engine logs its arguments once: 0.5.9 `logger.info(f"{server_args=}")`
  (sglang/srt/entrypoints/engine.py), the dataclass repr `server_args=ServerArgs(field=value, ...)` with every
  field; 0.5.23 `logger.info(f"server_args={_server_args_for_logging(server_args)}")`, the dict repr of the
  resolved arguments (`ServerArgs.resolved_dict`). SGLang logs no version line at startup.

Values are read without evaluating anything: `ast.literal_eval` for each value, JSON where a release printed
a configuration as JSON (vLLM 0.11's `CompilationConfig.__repr__`), a mapping or list taken apart item by item
when one item is not a literal, and what is none of these (an enum's `<CUDAGraphMode.FULL: 2>`, a
`LoRAModulePath(...)`, a `CompilationConfig(level=3, ...)`) kept as its text and named in `as_text`.
Prefixes a line carries (timestamps, `INFO`, `(APIServer pid=1)`, a container name, colours) do not matter:
the markers are found inside the line.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from driftcheck.snapshot.jsontypes import JSONValue

# Terminal colour and cursor sequences (vLLM's colour formatter, `docker logs` of a TTY).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_VLLM_ARGS = "non-default args: "
_SGLANG_ARGS = re.compile(r"\bserver_args=(?=ServerArgs\(|\{)")
_VLLM_VERSIONS = (re.compile(r"vLLM (?:API )?server version ([^\s,]+)"),
                  # The logo's second line: "▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.17.0".
                  re.compile(r"\u2580\u2584\u2580 \u2588\s+version\s+(\S+)"))
_CLOSING = {"(": ")", "[": "]", "{": "}", "<": ">"}
# A setting's name in SGLang's dataclass repr (`tp_size=8`).
_FIELD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)", re.DOTALL)


@dataclass(frozen=True)
class StartupSettings:
    """What one engine start wrote: `engine` (vllm or sglang), `version` (None where the log does not say),
    `settings` by the engine's own field names, `complete` (SGLang logs every field; vLLM only those that
    differ from its parser's defaults) and `as_text` (settings, dotted, whose value was kept as its text)."""

    engine: str
    version: str | None
    settings: dict[str, JSONValue]
    complete: bool
    as_text: tuple[str, ...] = ()


def plain_line(line: str) -> str:
    """A log line without terminal escapes."""
    return _ANSI.sub("", line)


def is_startup_line(line: str) -> bool:
    """Whether a log line is one `read_startup_log` reads (a settings or a version line): what a probe keeps
    of a log that may be gigabytes of request lines."""
    plain = plain_line(line)
    return _VLLM_ARGS in plain or bool(_SGLANG_ARGS.search(plain)) or any(p.search(plain) for p in _VLLM_VERSIONS)


# A piece each startup line holds, as bytes (`_VLLM_ARGS`; `_SGLANG_ARGS`'s "server_args="; "version" in both
# `_VLLM_VERSIONS`), or an escape, which may split a piece until `plain_line` takes it out: a raw line with none
# of them is no startup line, told by one search of its bytes, before it is decoded. A host reads the log line
# by line with it (`Host.read_lines`, on the far side for SSH): the request lines that are most of a long-running
# server's log stay where the log is.
STARTUP_PIECES = re.compile(rb"non-default args: |server_args=|version|\x1b")


def read_startup_log(text: str) -> StartupSettings | None:
    """The settings of the last start the log holds (a log a server appends to holds every restart), with
    the version line before it; None when no start's settings are in it."""
    version: str | None = None
    found: StartupSettings | None = None
    for raw in text.splitlines():
        line = plain_line(raw)
        for pattern in _VLLM_VERSIONS:
            match = pattern.search(line)
            if match:
                version = match.group(1)
        start = _settings_of(line, version)
        if start is not None:
            found = start
    return found


def _settings_of(line: str, version: str | None) -> StartupSettings | None:
    """The settings on one line, when it is a vLLM or SGLang settings line that parses."""
    at = line.rfind(_VLLM_ARGS)
    if at >= 0:
        body = _enclosed(line, at + len(_VLLM_ARGS), "{")
        if body is not None:
            as_text: list[str] = []
            return StartupSettings("vllm", version, _mapping(body, as_text, ""), False, tuple(as_text))
    match = _SGLANG_ARGS.search(line)
    if match is None:
        return None
    opening = line[match.end()]
    body = _enclosed(line, match.end() + (len("ServerArgs") if opening == "S" else 0),
                     "(" if opening == "S" else "{")
    if body is None:
        return None
    as_text = []
    settings = _keywords(body, as_text) if opening == "S" else _mapping(body, as_text, "")
    # SGLang writes no version line; a version of vLLM's seen earlier in the same file is not SGLang's.
    return StartupSettings("sglang", None, settings, True, tuple(as_text))


def _enclosed(line: str, at: int, opening: str) -> str | None:
    """The text between the bracket `opening` at `at` and its partner, None when the line cuts it off."""
    if line[at:at + 1] != opening:
        return None
    end = _partner(line, at)
    return line[at + 1:end] if end is not None else None


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """Each character of `text` from `start` that is outside quoted strings, with the bracket depth after it
    (an opening bracket counts itself, a closing one is at the depth it closes to)."""
    depth, quote, index = 0, "", start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        else:
            if char in _CLOSING:
                depth += 1
            elif char in _CLOSING.values():
                depth -= 1
            yield index, char, depth
        index += 1


def _partner(text: str, at: int) -> int | None:
    """The index of the bracket that closes the one at `at`, skipping quoted strings."""
    return next((index for index, char, depth in _unquoted(text, at) if depth == 0 and char in _CLOSING.values()),
                None)


def _items(body: str) -> list[str]:
    """The top-level, comma-separated items of a bracket's contents."""
    items, start = [], 0
    for index, char, depth in _unquoted(body):
        if char == "," and depth == 0:
            items.append(body[start:index])
            start = index + 1
    if body[start:].strip():
        items.append(body[start:])
    return items


def _split_pair(item: str, separator: str) -> tuple[str, str] | None:
    """`key` and `value` of a `key: value` item, split at the first separator outside quotes and brackets."""
    return next(((item[:index], item[index + 1:]) for index, char, depth in _unquoted(item)
                 if char == separator and depth == 0), None)


def _mapping(body: str, as_text: list[str], path: str) -> dict[str, JSONValue]:
    """A dict repr's contents (`'key': value, ...`) as settings."""
    settings: dict[str, JSONValue] = {}
    for item in _items(body):
        pair = _split_pair(item, ":")
        if pair is None:
            continue
        try:
            key = str(ast.literal_eval(pair[0].strip()))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            key = pair[0].strip()
        settings[key] = _value(pair[1], as_text, f"{path}{key}")
    return settings


def _keywords(body: str, as_text: list[str]) -> dict[str, JSONValue]:
    """A dataclass repr's contents (`field=value, ...`) as settings: the keywords of a call expression."""
    settings: dict[str, JSONValue] = {}
    for item in _items(body):
        match = _FIELD.match(item)
        if match is not None:
            settings[match.group(1)] = _value(match.group(2), as_text, match.group(1))
    return settings


def _value(text: str, as_text: list[str], path: str) -> JSONValue:
    """One value: a Python literal, JSON, a container read item by item, else its text (named in
    `as_text`)."""
    text = text.strip()
    try:
        return _json_ready(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        return _json_ready(json.loads(text))
    except ValueError:
        pass
    if text[:1] in "{[" and _partner(text, 0) == len(text) - 1:
        if text[0] == "{":
            return _mapping(text[1:-1], as_text, path + ".")
        return [_value(item, as_text, f"{path}.{index}") for index, item in enumerate(_items(text[1:-1]))]
    as_text.append(path)
    return text


def _json_ready(value: object) -> JSONValue:
    """A literal as JSON: tuples and sets as lists (sets sorted by their text), keys as text, bytes decoded."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return [_json_ready(item) for item in sorted(value, key=repr)]
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)  # complex numbers, Ellipsis: nothing a setting holds, kept as text


__all__ = ["StartupSettings", "is_startup_line", "plain_line", "read_startup_log"]
