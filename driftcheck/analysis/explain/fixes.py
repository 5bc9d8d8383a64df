"""Titles and fixes: the template variables of a rule, computed against any reference.

A fix puts a fact back as the *reference* has it: A of a diff, or, for a fleet, a host that holds the
majority value. Commands are computed from the reference's record (`nvidia-smi -pl 700`, `pip install
torch==2.7.0`), never a blank in angle brackets for the user to fill in.
"""

from __future__ import annotations

import re
import shlex
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.lookup import (
    dist_of,
    gpu_label,
    gpu_record,
    lookup,
    mapping,
    number,
    package_record,
    package_version,
    probe_data,
)
from driftcheck.analysis.explain.package_source import install_command, interpreter_of
from driftcheck.analysis.explain.relevance import RelevanceTable
from driftcheck.analysis.explain.server_fixes import restore_phrase, setting_name
from driftcheck.analysis.explain.values import human_field, show_at, show_value
from driftcheck.analysis.explain.versions import is_pinnable
from driftcheck.analysis.targets import reference_target
from driftcheck.snapshot.model import Snapshot


@dataclass(frozen=True)
class Sides:
    """The two snapshots a fix is computed between: put `current` back as `reference` has it."""

    reference: Snapshot
    current: Snapshot
    # The two as taken, before a diff cut them to the facts both hold (a pasted report on one side): B's
    # interpreter, which a report of A cannot hold, is read from these.
    whole: tuple[Snapshot, Snapshot] | None = None

    @cached_property
    def fixed_vars(self) -> dict[str, str]:
        """The template variables read from the two snapshots alone (huge page pools, B's pip, A's interpreter):
        the same for every cause of one explain, so read once, not once per cause of a large diff."""
        python = target_python(self)
        python_a = probe_data(self.reference, "python").get("executable")
        return {"hugepages_fix": _hugepages_fix(self),
                "pip": f"{shlex.quote(python)} -m pip" if python else "the pip of the interpreter B runs",
                "python_a": show_value(python_a) if python_a else "the interpreter of A"}


class Vars(dict[str, str]):
    """Template variables; an unknown one renders as "?" rather than failing the whole title."""

    def __missing__(self, key: str) -> str:
        return "?"


def render(template: str, values: Vars) -> str:
    """`template` with `values` filled in (the template itself when it is malformed)."""
    try:
        return template.format_map(values)
    except (ValueError, IndexError, AttributeError):
        return template


# Variables this module builds as whole commands or sentences, quoting and checking what goes into them, and
# the shell lists `all_<capture>_sh`: a fix template puts them in as they are. Every other variable is a value
# read from a snapshot, which may be a stranger's: it goes into a command only as one plain shell word.
BUILT = frozenset({"locked_fix", "ac_fix", "pl_fix", "mig_fix", "numactl", "hugepages_fix", "pin_a", "conda_pin_a",
                   "pip_a", "pip", "pip_uninstall", "reinstall_a", "binary_change", "modified_change", "driver_fix",
                   "torch_pip_a", "torch_reinstall_a", "dist_pin", "nccl_fix", "cudnn_fix", "cublas_fix",
                   "torch_pin_a", "module_changes", "module_fix", "iface_fix", "python_a", "conf_change", "conf_fix",
                   "restore_env", "before_sh", "after_sh", "gpus", "default_why", "fact", "subject",
                   # the restoring flags of a server setting, spelled by the release's flag table, values quoted
                   "restore",
                   # the command that takes a probe again as the snapshots took it, its words quoted
                   "retake"})
# A word a shell reads as itself: what `shlex.quote` leaves unquoted, not starting with `-` (an option).
_PLAIN_WORD = re.compile(r"(?!-(?![\d.]))[\w@%+=:,./-]+", re.ASCII)


# No setting a fix restores holds a value this long (a path is at most 4,096 bytes on Linux).
LONGEST_WORD = 4096


def plain_word(value: str) -> bool:
    """Whether `value` can stand in a command as one word that means only itself (no quoting, no expansion,
    no option, no longer than `LONGEST_WORD`): `1`, `performance`, `0000:19:00.0`, `madvise`, `-1`."""
    return len(value) <= LONGEST_WORD and _PLAIN_WORD.fullmatch(value) is not None


