"""The command-line flags of SGLang and vLLM releases, as their own parsers define them.

Each table under `engine_flags/` was written by tools/engine_flag_table.py from a release's wheel (its real
parser, or for a release whose argument module cannot be imported on a CPU machine its source): for every
field, the option strings that set it, the kind of action, the value it parses to, its choices, its default,
and for a switch what each option string stores. Two uses, both pure:

- a launch command line becomes fields (`-tp 8` and `--tensor-parallel-size=8` are both
  `tensor_parallel_size: 8`), by an argparse parser rebuilt from the table;
- a field's value becomes the flags that set it on the release B runs (`restoring`), so a fix is a command
  that release accepts: SGLang 0.5.23 has `--cuda-graph-max-bs-decode`, not `--cuda-graph-max-bs`.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import NoReturn

from driftcheck.serving.launch import human_readable_int, sglang_human_readable_int
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

_TABLES = ("sglang-0.5.9", "sglang-0.5.23", "vllm-0.22.0", "vllm-0.34.0")


def _human_int(text: str) -> int:
    """vLLM's `human_readable_int` as a value type: `8k` -> 8000; what it refuses raises ValueError."""
    number = human_readable_int(text)
    if number is None:
        raise ValueError(f"not a human-readable integer: {text!r}")
    return number


def _human_int_or_auto(text: str) -> int:
    """vLLM's `human_readable_int_or_auto`: `auto` (any case) and -1 are -1, else a human-readable integer."""
    return -1 if text.strip() == "-1" or text.strip().lower() == "auto" else _human_int(text)


def _human_int_iec(text: str) -> int:
    """SGLang's `human_readable_int` as a value type: `1M` -> 1000000, `1Ki` -> 1024."""
    number = sglang_human_readable_int(text)
    if number is None:
        raise ValueError(f"not a human-readable integer: {text!r}")
    return number


_VALUE_TYPES: dict[str, Callable[[str], object]] = {"int": int, "float": float, "json": json.loads,
                                                    "human_int": _human_int, "human_int_or_auto": _human_int_or_auto,
                                                    "human_int_iec": _human_int_iec}


@dataclass(frozen=True)
class FlagSpec:
    """How one field is set on the command line of one release."""

    field: str
    flags: tuple[str, ...]
    action: str            # store, store_true, store_false, store_const, boolean_optional, append, count
    nargs: JSONValue       # None (one value), "+", "*", "?", or a count
    value: str | None      # int, human_int (vLLM's `8k`), human_int_or_auto, human_int_iec (SGLang's `1M`, `1Ki`),
    #                        float, json, list (text its type
    #                        splits) or str: what a given value parses to
    choices: tuple[JSONValue, ...] | None
    default: JSONValue
    sets: dict[str, JSONValue]  # a switch: what each option string stores
    required: bool = False  # the launcher refuses to start without it (SGLang's --model-path)
    config_path: str | None = None  # vLLM: where its resolved configuration holds it ("cache_config.cache_dtype")
    # vLLM: the integers its configuration turns the parsed text into (the members of an IntEnum such as
    # OptimizationLevel: the parser stores "3", VllmConfig holds 3 and refuses "7" or ".mode=3").
    resolves: tuple[int, ...] | None = None

    @property
    def flag(self) -> str:
        """The option string a fix writes: the one named after the field (`--tp-size` for tp_size), else the
        first long one."""
        named = "--" + self.field.replace("_", "-")
        if named in self.flags:
            return named
        return next((flag for flag in self.flags if flag.startswith("--")), self.flags[0])

    @property
    def takes_value(self) -> bool:
        """Whether the flag is followed by a value (not a switch)."""
        return self.action in ("store", "append")


@dataclass(frozen=True)
class Restoration:
    """What to change on B's command line so the field gets A's value: flags to add (with their values) and
    flags to drop. `text` says it as the fix does: "with --tp-size 4", "without --disable-decode-cuda-graph"."""

    field: str
    add: tuple[str, ...]
    drop: tuple[str, ...]

    @property
    def text(self) -> str:
        """The restoring change in words ("with --x 1", "without --y", or both)."""
        parts = []
        if self.add:
            parts.append("with " + " ".join(_shell_word(word) for word in self.add))
        if self.drop:
            parts.append("without " + " / ".join(self.drop))
        return " and ".join(parts)


