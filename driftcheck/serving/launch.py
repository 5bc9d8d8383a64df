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
from decimal import Decimal

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


def vllm_argv(argv: Sequence[str], config: JSONValue = None, false_negated: bool = True) -> list[str]:
    """A vLLM command line as its parser reads it, rewritten the way `FlexibleArgumentParser.parse_args` of
    vllm/utils/argparse_utils.py rewrites it before argparse sees it (the same code in 0.22.0 and 0.34.0):

    - the `--config` file's keys become flags where the file stood (`load_config_file`: `key: true` -> `--key`,
      a list -> `--key a b`, a mapping -> `--key '{json}'`, false -> `--no-key` when `false_negated` as in
      0.34.0, left out as in 0.22.0); `config` is the parsed YAML of the file;
    - in an option's name, underscores before the first dot become dashes (`--max_num_seqs` -> `--max-num-seqs`);
    - `-O3`, `-O=3`, `-Odecode` and `-O 3` (0-3 only) become `--optimization-level VALUE`;
    - a dotted option (`--compilation-config.mode 3`, `-cc.mode=3`, `-sc.method ngram`) sets one key of a
      nested configuration: its value is read as JSON, else as a human-readable integer (`1k`), else as text;
      `name.key+ a,b` makes a list; the keys given under one spelling are merged into one mapping, and each
      spelling's mapping is put at the end of the line as `SPELLING '{json}'`, so argparse stores the last one.
    """
    words: list[str] = []
    for index, word in enumerate(argv):
        if word == "--config" or word.startswith("--config="):
            words += _config_words(config, false_negated)
            continue
        if index > 0 and argv[index - 1] == "--config":
            continue
        words.append(word)
    rewritten: list[str] = []
    for index, word in enumerate(words):
        rewritten += _vllm_word(word, words[index + 1] if index + 1 < len(words) else None)
    return _dotted_merged(rewritten)


def _vllm_word(word: str, following: str | None) -> list[str]:
    """One word of a vLLM command line as its parser rewrites it (names and `-O`)."""
    if word.startswith("--"):
        name, sep, value = word.partition("=")
        head, dot, tail = name[2:].partition(".")
        return ["--" + head.replace("_", "-") + dot + tail + sep + value]
    if word.startswith("-O") and word != "-O":
        return ["--optimization-level", word[3:] if word[2:3] == "=" else word[2:]]
    if word == "-O" and following in ("0", "1", "2", "3"):
        return ["--optimization-level"]
    return [word]


def _dotted_merged(words: list[str]) -> list[str]:
    """The dotted options of a rewritten vLLM line merged into one JSON mapping per spelling, put at the end
    (`parse_args`' second loop: a word that starts with `-` and holds a dot; a dot only in an `=` value is not
    one). A dotted option that is the last word has no value: vLLM fails on it; here it is left as it stands."""
    merged: dict[str, dict[str, JSONValue]] = {}
    taken: set[int] = set()
    for index, word in enumerate(words):
        if index in taken or not word.startswith("-") or "." not in word:
            continue
        name, sep, text = word.partition("=")
        if sep and "." not in name:
            continue
        if not sep:
            if index + 1 >= len(words):
                continue
            text = words[index + 1]
            taken.add(index + 1)
        if name.endswith("+"):
            name, text = name[:-1], json.dumps(text.split(","))
        key, *keys = name.split(".")
        nested: JSONValue = _dotted_value(text)
        for inner in reversed(keys):
            nested = {inner: nested}
        if isinstance(nested, dict):
            _merge(merged.setdefault(key, {}), nested)
        taken.add(index)
    kept = [word for index, word in enumerate(words) if index not in taken]
    for key, mapping in merged.items():
        kept += [key, json.dumps(mapping)]
    return kept


def _dotted_value(text: str) -> JSONValue:
    """A dotted option's value as vLLM reads it: JSON, else a human-readable integer, else the text."""
    try:
        value: JSONValue = json.loads(text)
        return value
    except ValueError:
        pass
    number = human_readable_int(text)
    return text if number is None else number


def _merge(into: dict[str, JSONValue], update: dict[str, JSONValue]) -> None:
    """vLLM's `recursive_dict_update`: mappings merged key by key, lists extended, anything else replaced."""
    for key, value in update.items():
        before = into.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            _merge(before, value)
        elif isinstance(value, list) and isinstance(before, list):
            into[key] = before + value
        else:
            into[key] = value


_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_readable_int(text: str) -> int | None:
    """vLLM's `human_readable_int` (vllm/utils/argparse_utils.py): `1k` -> 1000, `25.6k` -> 25600, `1K` -> 1024,
    a plain integer as itself; None where vLLM raises (a decimal with a binary suffix, not a number)."""
    text = text.strip()
    match = _HUMAN_INT.fullmatch(text)
    if match:
        number, suffix = match.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        return int(number) * _BINARY[suffix] if number.isdigit() else None
    try:
        return int(text)
    except ValueError:
        return None


_SGLANG_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)")
_SI = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_IEC = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def sglang_human_readable_int(text: str) -> int | None:
    """SGLang's `human_readable_int` (sglang/srt/utils/common.py of 0.5.23), which is not vLLM's: SI suffixes are
    decimal (`1M` -> 1000000, `25.6k` -> 25600), IEC suffixes binary (`1Ki` -> 1024); None where SGLang raises (a
    decimal with an IEC suffix, `1K`, not a number)."""
    text = text.strip()
    match = _SGLANG_HUMAN_INT.fullmatch(text)
    if match:
        number, suffix = match.groups()
        if suffix in _IEC:
            return int(number) * _IEC[suffix] if number.isdigit() else None
        return int(Decimal(number) * _SI[suffix])
    try:
        return int(text)
    except ValueError:
        return None


def _config_words(config: JSONValue, false_negated: bool) -> list[str]:
    """The flags of a vLLM `--config` YAML file, as `load_config_file` makes them."""
    if not isinstance(config, dict):
        return []
    words: list[str] = []
    for key, value in config.items():
        if isinstance(value, bool):
            # 0.34.0 adds `--no-key` for false only where the parser has one (the flag table decides that here);
            # 0.22.0 leaves a false key out.
            if value or false_negated:
                words.append(f"--{key}" if value else f"--no-{key}")
        elif isinstance(value, list):
            if value:
                words += [f"--{key}", *(str(item) for item in value)]
        elif isinstance(value, dict):
            words += [f"--{key}", json.dumps(value)]
        else:
            words += [f"--{key}", str(value)]
    return words