def render_fix(template: str, values: Vars) -> str:
    """A fix `template` with `values` filled in, safe to paste.

    A value read from a snapshot goes into a command only as a plain word; one that is not (a backquote, a `;`,
    a space, an option) cannot be a value the setting holds, so the fix is no command, only the reason. In
    advice (a sentence), such a value is shown quoted. Variables this module builds (`BUILT`) quote their own
    parts."""
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        command = fix_kind(re.sub(r"\{[^{}]*\}", "x", template)) == "command"
    except ValueError:
        return template
    shown = Vars(values)
    for name in fields:
        value = values[name]
        if name in BUILT or (name.startswith("all_") and name.endswith("_sh")) or plain_word(value):
            continue
        if command:
            return (f"no command: {human_field(name)} {show_quoted(value)} is not a value this setting can hold "
                    "(the snapshot may be damaged or forged)")
        shown[name] = shlex.quote(value if len(value) <= LONGEST_WORD else value[:LONGEST_WORD] + "...")
    return render(template, shown)


def show_quoted(value: str) -> str:
    """`value` quoted for a sentence, control characters escaped and cut to 60 characters."""
    cut = value if len(value) <= 60 else value[:57] + "..."
    return repr(cut)


def target_python(sides: Sides) -> str | None:
    """The interpreter whose packages a fix changes: B's target (its packages/python probe, as taken), else A's;
    None when neither side recorded one (never the shell's `python3`, which may be any interpreter)."""
    current, reference = sides.whole or (sides.current, sides.reference)
    return interpreter_of(current) or interpreter_of(reference)


def pip_words(sides: Sides, *words: str) -> str:
    """`<target python> -m pip WORDS...`, or the same said in words when no side recorded the interpreter."""
    python = target_python(sides)
    if python is None:
        return (f"run pip {' '.join(words)} with the pip of the interpreter B runs (neither snapshot records its "
                "path, so no command can name it)")
    return " ".join([shlex.quote(python), "-m", "pip", *words])


def pip_install(sides: Sides, name: str, version: Any, *flags: str) -> str:
    """The command that installs `name` `version` as A had it (its index with the extra index a +cu128 build
    needs, its VCS commit, its local folder) into B's target interpreter; a sentence when none can."""
    return install_command(target_python(sides), sides.reference, sides.current, name, version, flags)


# What a pasted fix may start with: a shell command of one of these tools (after sudo), else it is advice.
KNOWN_TOOLS = frozenset({"pip", "pip3", "nvidia-smi", "sysctl", "echo", "tee", "export", "unset", "sudo", "systemctl",
                         "modprobe", "numactl", "cpupower", "conda", "ip", "ulimit", "setpci", "taskset",
                         "nvidia-cuda-mps-control"})
_OPERATORS = {";", "&&", "||", "|"}


def _is_tool(word: str) -> bool:
    name = word.rsplit("/", 1)[-1]
    return word in KNOWN_TOOLS or re.fullmatch(r"python(3(\.\d+)?)?", name) is not None


# Characters shlex gives no meaning (no quote, escape, comment, operator or whitespace but the space): a text
# made of them alone is split by shlex exactly where its spaces are. Most fixes are such a text (`unset X`,
# `export X=1`), and shlex's tokenizer, a character at a time in Python, was a third of explaining 10^5 changes.
_PLAIN_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,~*? ")


def shell_tokens(text: str) -> list[str] | None:
    """The tokens of `text` as a POSIX shell lexer reads them (operators ; & | ( ) apart); None when its
    quotes do not close."""
    if _PLAIN_WORD_CHARS.issuperset(text):
        return text.split()
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return None


def command_words(text: str) -> list[list[str]] | None:
    """The simple commands of `text` (split at ; && || |), each as shlex words; None when `text` is not a
    shell command of known tools (a sentence, parentheses, a word no tool starts with, or longer than any fix
    this module builds: shlex reads a character at a time)."""
    if len(text) > 4 * LONGEST_WORD:
        return None
    tokens = shell_tokens(text)
    if tokens is None:
        return None
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS:
            commands.append([])
        elif token in ("(", ")") or set(token) <= set(";&|()"):
            return None
        else:
            commands[-1].append(token)
    for words in commands:
        rest = [w for w in words if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)] if words else []
        if rest[:1] == ["sudo"]:
            rest = rest[1:]
        if not rest or not _is_tool(rest[0]):
            return None
    return commands


