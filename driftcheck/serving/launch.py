"""The command line a serving engine was started with: which flags the user gave, by argument name.

A server's `/get_server_info` (SGLang) or configuration gauges (vLLM) report every argument *resolved*:
the user's value, or a default the engine chose, and some defaults depend on the release and on the
GPU (SGLang derives `chunked_prefill_size`, `cuda_graph_max_bs` and `mem_fraction_static` from GPU
memory; vLLM changed its CUDA-graph mode default). Only the launch command line says which values the
user set, so explain can tell "the same flags, a new default" from a changed flag. Pure functions of an
argv; the probe finds the process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from driftcheck.snapshot.jsontypes import JSONValue

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


def config_file_of(argv: Sequence[str]) -> str | None:
    """The file of vLLM's `--config FILE` (or `--config=FILE`), None when the command line names none."""
    for index, word in enumerate(argv):
        if word == "--config" and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith("--config="):
            return word.partition("=")[2]
    return None


def vllm_argv(argv: Sequence[str], config: JSONValue = None) -> list[str]:
    """A vLLM command line as its parser reads it (vllm/utils/argparse_utils.py of 0.34.0,
    `FlexibleArgumentParser.parse_args` and `load_config_file`): the `--config` file's keys become flags where
    the file stood (`key: true` -> `--key`, a list -> `--key a b`, a mapping -> `--key '{json}'`), `--a_b` is
    `--a-b`, and `-O3` / `-O 3` are `--optimization-level 3`. `config` is the parsed YAML of the file."""
    words: list[str] = []
    for index, word in enumerate(argv):
        if word == "--config" or word.startswith("--config="):
            words += _config_words(config)
            continue
        if index > 0 and argv[index - 1] == "--config":
            continue
        words += _vllm_word(word, argv[index + 1] if index + 1 < len(argv) else None)
    return words


def _vllm_word(word: str, following: str | None) -> list[str]:
    """One word of a vLLM command line as its parser rewrites it."""
    if word.startswith("--"):
        name, sep, value = word.partition("=")
        head, dot, tail = name[2:].partition(".")
        return ["--" + head.replace("_", "-") + dot + tail + sep + value]
    if word.startswith("-O") and word != "-O":
        return ["--optimization-level", word[3:] if word[2:3] == "=" else word[2:]]
    if word == "-O" and following in ("0", "1", "2", "3"):
        return ["--optimization-level"]
    return [word]


def _config_words(config: JSONValue) -> list[str]:
    """The flags of a vLLM `--config` YAML file, as `load_config_file` of 0.34.0 makes them."""
    if not isinstance(config, dict):
        return []
    words: list[str] = []
    for key, value in config.items():
        if isinstance(value, bool):
            # vLLM adds `--no-key` for false only where the parser has one; the flag table decides that here.
            words.append(f"--{key}" if value else f"--no-{key}")
        elif isinstance(value, list):
            if value:
                words += [f"--{key}", *(str(item) for item in value)]
        elif isinstance(value, dict):
            words += [f"--{key}", json.dumps(value)]
        else:
            words += [f"--{key}", str(value)]
    return words
