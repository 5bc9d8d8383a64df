"""Write the flag table of a serving engine's own command-line parser, as JSON.

Run it with an interpreter that can import the engine (the unpacked wheel and the few light packages its
argument modules import on the path; no GPU is needed):

    PYTHONPATH=UNPACKED_WHEEL:LIGHT_DEPS python tools/engine_flag_table.py sglang > table.json

A release whose argument module cannot be imported on a CPU machine (SGLang 0.5.9 imports vision model
configurations that need a CUDA build of torchvision) is read from its source instead, without importing it:

    python tools/engine_flag_table.py sglang --from-source UNPACKED_WHEEL > table.json

and the restoring changes driftcheck proposes are run through the real parser with

    PYTHONPATH=... python tools/engine_flag_table.py vllm --check CASES.json

and vLLM command lines are read by its real parser (`FlexibleArgumentParser.parse_args`: dotted options,
`-O3`, underscores) and compared with driftcheck's reading of them with

    PYTHONPATH=... python tools/engine_flag_table.py vllm --read CASES.json

which reads every `parser.add_argument(...)` call of `ServerArgs.add_cli_args` in
sglang/srt/server_args.py (option strings, action, type, nargs, choices, and the default from the
`ServerArgs` dataclass). A vLLM that has no `VLLM_TARGET_DEVICE` (before 0.2x) finds its CPU platform
through a platform plugin on the path (an entry point `vllm.platform_plugins` returning
"vllm.platforms.cpu.CpuPlatform").

It builds the parser the engine's launcher builds (SGLang: `ServerArgs.add_cli_args` on an
`argparse.ArgumentParser`; vLLM: `AsyncEngineArgs.add_cli_args` on its `FlexibleArgumentParser`) and
writes, for every argument: its destination field, its option strings, the kind of action, how many
values it takes, what the value parses to, its choices and its default. driftcheck reads these tables
(driftcheck/serving/engine_flags/) to turn a launch command line into fields and a field's value back
into the flags that set it; the tests check them against the real parser again.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import enum
import importlib.metadata
import inspect
import json
import os
import re
import sys
from collections.abc import Callable

_ACTION_KINDS = {
    "_StoreAction": "store", "_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const", "BooleanOptionalAction": "boolean_optional", "_AppendAction": "append",
    "_CountAction": "count", "_HelpAction": "help", "_VersionAction": "version",
}


def sglang_parser() -> argparse.ArgumentParser:
    """SGLang's launcher parser (sglang.srt.server_args.prepare_server_args builds the same)."""
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return parser


def vllm_parser() -> argparse.ArgumentParser:
    """vLLM's engine parser (`vllm serve` adds its frontend's arguments on top of these)."""
    # Without a GPU vLLM cannot infer its platform and refuses to build the parser; on the CPU platform it
    # builds the same arguments (a few defaults are the platform's, and the table says which platform).
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser: argparse.ArgumentParser = FlexibleArgumentParser()
    return AsyncEngineArgs.add_cli_args(parser)


def action_kind(action: argparse.Action) -> str:
    """store, store_true, store_false, boolean_optional, ... (the class name when none of those)."""
    name = type(action).__name__
    if name in _ACTION_KINDS:
        return _ACTION_KINDS[name]
    for base in type(action).__mro__[1:]:
        if base.__name__ in _ACTION_KINDS:
            return _ACTION_KINDS[base.__name__]
    # An engine's own action (a deprecated spelling that warns) that takes no value stores its constant.
    return "store_const" if action.nargs == 0 else name


