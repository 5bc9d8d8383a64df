"""The command line a serving engine was started with: which flags the user gave, by argument name.

A server's `/get_server_info` (SGLang) or configuration gauges (vLLM) report every argument *resolved*:
the user's value, or a default the engine chose, and some defaults depend on the release and on the
GPU (SGLang derives `chunked_prefill_size`, `cuda_graph_max_bs` and `mem_fraction_static` from GPU
memory; vLLM changed its CUDA-graph mode default). Only the launch command line says which values the
user set, so explain can tell "the same flags, a new default" from a changed flag. Pure functions of an
argv; the probe finds the process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Command lines that start an engine's HTTP server (`python -m sglang.launch_server`, `sglang serve`,
# `vllm serve`, `python -m vllm.entrypoints.openai.api_server`), and the port each listens on by default.
_ENGINES = (("sglang", re.compile(r"(^|[\s/])sglang(\.launch_server|\s+serve)\b"), 30000),
            ("vllm", re.compile(r"(^|[\s/])vllm(\s+serve\b|\.entrypoints\.openai\.api_server\b)"), 8000))


def engine_of(argv: Sequence[str]) -> tuple[str, int] | None:
    """(engine, its default port) when `argv` starts an SGLang or vLLM server, else None."""
    line = " ".join(argv)
    return next(((name, port) for name, pattern, port in _ENGINES if pattern.search(line)), None)


def launch_flags(argv: Sequence[str]) -> dict[str, str | bool]:
    """The `--flag value` / `--flag=value` / bare `--flag` options of a command line, by the argument name
    the engine reports (`--chunked-prefill-size` -> `chunked_prefill_size`); a bare flag is True."""
    flags: dict[str, str | bool] = {}
    args = list(argv)
    for i, arg in enumerate(args):
        if not arg.startswith("--") or arg == "--":
            continue
        name, sep, text = arg[2:].partition("=")
        value: str | bool = text
        if not sep:
            following = args[i + 1] if i + 1 < len(args) else None
            value = following if following is not None and not following.startswith("--") else True
        flags[name.replace("-", "_")] = value
    return flags


def listening_port(argv: Sequence[str], default: int) -> int | None:
    """The port the server of `argv` listens on: its `--port`, else the engine's default."""
    value = launch_flags(argv).get("port", default)
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