@lru_cache(maxsize=1024)
def fix_kind(text: str) -> str:
    """"command" when `text` pastes into a shell as commands of known tools, else "advice" (a sentence).

    Kept for the texts last asked: every fix of a rule asks it of the rule's template first (shlex reads a
    character at a time)."""
    return "command" if command_words(text) is not None else "advice"


_LIBRARY_FIXES = ("nccl_fix", "cudnn_fix", "cublas_fix", "torch_pin_a", "torch_pip_a", "torch_reinstall_a")


def template_vars(sides: Sides, changes: list[tuple[Change, dict[str, str]]], table: RelevanceTable,
                  wanted: str = "") -> Vars:
    """Every variable a rule's title and fix may use, for a group of changes of one rule.

    `wanted` is the rule's templates: variables that cost a walk over every package are computed only
    when they are named there.
    """
    first, captures = changes[0]
    values = Vars(captures)
    # A variable that is absent is "unset", not "none" (which could be its value).
    absent = "unset" if "var" in captures else show_value(None)
    before = absent if first.kind == "added" else show_at(first.parts, first.before)
    after = absent if first.kind == "removed" else show_at(first.parts, first.after)
    values.update(path=first.path, kind=first.kind, before=before, after=after,
                  before_sh=shlex.quote(show_value(first.before)), after_sh=shlex.quote(show_value(first.after)),
                  n=str(len(changes)))
    for name in captures:
        # Every subject of a merged group: "0000:19:00.0, 0000:3b:00.0" and a shell list of them.
        subjects = sorted({c[name] for _, c in changes if name in c})
        values[f"all_{name}"] = (", ".join(subjects) if len(subjects) <= 3
                                 else f"{', '.join(subjects[:2])} and {len(subjects) - 2} more")
        values[f"all_{name}_sh"] = " ".join(shlex.quote(subject) for subject in subjects)
    values["field"] = human_field(_field(first, captures))
    values["fact"] = _fact(first)
    values["restore_env"] = _restore_env(captures.get("var", "?"), first.before is None, values["before_sh"])
    after_n, before_n = number(first.after), number(first.before)
    if after_n is not None and before_n is not None:
        values["delta"] = show_value(round(after_n - before_n, 3))
    if "file" in captures or "dist" in captures:
        values["dist"], values["relpath"] = dist_of(captures["file"]) if "file" in captures else (captures["dist"], "")
        version = package_version(sides.current, values["dist"])
        values["version"] = show_value(version)
        # Restore the reference's wheel: its version, the current one when the reference lacks the package.
        pin = package_version(sides.reference, values["dist"]) or version
        values["dist_pin"] = f"{values['dist']}=={pin}" if is_pinnable(pin) else values["dist"]
        values.update(binary_vars(sides, first, values["dist"], values["relpath"]))
    if "pkg" in captures:
        record = package_record(sides.current, captures["pkg"]) or package_record(sides.reference, captures["pkg"])
        values["name"] = str(record.get("name") or captures["pkg"])
        values["version"] = show_value(record.get("version"))
        group = table.group_of(captures["pkg"])
        values["subject"] = f"{group.library} ({values['name']})" if group and group.library else values["name"]
        values.update(binary_vars(sides, first, values["name"], ""))
    values.update(_gpu_vars(sides, changes))
    values.update(_module_vars(changes))
    values.update(reference_state(sides, first, captures, values))
    if any(f"{{{name}}}" in wanted for name in _LIBRARY_FIXES):
        values.update(library_fixes(sides, first, table))
    return values


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def _restore_env(name: str, unset: bool, before_sh: str) -> str:
    """`unset NAME` or `export NAME=VALUE` (the value quoted); only the reason when NAME cannot be a variable's."""
    if _VARIABLE_NAME.fullmatch(name) is None:
        return f"no command: {show_quoted(name)} is not a name an environment variable can have"
    return f"unset {name}" if unset else f"export {name}={before_sh}"