def value_kind(convert: Callable[[str], object] | None) -> str:
    """What the action's type makes of a value: json (a JSON object or config), list, int (human_int where `1k`
    is 1000, human_int_or_auto where `auto` is also -1, human_int_iec where `1Ki` is 1024), float or str, found
    by trying it on sample strings (a JSON type also takes "3", so the object is tried first)."""
    if convert is None:
        return "str"
    results: dict[str, object] = {}
    for text in ("{}", "3", "0.5", "1k", "1Ki", "auto"):
        try:
            converted = convert(text)
        except Exception:  # a type function rejects what it does not take; any failure says "not this kind"
            continue
        # An enum member (vLLM's optimization levels) stands for its value.
        results[text] = converted if isinstance(converted, (dict, list)) or text == "{}" else plain(converted)
    if "{}" in results and not isinstance(results["{}"], (str, list)):
        return "json"
    if isinstance(results.get("3"), list):
        return "list"  # text the type splits into a list itself (vLLM's --device-ids)
    if isinstance(results.get("3"), int) and not isinstance(results.get("3"), bool):
        # vLLM's human_readable_int (`--max-num-batched-tokens 8k`), and its `_or_auto` (`auto` is -1)
        if results.get("1k") == 1000:
            # SGLang's human_readable_int has IEC suffixes (`1Ki`) and a decimal `M`; vLLM's has neither
            if results.get("1Ki") == 1024:
                return "human_int_iec"
            return "human_int_or_auto" if results.get("auto") == -1 else "human_int"
        return "int"
    if isinstance(results.get("0.5"), float):
        return "float"
    return "str"


def plain(value: object) -> object:
    """A default as JSON holds it (enums by value, other objects by their text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        # a set's order changes from run to run (string hashing is salted): the table keeps it sorted
        return sorted((plain(item) for item in value), key=str)
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    inner = getattr(value, "value", None)
    return plain(inner) if inner is not None and inner is not value else str(value)


# `add_argument("--flag", ["-f",] [dest=...,] **x_kwargs["name"]` or `**{**x_kwargs["name"], ...}`
_VLLM_KWARGS = re.compile(r'add_argument\(\s*"(--[\w-]+)"(?:,\s*"-[\w-]+")*,\s*(?:dest="\w+",\s*)?'
                          r'\*\*(?:\{\s*\*\*)?(\w+)_kwargs\["(\w+)"\]')


def vllm_config_paths(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Field -> where vLLM's resolved configuration holds it ("cache_config.cache_dtype" for --kv-cache-dtype),
    read from `add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])` in vllm/engine/arg_utils.py:
    the keyword set of `<name>_kwargs` comes from the `<Name>Config` class, the `<name>_config` of VllmConfig."""
    import vllm.engine.arg_utils as arg_utils

    with open(inspect.getsourcefile(arg_utils) or "", encoding="utf-8") as handle:
        source = handle.read()
    by_option = {option: action.dest for action in parser._actions for option in action.option_strings}
    paths: dict[str, str] = {}
    for flag, group, name in _VLLM_KWARGS.findall(source):
        if flag in by_option:
            paths[by_option[flag]] = f"{group}_config.{name}"
    return paths


def required_argv(parser: argparse.ArgumentParser) -> list[str]:
    """The arguments a parse needs before any other (SGLang requires --model-path)."""
    argv: list[str] = []
    for action in parser._actions:
        if action.required and action.option_strings:
            argv += [action.option_strings[0], "model"]
    return argv


def switch_value(parser: argparse.ArgumentParser, action: argparse.Action, option: str) -> object:
    """What the real parser stores in the field when the switch `option` is given alone (a negated
    `--no-x` or `--disable-x` sets False, whatever the action's class)."""
    namespace, _ = parser.parse_known_args(required_argv(parser) + [option])
    return plain(getattr(namespace, action.dest))


def plain_default(value: object) -> object:
    """A default the table can hold: JSON scalars and lists; a config object's text is not kept (None)."""
    if value is argparse.SUPPRESS:
        return None
    kept = plain(value)
    return None if isinstance(kept, str) and not isinstance(value, str) and getattr(value, "value", None) is None \
        else kept