@dataclass(frozen=True)
class FlagTable:
    """The flags of one engine release."""

    engine: str
    version: str
    source: str
    allow_abbrev: bool
    fields: dict[str, FlagSpec]
    # vLLM's `--config FILE`: whether a `key: false` becomes `--no-key` (0.34.0) or is dropped (0.22.0)
    config_false_negated: bool = True

    def spec(self, field: str) -> FlagSpec | None:
        """The flags that set `field`, or None when this release has no flag for it."""
        return self.fields.get(field)

    def field_at(self, config_path: str) -> str | None:
        """The field a vLLM configuration path holds ("cache_config.cache_dtype" -> kv_cache_dtype)."""
        return self._by_config_path.get(config_path)

    @cached_property
    def _by_config_path(self) -> dict[str, str]:
        return {spec.config_path: spec.field for spec in self.fields.values() if spec.config_path}

    def field_of_flag(self, option: str) -> str | None:
        """The field an option string sets (`-tp` -> tensor_parallel_size), None when the release has none."""
        return self._by_option.get(option)

    @cached_property
    def _by_option(self) -> dict[str, str]:
        return {option: spec.field for spec in self.fields.values() for option in spec.flags}

    def parser(self) -> argparse.ArgumentParser:
        """An argparse parser with this release's flags: the same option strings, actions, value types and
        choices (abbreviations as the engine allows them), to read a command line the way the engine does.
        What the engine would refuse raises ValueError with argparse's message ("ambiguous option: ...")."""
        parser = _RaisingParser(add_help=False, allow_abbrev=self.allow_abbrev, exit_on_error=False)
        for spec in self.fields.values():
            _add(parser, spec)
        return parser

    def fields_of(self, argv: Sequence[str]) -> JSONObject:
        """The fields a command line's flags set, with their values as the engine parses them; flags this
        release does not know, positional words and values that do not parse are left out."""
        parser = self.parser()
        known: JSONObject = {}
        words = list(argv)
        for index, word in enumerate(words):
            field = self._field_at(word)
            if field is None:
                continue
            end = index + 1
            while end < len(words) and not _is_option(words[end]):
                end += 1
            try:
                namespace, _ = parser.parse_known_args(words[index:end])
            except (argparse.ArgumentError, ValueError, TypeError):
                continue  # a value the engine would refuse sets nothing
            known[field] = _plain(getattr(namespace, field, None))
        return known

    def _field_at(self, word: str) -> str | None:
        """The field the option `word` (`--x`, `--x=1`, `-tp`) sets, or None for a value or unknown flag."""
        if not _is_option(word):
            return None
        option = word.partition("=")[0]
        field = self.field_of_flag(option)
        if field is not None or not self.allow_abbrev or not option.startswith("--"):
            return field
        # argparse takes a unique prefix of a long option (`--tp` for `--tp-size`); an ambiguous one is refused.
        fields = {self._by_option[known] for known in self._by_option if known.startswith(option)}
        return fields.pop() if len(fields) == 1 else None

    def restoring(self, field: str, value: JSONValue) -> Restoration | None:
        """The flags that give `field` the value `value` on this release, or None when no flag can (the
        release has no flag for it, or the value is not one the flag takes)."""
        spec = self.spec(field)
        if spec is None:
            return None
        if spec.sets:
            return _restoring_switch(spec, value)
        if not spec.takes_value or spec.value == "list":
            return None  # a list the flag's own type splits from text: how it splits is not in the table
        if value is None:
            if spec.required:
                return None  # it cannot be left out
            # Left out, the flag keeps its default: the way to say "not given" (a flag takes no `none`).
            return Restoration(field, (), (spec.flag,)) if spec.default is None else None
        words = _value_words(spec, value)
        if words is None or _parsed(spec, words) != value:
            return None  # no spelling of this flag gives that value (False for a flag that takes text)
        return Restoration(field, (spec.flag, *words), ())