def _fact(change: Change) -> str:
    """A changed fact named in words, for the catch-all rule: "torch CUDA wheels nvidia-nccl-cu12"."""
    parts = [str(part) for part in change.parts]
    if parts[:1] == ["probes"] and len(parts) > 3:
        return f"{parts[1]}: {human_field('.'.join(parts[3:]))}"
    return human_field(".".join(parts))


def _module_vars(changes: list[tuple[Change, dict[str, str]]]) -> dict[str, str]:
    """Kernel modules loaded, unloaded or changed, as one sentence and the commands that restore A."""
    said, load, unload = [], [], []
    for change, captures in sorted(changes, key=lambda member: member[0].path):
        module = captures.get("module")
        if module is None:
            continue
        version = mapping(change.before if change.kind == "removed" else change.after).get("version")
        label = f"{module} {version}" if version else module
        if change.kind == "removed" and len(change.parts) == 5:
            said.append(f"{label} unloaded")
            load.append(module)
        elif change.kind == "added" and len(change.parts) == 5:
            said.append(f"{label} loaded")
            unload.append(module)
        else:
            said.append(f"{module} {human_field(_field(change, captures))} {show_value(change.before)} -> "
                        f"{show_value(change.after)}")
    named = [name for name in [*unload, *load] if not plain_word(name)]
    commands = [shlex.join(["sudo", "modprobe", "-r", name]) for name in unload] + \
               [shlex.join(["sudo", "modprobe", name]) for name in load]
    fix = ("; ".join(commands) or "load the module versions of A (modinfo; the driver or OFED of A)") if not named \
        else f"no command: {show_quoted(named[0])} is not a kernel module's name"
    return {"module_changes": ", ".join(said) or "none", "module_fix": fix}


def library_fixes(sides: Sides, change: Change, table: RelevanceTable) -> dict[str, str]:
    """`pip install` commands that restore a library torch loads (NCCL, cuDNN) and torch itself, from the
    wheels the reference has installed; a sentence instead of a pin when it has none."""
    out: dict[str, str] = {}
    for key, library in (("nccl_fix", "NCCL"), ("cudnn_fix", "cuDNN"), ("cublas_fix", "cuBLAS")):
        wheel = table.library_wheel(library, sides.reference)
        version = package_version(sides.reference, wheel) if wheel else None
        if wheel and is_pinnable(version):
            out[key] = pip_install(sides, wheel, version)
        else:
            before = show_value(change.before) if change.kind != "added" else "of A"
            out[key] = f"install the {library} library {before} as on A (A has no pip wheel of it)"
    torch = package_version(sides.reference, "torch")
    if not is_pinnable(torch):
        torch = lookup(probe_data(sides.reference, "torch"), ("version",))
    out["torch_pin_a"] = f"torch=={torch}" if is_pinnable(torch) else "torch"
    out["torch_pip_a"] = (pip_install(sides, "torch", torch) if is_pinnable(torch) else
                          "install the torch build A had (A recorded no release version pip can pin)")
    out["torch_reinstall_a"] = (pip_install(sides, "torch", torch, "--force-reinstall", "--no-deps")
                                if is_pinnable(torch) else out["torch_pip_a"])
    return out


