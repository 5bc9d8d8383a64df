"""Why performance moved: the structural diff, classified by the rule catalog and ranked.

Each relevant change is claimed by the first rule of `rules.yaml` that matches its path, kind and
conditions. Changes of one rule with the same values (the same power limit on 8 GPUs) become one
explanation. Confidence is the rule's prior × the size of the change × its consistency with the
benchmark evidence, when both snapshots carry calibrated benchmark results. Rules marked `not_drift`
(a PCIe generation that drops at idle, clocks read at idle) become notes, not causes. The usual
suspects that did not change are listed too: that list is what ends a debugging session.
"""

from __future__ import annotations

import importlib
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from driftcheck.snapshot.diff import Change, SnapshotDiff
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart
from driftcheck.snapshot.rules import Catalog, PathPattern, Rule, default_catalog

_MAX_CONFIDENCE = 0.99


@dataclass(frozen=True)
class Explanation:
    """One ranked cause: a rule applied to one or more changes with the same values."""

    rule: str
    category: str
    title: str
    evidence: tuple[str, ...]
    confidence: float
    fix: str
    reboot_reset: bool = False
    revert: dict[str, Any] | None = None
    rank: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rank": self.rank, "rule": self.rule, "category": self.category,
                               "title": self.title, "evidence": list(self.evidence),
                               "confidence": self.confidence, "fix": self.fix}
        if self.reboot_reset:
            out["reboot_reset"] = True
        return out


@dataclass
class Explained:
    """The outcome of `explain`: ranked causes, notes (traps), unchanged suspects, benchmark evidence."""

    diff: SnapshotDiff
    explanations: list[Explanation] = field(default_factory=list)
    notes: list[Explanation] = field(default_factory=list)
    unchanged: list[dict[str, str]] = field(default_factory=list)
    bench: list[dict[str, Any]] = field(default_factory=list)
    rebooted: bool = False
    bench_note: str | None = None

    @property
    def drifted(self) -> bool:
        """Whether anything relevant differs: at least one ranked cause (notes and unchanged suspects are
        not drift). `diff` and `explain` exit 1 on this, volatile readings included when a rule weighs them."""
        return bool(self.explanations)

    def evidence_paths(self) -> set[str]:
        """Every change path that an explanation or a note cites as evidence."""
        return {path for e in [*self.explanations, *self.notes] for path in e.evidence}


# --- looking things up in the two documents ---------------------------------------------------------

def lookup(document: Any, parts: tuple[PathPart, ...] | list[PathPart]) -> Any:
    """The value at `parts` in `document`, or None when any step is missing."""
    for part in parts:
        in_dict = isinstance(document, dict) and part in document
        in_list = isinstance(document, list) and isinstance(part, int) and 0 <= part < len(document)
        if not (in_dict or in_list):
            return None
        document = document[part]
    return document


def _probe_data(snapshot: Snapshot, name: str) -> dict[str, Any]:
    return snapshot.probe_data(name) or {}


def _gpu_record(snapshot: Snapshot, key: str, probe: str = "gpu") -> dict[str, Any]:
    record = lookup(_probe_data(snapshot, probe), ("gpus", key))
    return record if isinstance(record, dict) else {}


def _gpu_label(diff: SnapshotDiff, key: str) -> tuple[str, str]:
    """("GPU 3", "3") for the GPU keyed `key` in either snapshot (UUID or bus id); the key itself if unknown."""
    for snapshot in (diff.b, diff.a):
        for probe in ("gpu", "pcie"):
            index = _gpu_record(snapshot, key, probe).get("index")
            if isinstance(index, int) and not isinstance(index, bool):
                return f"GPU {index}", str(index)
    return key, key