class _RaisingParser(argparse.ArgumentParser):
    """A parser that raises what argparse would print and exit with."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _converter(spec: FlagSpec) -> Callable[[str], object]:
    """The flag's value type, followed by what the engine's configuration makes of it (`resolves`)."""
    convert = _VALUE_TYPES.get(spec.value or "", str)
    members = spec.resolves
    if members is None:
        return convert

    def resolved(text: str) -> int:
        number = int(str(convert(text)))
        if number not in members:
            raise ValueError(f"{number} is none of {list(members)}")
        return number

    return resolved


def _parsed(spec: FlagSpec, words: list[str]) -> JSONValue:
    """What the flag's value type (and the engine's configuration) makes of the words that follow it."""
    convert = _converter(spec)
    try:
        values = [_plain(convert(word)) for word in words]
    except ValueError:
        return None
    return values if spec.nargs in ("+", "*") else values[0]


def _restoring_switch(spec: FlagSpec, value: JSONValue) -> Restoration | None:
    """A switch: the option that stores `value`, or none of them when that is the default."""
    option = next((option for option, stored in spec.sets.items() if stored == value and option.startswith("--")),
                  None)
    if option is not None and value != spec.default:
        return Restoration(spec.field, (option,), ())
    if value == spec.default:
        return Restoration(spec.field, (), tuple(o for o, stored in spec.sets.items() if stored != value))
    return None


def _value_words(spec: FlagSpec, value: JSONValue) -> list[str] | None:
    """The words that follow the flag for `value`: one, or one per item of a list flag."""
    if spec.value == "json":
        return [json.dumps(value, separators=(",", ":"), sort_keys=True)]
    if spec.nargs in ("+", "*"):
        if not isinstance(value, list) or not value:
            return None
        return [_word(item) for item in value]
    if isinstance(value, (list, dict)):
        return None
    word = _word(value)
    if spec.choices is not None and word not in [str(choice) for choice in spec.choices]:
        return None
    return [word]


def _word(value: JSONValue) -> str:
    """A scalar as the command line spells it (JSON true/false as Python's parsers read them)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


def _shell_word(word: str) -> str:
    """A word quoted for a shell when it needs it (a JSON object)."""
    return shlex.quote(word)


def _is_option(word: str) -> bool:
    """`--flag`, `--flag=value` or a short `-tp`, not a negative number."""
    return word.startswith("-") and len(word) > 1 and not word[1:2].isdigit() and word != "--"


def _add(parser: argparse.ArgumentParser, spec: FlagSpec) -> None:
    """Add one field's flags to a rebuilt parser."""
    if spec.sets:
        for option, stored in spec.sets.items():
            parser.add_argument(option, dest=spec.field, action="store_const", const=stored,
                                default=argparse.SUPPRESS)
        return
    # Only the flags given are read: a default is never parsed (some are text no value type takes).
    nargs = spec.nargs if isinstance(spec.nargs, (str, int)) else None
    choices = list(spec.choices) if spec.choices is not None and spec.value != "json" else None
    parser.add_argument(*spec.flags, action="append" if spec.action == "append" else "store", dest=spec.field,
                        default=argparse.SUPPRESS, type=_converter(spec), nargs=nargs,
                        choices=choices)


def _plain(value: object) -> JSONValue:
    """A parsed value as JSON holds it."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return str(value)


def _spec(field: str, entry: JSONObject) -> FlagSpec:
    flags = entry.get("flags")
    choices = entry.get("choices")
    sets = entry.get("sets")
    resolves = entry.get("resolves")
    return FlagSpec(field=field, flags=tuple(str(flag) for flag in flags) if isinstance(flags, list) else (),
                    action=str(entry.get("action")), nargs=entry.get("nargs"),
                    value=str(entry["value"]) if entry.get("value") is not None else None,
                    choices=tuple(choices) if isinstance(choices, list) else None, default=entry.get("default"),
                    sets=dict(sets) if isinstance(sets, dict) else {},
                    required=entry.get("required") is True,
                    config_path=str(entry["config_path"]) if entry.get("config_path") else None,
                    resolves=tuple(int(member) for member in resolves if isinstance(member, int))
                    if isinstance(resolves, list) else None)


@cache
def load_table(name: str) -> FlagTable:
    """The shipped table `name` ("sglang-0.5.23")."""
    text = resources.files("driftcheck.serving").joinpath("engine_flags").joinpath(f"{name}.json").read_text("utf-8")
    raw = json.loads(text)
    fields = raw.get("fields") if isinstance(raw.get("fields"), dict) else {}
    return FlagTable(engine=str(raw["engine"]), version=str(raw["version"]), source=str(raw.get("parser")),
                     allow_abbrev=bool(raw.get("allow_abbrev", True)),
                     config_false_negated=raw.get("config_false_negated") is not False,
                     fields={field: _spec(field, entry) for field, entry in fields.items() if isinstance(entry, dict)})


def shipped_versions(engine: str) -> list[str]:
    """The releases of `engine` a table is shipped for, oldest first."""
    versions = [name.partition("-")[2] for name in _TABLES if name.partition("-")[0] == engine]
    return sorted(versions, key=_release_key)


def table_for(engine: JSONValue, version: JSONValue) -> FlagTable | None:
    """The table for the release `version` of `engine`: that release's, else the newest shipped release not
    newer than it (flags rarely disappear within a few releases), else the oldest shipped; None for an engine
    with no table (or no version known and none shipped)."""
    if not isinstance(engine, str):
        return None
    versions = shipped_versions(engine)
    if not versions:
        return None
    if not isinstance(version, str):
        return load_table(f"{engine}-{versions[-1]}")
    key = _release_key(version)
    older = [shipped for shipped in versions if _release_key(shipped) <= key]
    return load_table(f"{engine}-{older[-1] if older else versions[0]}")


def _release_key(version: str) -> tuple[int, ...]:
    """0.5.23 -> (0, 5, 23); a suffix (`.post1`, `+cu128`, `rc1`) is ignored for the ordering."""
    numbers = []
    for part in version.split("+")[0].split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
    return tuple(numbers)


__all__ = ["FlagSpec", "FlagTable", "Restoration", "load_table", "shipped_versions", "table_for"]