def _gpu_vars(sides: Sides, changes: list[tuple[Change, dict[str, str]]]) -> dict[str, str]:
    out: dict[str, str] = {}
    gpu_keys = sorted({c.get("gpu", "") for _, c in changes if c.get("gpu")})
    devs = sorted({c.get("dev", "") for _, c in changes if re.fullmatch(r"GPU\d+", c.get("dev", ""))})
    if devs and not gpu_keys:
        # The topology matrix names GPUs GPU0, GPU1, ...: label them as the other rules do.
        indexes = sorted((dev[3:] for dev in devs), key=lambda index: (len(index), index))
        out["gpu"] = f"GPU {indexes[0]}"
        out["gpu_indexes"] = ",".join(indexes)
        out["gpus"] = ", ".join(f"GPU {index}" for index in indexes)
    if gpu_keys:
        current = sides.current
        labels = sorted((gpu_label((current, sides.reference), key) for key in gpu_keys),
                        key=lambda lab: (len(lab[1]), lab[1]))
        total = len(probe_data(current, "gpu").get("gpus") or probe_data(current, "pcie").get("gpus") or {})
        out["gpu"] = labels[0][0]
        out["gpu_indexes"] = ",".join(index for _, index in labels)
        out["gpus"] = (f"all {total} GPUs" if total > 1 and len(labels) == total
                       else ", ".join(label for label, _ in labels))
        link = mapping(lookup(gpu_record(current, gpu_keys[0], "pcie"), ("link",)))
        out["width_max"] = show_value(link.get("width_max"))
        out["gen_max"] = show_value(link.get("gen_max"))
        out.update(gpu_fix_vars(sides, gpu_keys[0], out["gpu_indexes"]))
    return out


def gpu_fix_vars(sides: Sides, key: str, indexes: str) -> dict[str, str]:
    """Commands that put a GPU back as the reference has it, computed from the reference's record."""
    ref, now = gpu_record(sides.reference, key), gpu_record(sides.current, key)
    if not plain_word(indexes):
        reason = f"no command: {show_quoted(indexes)} is not a list of GPU indexes"
        return dict.fromkeys(("ac_fix", "locked_fix", "pl_fix", "mig_fix"), reason) | {
            "numa_node": show_value(gpu_record(sides.current, key, "pcie").get("numa_node"))}
    smi = f"sudo nvidia-smi -i {indexes}"
    out: dict[str, str] = {}
    app = mapping(ref.get("application_clocks"))
    memory, graphics = app.get("memory_mhz"), app.get("graphics_mhz")
    if number(memory) is None or number(graphics) is None:  # a clock is a number, or there is none to set
        memory = graphics = None
    out["ac_fix"] = (f"{smi} -ac {show_value(memory)},{show_value(graphics)}"
                     if memory is not None and graphics is not None else f"{smi} -rac")
    out["locked_fix"] = _locked_fix(smi, out["ac_fix"], ref, now)
    power = mapping(ref.get("power"))
    limit = power.get("limit_w") if power.get("limit_w") is not None else power.get("enforced_limit_w")
    default = power.get("default_limit_w")
    if default is None:
        default = mapping(now.get("power")).get("default_limit_w")
    # A's limit, else the board default: a command either way, nothing glued on that a shell would read.
    out["pl_fix"] = (f"{smi} -pl {show_value(limit)}" if number(limit) is not None else
                     f"{smi} -pl {show_value(default)}" if number(default) is not None else
                     "set the board default power limit that nvidia-smi -q -d POWER shows")
    out["enforced_pl_fix"] = _enforced_limit_fix(smi, power, mapping(now.get("power")))
    instances = lookup(ref, ("mig", "instances"))
    profiles = [str(item.get("profile")).removeprefix("MIG ") for _, item in sorted(instances.items())
                if isinstance(item, dict) and item.get("profile")] if isinstance(instances, dict) else []
    odd = [profile for profile in profiles if not plain_word(profile)]
    if odd:
        out["mig_fix"] = f"no command: {show_quoted(odd[0])} is not a MIG profile's name"
        out["numa_node"] = show_value(gpu_record(sides.current, key, "pcie").get("numa_node"))
        return out
    clear = f"sudo nvidia-smi mig -i {indexes} -dci; sudo nvidia-smi mig -i {indexes} -dgi"
    out["mig_fix"] = (f"{clear}; sudo nvidia-smi mig -i {indexes} -cgi {','.join(profiles)} -C" if profiles
                      else f"{clear} (A had no MIG instances)")
    out["numa_node"] = show_value(gpu_record(sides.current, key, "pcie").get("numa_node"))
    return out