def table(engine: str) -> dict[str, object]:
    """The flag table of `engine` as installed: {engine, version, allow_abbrev, fields: dest -> entry}."""
    parser = sglang_parser() if engine == "sglang" else vllm_parser()
    fields: dict[str, object] = {}
    for action in parser._actions:
        kind = action_kind(action)
        if kind in ("help", "version") or action.dest == argparse.SUPPRESS:
            continue
        # vLLM 0.34's EnableDisableAction keeps `--no-enable-x` registered but out of `option_strings` (hidden from
        # help); the parser still takes it (a `--config` file's `enable-x: false` becomes it), so the table has it.
        options = list(action.option_strings) + [option for option, owner in parser._option_string_actions.items()
                                                 if owner is action and option not in action.option_strings]
        entry = {"flags": options, "action": kind,
                 "nargs": action.nargs, "value": value_kind(action.type) if kind in ("store", "append") else None,
                 "choices": plain(action.choices) if isinstance(action.choices, (set, frozenset)) else
                 [plain(choice) for choice in action.choices] if action.choices is not None else None,
                 "default": plain_default(action.default),
                 "const": plain(action.const), "required": action.required}
        if action.nargs == 0:
            entry["sets"] = {option: switch_value(parser, action, option) for option in options}
        if isinstance(action.default, enum.IntEnum) and kind == "store":
            # vLLM's --optimization-level parses to text ("3"); its pydantic VllmConfig turns that into the
            # IntEnum member (OptimizationLevel.O3) and refuses text that is none of them.
            entry["resolves"] = sorted(member.value for member in type(action.default))
        previous = fields.get(action.dest)
        if isinstance(previous, dict):
            # Two actions set one field (a deprecated spelling beside the current one): both are kept.
            previous.setdefault("also", []).append(entry)
        else:
            fields[action.dest] = entry
    if engine == "vllm":
        for dest, path in vllm_config_paths(parser).items():
            entry = fields.get(dest)
            if isinstance(entry, dict):
                entry["config_path"] = path
    extra: dict[str, object] = {}
    if engine == "vllm":
        # `--config FILE`: a `key: false` becomes `--no-key` in 0.34.0 (where the parser has one); 0.22.0 drops it.
        loader = inspect.getsource(type(parser).load_config_file)  # type: ignore[attr-defined]
        extra["config_false_negated"] = '"--no-' in loader
    return {"engine": engine, "version": importlib.metadata.version(engine),
            "parser": f"{type(parser).__module__}.{type(parser).__name__}",
            "allow_abbrev": parser.allow_abbrev, **extra,
            "platform": os.environ.get("VLLM_TARGET_DEVICE") if engine == "vllm" else None,
            "fields": fields}


_SOURCE_TYPES = {"int": "int", "float": "float", "str": "str", "json.loads": "json", "nullable_str": "str"}
_SOURCE_ACTIONS = {"store_true": "store_true", "store_false": "store_false", "store_const": "store_const",
                   "append": "append", "count": "count"}


def _dotted(node: ast.expr) -> str:
    """`json.loads` of an ast.Attribute, `int` of an ast.Name, "" otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _module_constants(tree: ast.Module) -> dict[str, object]:
    """Module-level NAME = literal (lists, sets, tuples of literals, `[*OTHER, "x"]`) of the source."""
    constants: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = _literal(node.value, constants)
            except ValueError:
                continue
    return constants


def _literal(node: ast.expr, names: dict[str, object]) -> object:
    """A literal expression, with names of `names` and starred lists resolved (ValueError otherwise)."""
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items: list[object] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                inner = _literal(element.value, names)
                items.extend(inner if isinstance(inner, (list, tuple, set)) else [inner])
            else:
                items.append(_literal(element, names))
        return sorted(items, key=str) if isinstance(node, ast.Set) else items
    return ast.literal_eval(node)


def _class_defaults(tree: ast.Module, name: str, names: dict[str, object]) -> dict[str, object]:
    """The literal defaults of the dataclass `name` (a `field(default_factory=...)` or an expression: None)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            defaults: dict[str, object] = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    try:
                        defaults[item.target.id] = _literal(item.value, names)
                    except ValueError:
                        defaults[item.target.id] = None
            return defaults
    return {}