def _gpu_idle(snapshot: Snapshot, key: str) -> bool:
    record = _gpu_record(snapshot, key)
    reasons = record.get("clock_event_reasons") or []
    utilization = lookup(record, ("utilization", "gpu_pct"))
    return "idle" in reasons or utilization == 0


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _fallback_key(text: str) -> tuple[Any, ...]:
    # Without `packaging`: numeric runs compare as numbers, the rest as text.
    return tuple((0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in re.findall(r"\d+|[a-z]+", text))


def version_order(before: Any, after: Any) -> int:
    """-1 when `after` is an older release than `before`, 1 when newer; 0 when the same release (a local
    build tag such as +cu128 is not a release) or not comparable."""
    if not isinstance(before, str) or not isinstance(after, str):
        return 0
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:
        kb, ka = _fallback_key(before.split("+")[0]), _fallback_key(after.split("+")[0])
        return (ka > kb) - (ka < kb)
    try:
        vb, va = Version(before), Version(after)
    except InvalidVersion:
        return 0
    pb, pa = Version(vb.public), Version(va.public)
    return (pa > pb) - (pa < pb)


def same_release(before: Any, after: Any) -> bool:
    """Whether two different version strings name the same release (2.7.0+cu128 and 2.7.0+cu126)."""
    if not isinstance(before, str) or not isinstance(after, str) or before == after:
        return False
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:
        return before.split("+")[0] == after.split("+")[0]
    try:
        return Version(before).public == Version(after).public
    except InvalidVersion:
        return False


def _dist_of(file_key: str) -> tuple[str, str]:
    dist, _, rel = file_key.partition(":")
    return dist, rel


def _package_version(snapshot: Snapshot, dist: str) -> Any:
    packages = _probe_data(snapshot, "packages").get("packages") or {}
    record = packages.get(dist) or packages.get(dist.lower().replace("_", "-")) or {}
    return record.get("version") if isinstance(record, dict) else None


# --- conditions (`when:` in rules.yaml) --------------------------------------------------------------

@dataclass(frozen=True)
class _Context:
    diff: SnapshotDiff
    change: Change
    captures: dict[str, str]


def _delta(ctx: _Context) -> float | None:
    before, after = _number(ctx.change.before), _number(ctx.change.after)
    return None if before is None or after is None else after - before


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _either_idle(ctx: _Context) -> bool:
    key = ctx.captures.get("gpu")
    return key is not None and (_gpu_idle(ctx.diff.a, key) or _gpu_idle(ctx.diff.b, key))


def _same_dist_version(ctx: _Context) -> bool:
    dist, _ = _dist_of(ctx.captures.get("file", ""))
    before = _package_version(ctx.diff.a, dist)
    return before is not None and before == _package_version(ctx.diff.b, dist)


def _sibling_same(ctx: _Context, name: str) -> bool:
    parts = ctx.change.parts[:-1] + (name,)
    a, b = lookup(ctx.diff.a.document, parts), lookup(ctx.diff.b.document, parts)
    return a is not None and a == b


Condition = Callable[[_Context, Any], bool]
CONDITIONS: dict[str, Condition] = {
    "decreased": lambda ctx, _: (d := _delta(ctx)) is not None and d < 0,
    "increased": lambda ctx, _: (d := _delta(ctx)) is not None and d > 0,
    "abs_delta_ge": lambda ctx, n: (d := _delta(ctx)) is not None and abs(d) >= float(n),
    "abs_delta_lt": lambda ctx, n: (d := _delta(ctx)) is not None and abs(d) < float(n),
    "gpu_idle": lambda ctx, _: _either_idle(ctx),
    "gpu_busy": lambda ctx, _: not _either_idle(ctx),
    "gained": lambda ctx, item: item in _as_list(ctx.change.after) and item not in _as_list(ctx.change.before),
    "lost": lambda ctx, item: item in _as_list(ctx.change.before) and item not in _as_list(ctx.change.after),
    "after_is": lambda ctx, value: ctx.change.after == value,
    "before_is": lambda ctx, value: ctx.change.before == value,
    "version_up": lambda ctx, _: version_order(ctx.change.before, ctx.change.after) > 0,
    "version_down": lambda ctx, _: version_order(ctx.change.before, ctx.change.after) < 0,
    "same_release": lambda ctx, _: same_release(ctx.change.before, ctx.change.after),
    "same_package_version": lambda ctx, _: _same_dist_version(ctx),
    "other_package_version": lambda ctx, _: not _same_dist_version(ctx),
    "sibling_same": lambda ctx, name: _sibling_same(ctx, str(name)),
    "sibling_changed": lambda ctx, name: not _sibling_same(ctx, str(name)),
}


def condition_names() -> list[str]:
    """The names a rule's `when:` may use."""
    return sorted(CONDITIONS)


def _holds(rule: Rule, ctx: _Context) -> bool:
    for name, arg in rule.when:
        condition = CONDITIONS.get(name)
        if condition is None or not condition(ctx, arg):
            return False
    return True


def classify(diff: SnapshotDiff, change: Change, catalog: Catalog) -> tuple[Rule, dict[str, str]] | None:
    """The first rule of the catalog that claims `change`, with its captures."""
    for rule in catalog.rules:
        captures = rule.match(change.parts, change.kind)
        if captures is not None and _holds(rule, _Context(diff, change, captures)):
            return rule, captures
    return None


# --- rendering titles and fixes -----------------------------------------------------------------------

def show_value(value: Any) -> str:
    """A fact as people read it: on/off, none, a comma list, 1980 rather than 1980.0."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(show_value(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return _show_dict(value)
    return str(value)


def _show_dict(value: dict[str, Any]) -> str:
    """A mapping as people read it: a package copy, a GPU process, or `key=value` pairs (not JSON)."""
    if not value:
        return "none"
    if "version" in value and "location" in value:
        return f"{show_value(value.get('version'))} in {show_value(value.get('location'))}"
    if "pid" in value and ("name" in value or "used_memory_mib" in value):
        memory = value.get("used_memory_mib")
        extra = f", {show_value(memory)} MiB" if memory is not None else ""
        return f"{show_value(value.get('name'))} (pid {show_value(value.get('pid'))}{extra})"
    return ", ".join(f"{key}={show_value(item)}" for key, item in sorted(value.items()))


def show_locked_clocks(value: Any) -> str:
    """`locked_clocks` of a GPU: "1410-1410 MHz", with the memory range when it is locked too; "none"."""
    if not isinstance(value, dict):
        return show_value(value)
    parts = []
    for prefix, label in (("gpu", ""), ("memory", "memory ")):
        low, high = value.get(f"{prefix}_min_mhz"), value.get(f"{prefix}_max_mhz")
        if low is not None or high is not None:
            parts.append(f"{label}{show_value(low)}-{show_value(high)} MHz")
    return ", ".join(parts) if parts else "none"


def show_governors(value: Any) -> str:
    """`cpufreq.governors` ({governor: CPU count}): "performance on 224 CPUs"."""
    if not isinstance(value, dict):
        return show_value(value)
    if not value:
        return "none"
    return ", ".join(f"{name} on {show_value(count)} CPU{'' if count == 1 else 's'}"
                     for name, count in sorted(value.items()))


def _show_at(parts: tuple[PathPart, ...], value: Any) -> str:
    """A value rendered for the fact it is at `parts` (locked clocks, governors), else `show_value`."""
    tail = [str(part) for part in parts]
    if "locked_clocks" in tail and tail[-1] == "locked_clocks":
        return show_locked_clocks(value)
    if tail[-2:] == ["cpufreq", "governors"]:
        return show_governors(value)
    return show_value(value)


class _Vars(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _template_vars(diff: SnapshotDiff, changes: list[tuple[Change, dict[str, str]]]) -> _Vars:
    first, captures = changes[0]
    values = _Vars(captures)
    # A variable that is absent is "unset", not "none" (which could be its value).
    absent = "unset" if "var" in captures else show_value(None)
    before = absent if first.kind == "added" else _show_at(first.parts, first.before)
    after = absent if first.kind == "removed" else _show_at(first.parts, first.after)
    values.update(path=first.path, kind=first.kind, before=before, after=after,
                  before_sh=shlex.quote(show_value(first.before)), after_sh=shlex.quote(show_value(first.after)),
                  n=str(len(changes)))
    values["field"] = _field(first, captures)
    values["restore_env"] = (f"unset {captures.get('var', '?')}" if first.before is None else
                             f"export {captures.get('var', '?')}={values['before_sh']}")
    delta = _number(first.after), _number(first.before)
    if delta[0] is not None and delta[1] is not None:
        values["delta"] = show_value(round(delta[0] - delta[1], 3))
    if "file" in captures:
        values["dist"], values["relpath"] = _dist_of(captures["file"])
        values["version"] = show_value(_package_version(diff.b, values["dist"]))
    if "pkg" in captures:
        record = lookup(_probe_data(diff.b, "packages"), ("packages", captures["pkg"])) or \
            lookup(_probe_data(diff.a, "packages"), ("packages", captures["pkg"])) or {}
        values["name"] = str(record.get("name") or captures["pkg"]) if isinstance(record, dict) else captures["pkg"]
        values["version"] = show_value(record.get("version") if isinstance(record, dict) else None)
    gpu_keys = sorted({c.get("gpu", "") for _, c in changes if c.get("gpu")})
    devs = sorted({c.get("dev", "") for _, c in changes if re.fullmatch(r"GPU\d+", c.get("dev", ""))})
    if devs and not gpu_keys:
        # The topology matrix names GPUs GPU0, GPU1, ...: label them as the other rules do.
        indexes = sorted((dev[3:] for dev in devs), key=lambda index: (len(index), index))
        values["gpu"] = f"GPU {indexes[0]}"
        values["gpu_indexes"] = ",".join(indexes)
        values["gpus"] = ", ".join(f"GPU {index}" for index in indexes)
    if gpu_keys:
        labels = sorted((_gpu_label(diff, key) for key in gpu_keys), key=lambda lab: (len(lab[1]), lab[1]))
        total = len(_probe_data(diff.b, "gpu").get("gpus") or _probe_data(diff.b, "pcie").get("gpus") or {})
        values["gpu"] = labels[0][0]
        values["gpu_indexes"] = ",".join(index for _, index in labels)
        values["gpus"] = (f"all {total} GPUs" if total > 1 and len(labels) == total
                          else ", ".join(label for label, _ in labels))
        link = lookup(_gpu_record(diff.b, gpu_keys[0], "pcie"), ("link",)) or {}
        values["width_max"] = show_value(link.get("width_max"))
        values["gen_max"] = show_value(link.get("gen_max"))
        values.update(_gpu_fix_vars(diff, gpu_keys[0], values["gpu_indexes"]))
    values.update(_state_of_a(diff, first, captures, values))
    return values


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _gpu_fix_vars(diff: SnapshotDiff, key: str, indexes: str) -> dict[str, str]:
    """Commands that put a GPU back as A had it, computed from A's record (no blank left to fill in)."""
    a_record, b_record = _gpu_record(diff.a, key), _gpu_record(diff.b, key)
    smi = f"sudo nvidia-smi -i {indexes}"
    out: dict[str, str] = {}
    locked = a_record.get("locked_clocks")
    locked = locked if isinstance(locked, dict) else {}
    commands = []
    gpu_low, gpu_high = locked.get("gpu_min_mhz"), locked.get("gpu_max_mhz")
    commands.append(f"{smi} -lgc {show_value(gpu_low)},{show_value(gpu_high)}"
                    if gpu_low is not None and gpu_high is not None else f"{smi} -rgc")
    mem_low, mem_high = locked.get("memory_min_mhz"), locked.get("memory_max_mhz")
    b_locked = _mapping(b_record.get("locked_clocks"))
    if mem_low is not None and mem_high is not None:
        commands.append(f"{smi} -lmc {show_value(mem_low)},{show_value(mem_high)}")
    elif b_locked.get("memory_min_mhz") is not None or b_locked.get("memory_max_mhz") is not None:
        commands.append(f"{smi} -rmc")
    out["locked_fix"] = "; ".join(commands)
    out["locked_a"] = show_locked_clocks(a_record.get("locked_clocks")) if a_record else show_value(None)
    out["locked_b"] = show_locked_clocks(b_record.get("locked_clocks")) if b_record else show_value(None)
    app = a_record.get("application_clocks")
    app = app if isinstance(app, dict) else {}
    memory, graphics = app.get("memory_mhz"), app.get("graphics_mhz")
    out["ac_fix"] = (f"{smi} -ac {show_value(memory)},{show_value(graphics)}"
                     if memory is not None and graphics is not None else f"{smi} -rac")
    power = _mapping(a_record.get("power"))
    limit = power.get("limit_w") if power.get("limit_w") is not None else power.get("enforced_limit_w")
    default = power.get("default_limit_w")
    if default is None:
        default = _mapping(b_record.get("power")).get("default_limit_w")
    out["pl_fix"] = (f"{smi} -pl {show_value(limit)}, as on A" if _number(limit) is not None else
                     f"{smi} -pl {show_value(default)}, the board default" if _number(default) is not None else
                     f"{smi} -pl with the board default of nvidia-smi -q -d POWER")
    instances = lookup(a_record, ("mig", "instances"))
    profiles = [str(item.get("profile")).removeprefix("MIG ") for _, item in sorted(instances.items())
                if isinstance(item, dict) and item.get("profile")] if isinstance(instances, dict) else []
    clear = f"sudo nvidia-smi mig -i {indexes} -dci; sudo nvidia-smi mig -i {indexes} -dgi"
    out["mig_fix"] = (f"{clear}; sudo nvidia-smi mig -i {indexes} -cgi {','.join(profiles)} -C" if profiles
                      else f"{clear} (A had no MIG instances)")
    numa = _gpu_record(diff.b, key, "pcie").get("numa_node")
    out["numa_node"] = show_value(numa)
    return out


def _state_of_a(diff: SnapshotDiff, change: Change, captures: dict[str, str], values: _Vars) -> dict[str, str]:
    """Template variables read from A (what to restore) for the rules whose fix needs A's value."""
    out: dict[str, str] = {}
    parts = change.parts
    if "pkg" in captures:
        pkg = captures["pkg"]
        if parts[:4] == ("probes", "packages", "data", "conda"):
            version = lookup(_probe_data(diff.a, "packages"), ("conda", pkg, "version"))
            out["conda_pin_a"] = f"{pkg}={version}" if version is not None else pkg
        else:
            record = lookup(_probe_data(diff.a, "packages"), ("packages", pkg))
            version = record.get("version") if isinstance(record, dict) else None
            name = str(values.get("name", pkg))
            out["pin_a"] = f"{name}=={version}" if version is not None else name
    if "dev" in captures and "numa_node" not in values:
        numa = lookup(_probe_data(diff.b, "pcie"), ("topology", "numa_affinity", captures["dev"]))
        out["numa_node"] = show_value(numa)
    node = out.get("numa_node", values.get("numa_node", "none"))
    out["numactl"] = (f"numactl --cpunodebind={node} --membind={node}" if node not in ("none", "?", "")
                      else "numactl --cpunodebind=N --membind=N, N from nvidia-smi topo -m")
    hugepages = _probe_data(diff.a, "system").get("hugepages")
    total = hugepages.get("total") if isinstance(hugepages, dict) else None
    out["hugepages_fix"] = (f"sudo sysctl vm.nr_hugepages={show_value(total)}" if total is not None
                            else "restore the huge page settings of A (/proc/sys/vm/nr_hugepages)")
    if "iface" in captures:
        iface = captures["iface"]
        record = lookup(_probe_data(diff.a, "nccl"), ("net", iface))
        record = record if isinstance(record, dict) else {}
        now = lookup(_probe_data(diff.b, "nccl"), ("net", iface))
        now = now if isinstance(now, dict) else {}
        commands = []
        if record.get("mtu") is not None and record.get("mtu") != now.get("mtu"):
            commands.append(f"sudo ip link set {iface} mtu {show_value(record['mtu'])}")
        if record.get("operstate") in ("up", "down") and record.get("operstate") != now.get("operstate"):
            commands.append(f"sudo ip link set {iface} {record['operstate']}")
        out["iface_fix"] = ("; ".join(commands) if record and commands else f"{iface} was absent on A" if not record
                            else f"check {iface} against A (ip link show {iface}; ethtool {iface})")
    python = _probe_data(diff.a, "python").get("executable")
    out["python_a"] = show_value(python) if python else "the interpreter of A"
    nccl = lookup(_probe_data(diff.a, "packages"), ("packages", "nvidia-nccl-cu12", "version"))
    if nccl is None and parts[-1:] in (("nccl_version",), ("version",)) and isinstance(change.before, str):
        nccl = change.before
    out["nccl_fix"] = (f"pip install nvidia-nccl-cu12=={nccl}" if nccl is not None
                       else "reinstall the NCCL library of A")
    if "conf" in captures:
        out.update(_conf_vars(change, captures["conf"]))
    return out


def _conf_vars(change: Change, conf: str) -> dict[str, str]:
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


def _render(template: str, values: _Vars) -> str:
    try:
        return template.format_map(values)
    except (ValueError, IndexError, AttributeError):
        return template


# --- ranking -----------------------------------------------------------------------------------------

def _size(rule: Rule, change: Change) -> float:
    if rule.size == "fixed":
        return 1.0
    before, after = _number(change.before), _number(change.after)
    if before is None or after is None:
        return 1.0
    scale = max(abs(before), abs(after), 1e-9)
    relative = abs(after - before) / scale
    # A 25 % change counts fully; a 1 % change counts about half.
    return 0.5 + 0.5 * min(1.0, relative * 4)


_TIME_UNITS = ("s", "ms", "us", "ns", "sec", "seconds")


def _lower_is_better(entry: dict[str, Any]) -> bool:
    unit = str(entry.get("unit") or "").lower()
    if "/s" in unit or "flop" in unit or unit.endswith("ps"):
        return False
    return unit in _TIME_UNITS or unit.startswith(("ms/", "us/", "s/", "ns/"))


def bench_worse(entry: dict[str, Any]) -> bool:
    """Whether a compared benchmark result got significantly worse (slower) from A to B."""
    if not entry.get("significant"):
        return False
    direction = str(entry.get("direction") or "").lower()
    if direction in ("worse", "regression", "regressed", "slower"):
        return True
    if direction in ("better", "improvement", "improved", "faster", "same", "unchanged"):
        return False
    ratio = _number(entry.get("ratio"))
    if ratio is None:
        return False
    return ratio > 1.0 if _lower_is_better(entry) else ratio < 1.0


def bench_evidence(a: Snapshot, b: Snapshot) -> tuple[list[dict[str, Any]], str | None]:
    """The benchmark comparison of A and B (empty when either lacks results), and why it is empty."""
    before, after = a.probe_data("bench"), b.probe_data("bench")
    if not before or not after or not before.get("results") or not after.get("results"):
        return [], None
    try:
        compare = importlib.import_module("driftcheck.baselines.compare").compare_records
    except (ImportError, AttributeError):
        return [], "benchmark results present, but this driftcheck has no benchmark comparison module"
    try:
        entries = compare(before, after)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [], f"benchmark results could not be compared: {exc}"
    rows = [dict(entry) for entry in entries if isinstance(entry, dict)]
    return sorted(rows, key=lambda row: str(row["name"])), None


def bench_moved(rows: list[dict[str, Any]], bench_class: Callable[[str], str]) -> set[str] | None:
    """The classes of benchmark that got worse, or None when no row is evidence either way.

    An `inconclusive` (or missing) benchmark says nothing: it neither supports nor weighs against a cause.
    """
    conclusive = [row for row in rows if row.get("verdict", row.get("direction")) in ("slower", "faster", "unchanged")]
    if not conclusive:
        return None
    return {bench_class(str(row["name"])) for row in conclusive if bench_worse(row)}


def _consistency(rule: Rule, moved: set[str] | None) -> float:
    if moved is None:
        return 1.0
    if not moved:
        # Nothing in the micro-benchmarks moved: the machine is as fast as before; software first.
        return 1.3 if rule.affects == "software" else 0.6
    if rule.affects in moved:
        return 1.6
    return 0.8 if rule.affects == "software" else 0.7


def _boot_changed(diff: SnapshotDiff) -> bool:
    before = lookup(_probe_data(diff.a, "system"), ("boot_id",))
    after = lookup(_probe_data(diff.b, "system"), ("boot_id",))
    return before is not None and after is not None and before != after


def _revert(rule: Rule, change: Change, captures: dict[str, str]) -> dict[str, Any] | None:
    if rule.revert == "env" and "var" in captures:
        # `value` is A's (None: unset on A), `current` B's: --confirm measures one against the other.
        return {"kind": "env", "name": captures["var"], "value": None if change.kind == "added" else change.before,
                "current": None if change.kind == "removed" else change.after}
    return None


def _group_key(rule: Rule, change: Change, captures: dict[str, str]) -> str:
    others = {k: v for k, v in captures.items() if k != "gpu"}
    return json.dumps([rule.id, others, change.kind, change.before, change.after], sort_keys=True, default=str)


def explain(diff: SnapshotDiff, catalog: Catalog | None = None, include_volatile: bool = False,
            ignore: Callable[[Change], bool] | None = None) -> Explained:
    """Classify and rank the changes of `diff`; list unchanged suspects and the benchmark evidence.

    `ignore` drops changes the user said may differ (a policy's ignore patterns).
    """
    catalog = catalog or default_catalog()
    result = Explained(diff, rebooted=_boot_changed(diff))
    result.bench, result.bench_note = bench_evidence(diff.a, diff.b)
    moved = bench_moved(result.bench, catalog.bench_class)
    groups: dict[str, tuple[Rule, list[tuple[Change, dict[str, str]]]]] = {}
    considered = diff.shown(include_volatile=True)
    hidden = set() if include_volatile else {id(change) for change in diff.volatile}
    for change in considered:
        if ignore is not None and ignore(change):
            continue
        found = classify(diff, change, catalog)
        if found is None or found[0].ignore:
            continue
        if id(change) in hidden and not found[0].reads_volatile:
            continue
        rule, captures = found
        key = _group_key(rule, change, captures)
        groups.setdefault(key, (rule, []))[1].append((change, captures))
    for rule, members in groups.values():
        values = _template_vars(diff, members)
        first, captures = members[0]
        title = _render(rule.title, values)
        reboot = rule.reboot_reset and result.rebooted
        if reboot:
            title += " (reset by the reboot: boot id changed)"
        confidence = min(_MAX_CONFIDENCE, rule.prior * _size(rule, first) * _consistency(rule, moved))
        category = first.category if rule.inherit_category and first.category != "other" else rule.category
        explanation = Explanation(rule.id, category, title, tuple(sorted(c.path for c, _ in members)),
                                  round(confidence, 3), _render(rule.fix, values), reboot,
                                  _revert(rule, first, captures))
        (result.notes if rule.not_drift else result.explanations).append(explanation)
    order = lambda e: (-e.confidence, e.category, e.title)  # noqa: E731
    result.explanations = [_with_rank(e, i + 1) for i, e in enumerate(sorted(result.explanations, key=order))]
    result.notes = sorted(result.notes, key=order)
    # Every difference voids the suspects it touches, volatile and policy-ignored ones included: "checked
    # and unchanged" must never claim identical what changed.
    result.unchanged = unchanged_suspects(diff, catalog, diff.shown(include_volatile=True))
    return result


def _with_rank(explanation: Explanation, rank: int) -> Explanation:
    return Explanation(explanation.rule, explanation.category, explanation.title, explanation.evidence,
                       explanation.confidence, explanation.fix, explanation.reboot_reset, explanation.revert, rank)


# --- what was checked and found unchanged ------------------------------------------------------------

def _count_nodes(data: Any, pattern: PathPattern, prefix: tuple[PathPart, ...]) -> int:
    """How many nodes under `prefix` match `pattern` (a fixed-depth pattern: its segments bound the walk)."""
    depth = len(pattern.segments)
    count = 0

    def walk(node: Any, path: tuple[PathPart, ...]) -> None:
        nonlocal count
        if pattern.match(path) is not None:
            count += 1
            return
        if isinstance(node, dict) and len(path) < depth:
            for key, value in node.items():
                walk(value, (*path, key))

    walk(data, prefix)
    return count


def _touches_binaries(change: Change, dist: str) -> bool:
    """Whether a change of the kernels probe may concern the compiled files of `dist`: one of its files,
    its JIT cache, or a whole `files` / `modified_in_place` table (not the probe's hash cache)."""
    if change.probe != "kernels":
        return False
    if len(change.parts) <= 4:
        return any(_overlaps(change.parts, ("probes", "kernels", "data", table))
                   for table in ("files", "modified_in_place"))
    return change.parts[3] != "hash_cache" and _dist_of(str(change.parts[4]))[0] == dist


def _packages_unchanged(diff: SnapshotDiff, catalog: Catalog, changed: list[Change]) -> list[dict[str, str]]:
    before = _probe_data(diff.a, "packages").get("packages") or {}
    after = _probe_data(diff.b, "packages").get("packages") or {}
    kernels_ok = diff.a.probe_data("kernels") is not None and diff.b.probe_data("kernels") is not None
    files = _probe_data(diff.a, "kernels").get("files") or {}
    modified = _probe_data(diff.b, "kernels").get("modified_in_place") or {}
    out = []
    for name in catalog.packages:
        old, new = before.get(name), after.get(name)
        if not isinstance(old, dict) or not isinstance(new, dict) or old.get("version") != new.get("version"):
            continue
        if any(_overlaps(c.parts, ("probes", "packages", "data", "packages", name)) for c in changed):
            continue
        if any(name in (_probe_data(s, "packages").get("duplicates") or {}) for s in (diff.a, diff.b)):
            # Two copies installed: which one runs is not a fact the snapshot pins down.
            continue
        label = f"{new.get('name') or name} {new.get('version')}: same version"
        binaries = [key for key in files if _dist_of(key)[0] == name]
        if not kernels_ok or not binaries:
            out.append({"category": "package_version", "title": f"{label}, compiled files not recorded"})
            continue
        touched = any(_touches_binaries(c, name) for c in changed) or bool(modified.get(name))
        if not touched:
            out.append({"category": "package_binary",
                        "title": f"{label}, same binary ({len(binaries)} compiled file(s) identical)"})
    return out


def _overlaps(parts: tuple[PathPart, ...], target: tuple[PathPart, ...]) -> bool:
    """Whether a change at `parts` touches `target`: the same path, an ancestor or a descendant of it."""
    common = min(len(parts), len(target))
    return parts[:common] == target[:common]


def unchanged_suspects(diff: SnapshotDiff, catalog: Catalog, changed: list[Change]) -> list[dict[str, str]]:
    """The usual suspects that both snapshots recorded and that did not change.

    `changed` should be every change of the diff (volatile and policy-ignored ones too): a change at a
    suspect's path or at an ancestor of it (a whole GPU added or removed) voids the suspect.
    """
    out = _packages_unchanged(diff, catalog, changed)
    for suspect in catalog.suspects:
        if not suspect.probes:
            continue
        if any(diff.a.probe_data(p) is None or diff.b.probe_data(p) is None for p in suspect.probes):
            continue
        if any(pattern.covers(c.parts) for c in changed for pattern in suspect.patterns):
            continue
        title = suspect.title
        if suspect.count is not None:
            count = sum(_count_nodes(_probe_data(diff.a, p), suspect.count, ("probes", p, "data"))
                        for p in suspect.probes)
            title = title.replace("{n}", str(count))
        out.append({"category": suspect.category, "title": title})
    return sorted(out, key=lambda row: (row["category"], row["title"]))


# --- the JSON contract --------------------------------------------------------------------------------

def explain_report(result: Explained, include_volatile: bool = False) -> dict[str, Any]:
    """The `diff --format json` / `explain --format json` object of DESIGN.md, with notes added."""
    diff = result.diff
    catalog_category = {}
    for explanation in [*result.explanations, *result.notes]:
        for path in explanation.evidence:
            catalog_category[path] = explanation.category
    changes = []
    # Evidence is change paths: a volatile reading a rule weighed (a current clock, the boot id) is listed
    # even without --all, so every evidence path is in `changes`.
    evidenced = result.evidence_paths()
    for change in diff.shown(include_volatile=True):
        if change.volatile and not include_volatile and change.path not in evidenced:
            continue
        row = change.to_json()
        if row["category"] == "other" and change.path in catalog_category:
            row["category"] = catalog_category[change.path]
        changes.append(row)
    report: dict[str, Any] = {
        "a": diff.a.summary(),
        "b": diff.b.summary(),
        "explanations": [e.to_json() for e in result.explanations],
        "changes": changes,
        "unchanged": result.unchanged,
        "bench": result.bench,
        "notes": [{**e.to_json(), "rank": None} for e in result.notes],
        "rebooted": result.rebooted,
    }
    return report