def _enforced_limit_fix(smi: str, ref: Mapping[str, object], now: Mapping[str, object]) -> str:
    """Put back A's enforced power limit. With the requested limit recorded and equal on both sides, `-pl` did
    not move it: the cap is set elsewhere (the module or system power limit, the BMC), which no nvidia-smi
    command here restores; otherwise A's requested limit (else its enforced one) requested again."""
    requested, requested_now = ref.get("limit_w"), now.get("limit_w")
    if number(requested) is not None and requested == requested_now:
        return (f"the requested limit is {show_value(requested)} W on both sides, so no -pl lowered or raised it: "
                "find the cap set elsewhere (module or system power limit, BMC power capping) with "
                "nvidia-smi -q -d POWER")
    target = requested if number(requested) is not None else ref.get("enforced_limit_w")
    if number(target) is None:
        return "set the power limit A had, which its record does not hold (nvidia-smi -q -d POWER shows it)"
    return f"{smi} -pl {show_value(target)}"


def _locked_fix(smi: str, ac_fix: str, ref: dict[str, Any], now: dict[str, Any]) -> str:
    """Undo a clock lock B has and A had not: release the locked range, set A's application clocks. No
    source records a locked range (`locked_clocks` is null), so a lock A had can only be described."""
    held = "applications_clocks_setting"
    if held in (ref.get("clock_event_reasons") or []) and held not in (now.get("clock_event_reasons") or []):
        return ("A's clocks were locked, and no source records the range it locked them to: lock them again "
                "as on A with nvidia-smi -lgc")
    return f"{smi} -rgc; {ac_fix}"


def reference_state(sides: Sides, change: Change, captures: dict[str, str], values: Vars) -> dict[str, str]:
    """Template variables read from the reference (what to restore) for rules whose fix needs its value."""
    out: dict[str, str] = {}
    if "pkg" in captures:
        out.update(_pins(sides, change, captures["pkg"], str(values.get("name", captures["pkg"]))))
    if "dev" in captures and "numa_node" not in values:
        numa = lookup(probe_data(sides.current, "pcie"), ("topology", "numa_affinity", captures["dev"]))
        out["numa_node"] = show_value(numa)
    node = out.get("numa_node", values.get("numa_node", "none"))
    out["numactl"] = (f"numactl --cpunodebind={node} --membind={node}" if node.isdigit()
                      else "numactl --cpunodebind=N --membind=N, N from nvidia-smi topo -m")
    fixed = sides.fixed_vars
    out["hugepages_fix"] = fixed["hugepages_fix"]
    if "iface" in captures:
        out["iface_fix"] = _iface_fix(sides, captures["iface"])
    out["driver_fix"] = _driver_fix(sides, str(values.get("before", "?")))
    out["pip"], out["python_a"] = fixed["pip"], fixed["python_a"]
    if "conf" in captures:
        out.update(conf_vars(change, captures["conf"]))
    if "probe" in captures:
        out["retake"] = retake_command(sides, captures["probe"])
    if change.parts[:3] == ("probes", "server", "data"):
        out["flag"] = "--" + str(change.parts[-1]).replace("_", "-")
        out["default_why"] = _default_why(sides)
        out["restore"] = restore_phrase(sides.reference, sides.current, change)
        out["setting"] = setting_name(sides.reference, sides.current, change)
    return out


def retake_command(sides: Sides, probe: str) -> str:
    """`driftcheck snapshot --probe PROBE` with what that probe was asked of, words quoted: the server probe
    needs the server (`--server URL`) and the startup log (`--server-log FILE`) A's was taken with (B's where A's
    failed), or the command fails again for want of anything to ask."""
    words = ["driftcheck", "snapshot", "--probe", probe]
    if probe == "server":
        for snapshot in (sides.reference, sides.current):
            target = reference_target(snapshot)
            if target.server or target.server_log:
                words += ["--server", target.server] if target.server else []
                words += ["--server-log", target.server_log] if target.server_log else []
                break
    return shlex.join(words)


def _default_why(sides: Sides) -> str:
    """Why an engine resolves an argument the user never set to another value: its release (defaults
    change between releases) or the GPU memory it derives defaults from, as far as both sides say."""
    a, b = probe_data(sides.reference, "server"), probe_data(sides.current, "server")
    engine = str(b.get("engine") or a.get("engine") or "the engine")
    memory = [_gpu_memory_gib(snapshot) for snapshot in (sides.reference, sides.current)]
    reasons = []
    if a.get("version") is not None and b.get("version") is not None and a.get("version") != b.get("version"):
        reasons.append(f"a new default ({engine} {a['version']} -> {b['version']})")
    if None not in memory and memory[0] != memory[1]:
        reasons.append(f"another GPU memory ({show_value(memory[0])} -> {show_value(memory[1])} GiB)")
    if reasons:
        return " or ".join(reasons)
    unread = "the GPU memory was not recorded on both sides" if None in memory else "the same GPU memory"
    return f"the engine resolved it otherwise with the same release ({unread})"