def _source_entry(call: ast.Call, names: dict[str, object],
                  defaults: dict[str, object]) -> tuple[str, dict[str, object]]:
    """(dest, entry) of one `parser.add_argument(...)` call read from source."""
    flags = [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    action_node = keywords.get("action")
    action_text = (action_node.value if isinstance(action_node, ast.Constant) else
                   _dotted(action_node) if action_node else "store")
    action = _SOURCE_ACTIONS.get(str(action_text), "store" if action_text == "store" else str(action_text))
    if action.endswith("BooleanOptionalAction"):
        action = "boolean_optional"
    dest_node = keywords.get("dest")
    long_flag = next((flag for flag in flags if flag.startswith("--")), flags[0])
    dest = dest_node.value if isinstance(dest_node, ast.Constant) else long_flag.lstrip("-").replace("-", "_")

    def evaluated(key: str) -> object:
        node = keywords.get(key)
        if node is None:
            return None
        if isinstance(node, ast.Attribute) and _dotted(node.value) == "ServerArgs":
            return defaults.get(node.attr)
        try:
            return _literal(node, names)
        except ValueError:
            return None

    type_name = _dotted(keywords["type"]) if "type" in keywords else ""
    nargs = evaluated("nargs")
    default = evaluated("default")
    if action == "store_true" and "default" not in keywords:
        default = False
    if action == "store_false" and "default" not in keywords:
        default = True
    entry: dict[str, object] = {
        "flags": flags, "action": action, "nargs": 0 if action in ("store_true", "store_false") else nargs,
        "value": _SOURCE_TYPES.get(type_name, "str") if action in ("store", "append") else None,
        "choices": evaluated("choices"), "default": default,
        "const": True if action == "store_true" else False if action == "store_false" else evaluated("const"),
        "required": evaluated("required") is True}
    if action in ("store_true", "store_false"):
        entry["sets"] = {flag: entry["const"] for flag in flags}
    return dest, entry


def _renames(tree: ast.Module) -> dict[str, str]:
    """`args.tp_size = args.tensor_parallel_size` in `ServerArgs.from_cli_args`: parser dest -> field."""
    renames: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "from_cli_args":
            for statement in node.body:
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                        isinstance(target := statement.targets[0], ast.Attribute) and \
                        isinstance(statement.value, ast.Attribute):
                    renames[statement.value.attr] = target.attr
    return renames


def table_from_source(root: str) -> dict[str, object]:
    """The flag table of the SGLang unpacked at `root`, read from its server_args.py without importing it."""
    path = os.path.join(root, "sglang", "srt", "server_args.py")
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    names = _module_constants(tree)
    defaults = _class_defaults(tree, "ServerArgs", names)
    fields: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "add_cli_args":
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                        call.func.attr == "add_argument" and call.args:
                    dest, entry = _source_entry(call, names, defaults)
                    previous = fields.get(dest)
                    if isinstance(previous, dict):
                        previous.setdefault("also", []).append(entry)
                    else:
                        fields[dest] = entry
    # The launcher copies some parser fields to the names the server reports (tensor_parallel_size -> tp_size).
    renames = _renames(tree)
    fields = {renames.get(dest, dest): entry for dest, entry in fields.items()}
    version = _dist_version(root, "sglang")
    return {"engine": "sglang", "version": version, "parser": "read from sglang/srt/server_args.py (ast)",
            "allow_abbrev": True, "platform": None, "fields": fields}


def _dist_version(root: str, name: str) -> str:
    """The version in the wheel's `<name>-<version>.dist-info` folder name."""
    for entry in sorted(os.listdir(root)):
        if entry.startswith(f"{name}-") and entry.endswith(".dist-info"):
            return entry[len(name) + 1:-len(".dist-info")]
    raise SystemExit(f"no {name} dist-info under {root}")


def resolved(parser: argparse.ArgumentParser, dest: str, value: object) -> object:
    """A parsed value as the engine's configuration holds it: text of an IntEnum field (vLLM's
    --optimization-level) validated by pydantic as VllmConfig validates it, as the member's value."""
    action = next((action for action in parser._actions if action.dest == dest), None)
    if action is not None and isinstance(action.default, enum.IntEnum) and value is not None:
        import pydantic

        return plain(pydantic.TypeAdapter(type(action.default)).validate_python(value))
    return plain(value)


def read(cases_path: str) -> list[dict[str, object]]:
    """Run vLLM command lines through its real `FlexibleArgumentParser.parse_args` (dotted options, -O, config
    rewriting included; a case's `config` mapping is the file `config.yaml` its words may name with `--config`,
    in the working directory): each case {words, fields} gives driftcheck's reading of the words; the cases whose
    reading differs from what the parser set are returned, with the parser's values. Every field the parser
    set to other than its default must be in the reading, with the same value: a plain value as it is, an
    engine-typed value (a JSON or dataclass configuration) equal to what the parser's own type makes of the
    reading's JSON."""
    parser = vllm_parser()
    by_dest = {action.dest: action for action in parser._actions}
    with open(cases_path, encoding="utf-8") as handle:
        cases = json.load(handle)
    failures: list[dict[str, object]] = []
    for case in cases:
        if case.get("config") is not None:
            # a `--config config.yaml` of the words: the case's mapping, written where the parser reads it
            with open("config.yaml", "w", encoding="utf-8") as handle:
                json.dump(case["config"], handle)  # JSON is YAML
        try:
            namespace = parser.parse_args(list(case["words"]))
        except (SystemExit, Exception) as exc:  # the engine refuses the line (argparse exits; a type raises)
            if case["fields"]:  # a line the engine refuses starts no server: the reading must set nothing
                failures.append({**case, "got": f"refused: {type(exc).__name__}"})
            continue
        wanted: dict[str, object] = case["fields"] or {}
        real = {dest: value for dest, value in vars(namespace).items() if value != parser.get_default(dest)}
        differing = {}
        for dest in sorted(set(real) | set(wanted)):
            value = real.get(dest, parser.get_default(dest))
            mine = wanted.get(dest)
            try:
                held = resolved(parser, dest, value)
            except Exception:  # pydantic refuses it (`-O.mode=3`): the engine does not start, nothing is set
                if dest in wanted:
                    differing[dest] = {"parser": f"{value!r}, refused by the configuration", "ours": mine}
                continue
            try:
                same = by_dest[dest].type(json.dumps(mine)) == value if isinstance(mine, dict) else held == mine
            except Exception as exc:  # our JSON refused by the engine's own type: a difference
                same, mine = False, f"{mine!r}: {type(exc).__name__}: {exc}"
            if not same:
                differing[dest] = {"parser": str(value), "ours": mine}
        if differing:
            failures.append({**case, "got": differing})
    return failures


def check(engine: str, cases_path: str) -> list[dict[str, object]]:
    """Run restoring changes through the engine's real parser: each case {field, value, add, drop} must parse
    (the flags added) and leave the field at `value`. Returns the cases that do not, with what the parser did."""
    parser = sglang_parser() if engine == "sglang" else vllm_parser()
    with open(cases_path, encoding="utf-8") as handle:
        cases = json.load(handle)
    failures: list[dict[str, object]] = []
    for case in cases:
        try:
            namespace, unknown = parser.parse_known_args(required_argv(parser) + list(case["add"]))
        except SystemExit:
            failures.append({**case, "got": "refused by the parser"})
            continue
        # A field whose default is SUPPRESS is absent when not given: the engine's "not set" (None here).
        got = resolved(parser, case["field"], getattr(namespace, case["field"], None))
        if unknown or got != case["value"]:
            failures.append({**case, "got": got, "unknown": unknown})
    return failures


def main(argv: list[str]) -> int:
    """Print the table of the engine named in argv[0] (sglang or vllm), built or read from source; with
    `--check CASES.json`, print the restoring changes the real parser does not accept as JSON; with `--read
    CASES.json`, the vLLM command lines whose reading differs from what its real parser sets."""
    if len(argv) == 3 and (argv[1] == "--check" or argv[1] == "--read" and argv[0] == "vllm"):
        with contextlib.redirect_stdout(sys.stderr):
            failures = check(argv[0], argv[2]) if argv[1] == "--check" else read(argv[2])
        print(json.dumps(failures, indent=1))
        return 1 if failures else 0
    if not argv or argv[0] not in ("sglang", "vllm") or len(argv) not in (1, 3) or \
            len(argv) == 3 and (argv[0] != "sglang" or argv[1] != "--from-source"):
        print("usage: engine_flag_table.py sglang|vllm  |  engine_flag_table.py sglang --from-source DIR  |  "
              "engine_flag_table.py sglang|vllm --check CASES.json  |  engine_flag_table.py vllm --read CASES.json",
              file=sys.stderr)
        return 2
    # vLLM's logger writes to the standard output it finds at import: point that at stderr, keep stdout JSON.
    out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        result = table(argv[0]) if len(argv) == 1 else table_from_source(argv[2])
    json.dump(result, out, indent=1, sort_keys=True)
    out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