def _gpu_memory_gib(snapshot: Snapshot) -> float | None:
    """The memory of the first GPU of the gpu probe, in GiB; None when not recorded."""
    gpus = mapping(probe_data(snapshot, "gpu").get("gpus"))
    first = mapping(next(iter(gpus.values()), None))
    total = number(mapping(first.get("memory")).get("total_mib"))
    return None if total is None else round(total / 1024, 1)


def _driver_fix(sides: Sides, before: str) -> str:
    """Reinstalling A's driver, said for B's operating system (no apt-mark on a Windows board)."""
    system = str(lookup(probe_data(sides.current, "python"), ("platform", "system")) or "")
    os_id = str(lookup(probe_data(sides.current, "system"), ("os", "id")) or "")
    if system == "Windows":
        return f"install NVIDIA driver {before} for Windows (nvidia.com/drivers), as on A, and restart"
    if os_id in ("debian", "ubuntu"):
        return f"reinstall NVIDIA driver {before} as on A (then apt-mark hold its packages) and reboot"
    return f"reinstall NVIDIA driver {before} as on A with the package manager that installed it, and reboot"


def _hugepages_fix(sides: Sides) -> str:
    """The commands that give every huge page pool of B the size it had on A (`hugepages.sizes`)."""
    sizes = mapping(mapping(probe_data(sides.reference, "system").get("hugepages")).get("sizes"))
    now = mapping(mapping(probe_data(sides.current, "system").get("hugepages")).get("sizes"))
    commands = []
    for size, record in sorted(sizes.items()):
        pages = mapping(record).get("pages")
        if isinstance(pages, int) and re.fullmatch(r"\d+kB", size) and pages != mapping(now.get(size)).get("pages"):
            commands.append(f"echo {pages} | sudo tee /sys/kernel/mm/hugepages/hugepages-{size}/nr_hugepages")
    return "; ".join(commands) or "restore the huge page pools of A (/sys/kernel/mm/hugepages/*/nr_hugepages)"


def _pins(sides: Sides, change: Change, pkg: str, name: str) -> dict[str, str]:
    packages = probe_data(sides.reference, "packages")
    if change.parts[:4] == ("probes", "packages", "data", "conda"):
        version = lookup(packages, ("conda", pkg, "version"))
        return {"conda_pin_a": shlex.quote(f"{pkg}={version}" if version is not None else pkg)}
    record = mapping(lookup(packages, ("packages", pkg)))
    version = record.get("version")
    uninstall = pip_words(sides, "uninstall", "-y", shlex.quote(name))
    if is_pinnable(version) or (version is not None and record.get("direct_url")):
        # A direct URL install is put back from its source (a commit, a folder), whatever its version says.
        return {"pin_a": f"{name}=={version}" if is_pinnable(version) else name,
                "pip_a": pip_install(sides, name, version), "pip_uninstall": uninstall}
    source = record.get("location")
    whence = f" from {show_value(source)}" if source else ""
    if version is None:
        return {"pin_a": name, "pip_a": uninstall, "pip_uninstall": uninstall}
    return {"pin_a": name, "pip_uninstall": uninstall,
            "pip_a": f"reinstall {name} {show_value(version)} as A had it{whence} (not a release version pip can pin)"}


def binary_vars(sides: Sides, change: Change, dist: str, relpath: str) -> dict[str, str]:
    """What a changed binary was on each side, and the fix that restores A's: a wheel reinstall, or, when
    A ran a locally modified copy that no wheel holds, one sentence saying so."""
    pin = package_version(sides.reference, dist) or package_version(sides.current, dist)
    reinstall = (pip_install(sides, dist, pin, "--force-reinstall", "--no-deps") if is_pinnable(pin)
                 else f"reinstall {dist} as A had it (A recorded no release version pip can pin)")
    modified = _modified_on_a(sides, change, dist, relpath)
    if modified is None:
        return {"reinstall_a": reinstall, "binary_change": f"{relpath or 'its files'} rebuilt in place",
                "modified_change": "modified in place"}
    digest = f", sha256 {modified[:16]}…" if modified else ""
    return {"reinstall_a": f"A ran a locally modified copy of {relpath or dist}{digest} that no wheel holds: "
                           "copy that file from A, as reinstalling restores only the wheel's original",
            "binary_change": f"A ran a locally modified {relpath or 'copy'}, B has the wheel's original",
            "modified_change": "modified in place on A, the wheel's original on B"}


def _modified_on_a(sides: Sides, change: Change, dist: str, relpath: str) -> str | None:
    """A's sha256 ("" when unknown) when A's copy differed from its RECORD and B's does not; else None."""
    files = mapping(probe_data(sides.reference, "kernels").get("files"))
    now = mapping(probe_data(sides.current, "kernels").get("files"))
    key = f"{dist}:{relpath}"
    if relpath:
        a, b = mapping(files.get(key)), mapping(now.get(key))
        if a.get("record_match") is False and b.get("record_match") is not False:
            return str(a.get("sha256") or "")
        return None
    a_list = lookup(probe_data(sides.reference, "kernels"), ("modified_in_place", dist))
    b_list = lookup(probe_data(sides.current, "kernels"), ("modified_in_place", dist))
    return "" if a_list and not b_list and change.kind == "removed" else None


def _iface_fix(sides: Sides, iface: str) -> str:
    if not plain_word(iface):
        return f"no command: {show_quoted(iface)} is not a network interface's name"
    record = mapping(lookup(probe_data(sides.reference, "nccl"), ("net", iface)))
    now = mapping(lookup(probe_data(sides.current, "nccl"), ("net", iface)))
    commands = []
    if number(record.get("mtu")) is not None and record.get("mtu") != now.get("mtu"):
        commands.append(f"sudo ip link set {iface} mtu {show_value(record['mtu'])}")
    if record.get("operstate") in ("up", "down") and record.get("operstate") != now.get("operstate"):
        commands.append(f"sudo ip link set {iface} {record['operstate']}")
    if not record:
        return f"{iface} was absent on A"
    return "; ".join(commands) if commands else f"check {iface} against A (ip link show {iface}; ethtool {iface})"


def conf_vars(change: Change, conf: str) -> dict[str, str]:
    """Title and fix of an NCCL configuration file change (the file's content is {NCCL_X: value})."""
    inner = [str(part) for part in change.parts[5:]]
    if not inner:
        if change.kind == "added":
            return {"conf_change": f"added {conf} with {show_value(change.after)}",
                    "conf_fix": f"remove {conf} (A had none)"}
        if change.kind == "removed":
            return {"conf_change": f"removed {conf} (it had {show_value(change.before)})",
                    "conf_fix": f"restore {conf} of A: {show_value(change.before)}"}
        return {"conf_change": f"{conf}: {show_value(change.before)} -> {show_value(change.after)}",
                "conf_fix": f"restore {conf} of A: {show_value(change.before)}"}
    var = ".".join(inner)
    before = "unset" if change.kind == "added" else show_value(change.before)
    after = "unset" if change.kind == "removed" else show_value(change.after)
    fix = (f"remove {var} from {conf}" if change.kind == "added"
           else f"set {var}={show_value(change.before)} in {conf}, as on A")
    return {"conf_change": f"{conf}: {var} {before} -> {after}", "conf_fix": fix}


def _field(change: Change, captures: dict[str, str]) -> str:
    """The changed fact relative to its subject: `power.limit_w` of a GPU, `version_id` of the OS."""
    inside = [str(part) for part in change.parts[3:]] if change.parts[:1] == ("probes",) else \
        [str(part) for part in change.parts]
    captured = set(captures.values())
    last = max((i for i, part in enumerate(inside) if part in captured), default=-1)
    rest = inside[last + 1:]
    return ".".join(rest) if rest else (inside[-1] if inside else change.path)
