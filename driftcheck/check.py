"""`driftcheck check`: the pre-benchmark gate. A fresh snapshot against a reference, under a policy.

The policy (YAML) says what may differ (`ignore`: path patterns), by how much a number may move
(`tolerances`), and what must hold on this machine whatever the reference says (`must`). A must
that fails is drift even when nothing differs from the reference.

    ignore:
      - probes.env.data.vars.HOSTNAME
    tolerances:
      - {match: "probes.gpu.data.gpus.*.clocks.sm_mhz", abs: 30}
      - {match: "probes.system.data.memory.total_kib", rel: 0.01}
    must:
      - {match: "probes.gpu.data.gpus.*.persistence_mode", equals: true}
      - {match: "probes.gpu.data.gpus.*.locked_clocks.gpu_max_mhz", equals: 1980}
      - {match: "probes.gpu.data.gpus.*.processes", equals: {}}
      - {match: "probes.env.data.vars.NCCL_*", exactly: {NCCL_CUMEM_ENABLE: "0"}}
      - {match: "probes.env.data.vars.OMP_NUM_THREADS", in: ["8", "16"]}
      - {match: "probes.env.data.vars.NCCL_P2P_DISABLE", absent: true}
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from driftcheck.callable_module import make_callable
from driftcheck.errors import DriftcheckError, UnknownSnapshotError, UsageError
from driftcheck.probes import probe_class
from driftcheck.snapshot.baselines import Baselines
from driftcheck.snapshot.diff import Change, diff_snapshots
from driftcheck.snapshot.explain import Explained, explain
from driftcheck.snapshot.explain.values import show_value
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart, format_path
from driftcheck.snapshot.resolve import resolve_snapshot
from driftcheck.snapshot.rules import PathPattern, RuleCatalogError, compile_pattern
from driftcheck.snapshot.store import Store

_CHECKS = ("equals", "in", "min", "max", "absent", "exactly")


class PolicyError(DriftcheckError):
    """A policy file that cannot be read or says something driftcheck does not understand."""


@dataclass(frozen=True)
class Tolerance:
    """A number under `pattern` may move by `abs` (units of the fact) or `rel` (fraction) without counting."""

    pattern: PathPattern
    absolute: float | None = None
    relative: float | None = None

    def allows(self, change: Change) -> bool:
        if change.kind != "changed" or self.pattern.match(change.parts) is None:
            return False
        before, after = change.before, change.after
        if isinstance(before, bool) or isinstance(after, bool) or \
                not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
            return False
        delta = abs(after - before)
        if self.absolute is not None and delta <= self.absolute:
            return True
        return self.relative is not None and delta <= self.relative * max(abs(before), abs(after))


@dataclass(frozen=True)
class Must:
    """A fact that must hold on the checked machine."""

    pattern: PathPattern
    check: str
    value: Any
    why: str = ""


@dataclass(frozen=True)
class Policy:
    """What may differ, by how much, and what must hold."""

    ignore: tuple[PathPattern, ...] = ()
    tolerances: tuple[Tolerance, ...] = ()
    must: tuple[Must, ...] = ()

    def ignores(self, change: Change) -> bool:
        """Whether the policy lets `change` pass (an ignore pattern, or within a tolerance)."""
        return any(p.match(change.parts) is not None for p in self.ignore) or \
            any(t.allows(change) for t in self.tolerances)


def _pattern(value: Any, where: str) -> PathPattern:
    try:
        return compile_pattern(str(value))
    except RuleCatalogError as exc:
        raise PolicyError(f"{where}: {exc}") from None


def _list_of(document: dict[str, Any], key: str, source: str, kind: type) -> list[Any]:
    """`document[key]` as a list of `kind` items (absent: empty); PolicyError naming the key otherwise."""
    value = document.get(key)
    if value is None:
        return []
    noun = "path patterns" if kind is str else "mappings"
    if not isinstance(value, list) or not all(isinstance(item, kind) for item in value):
        raise PolicyError(f"{source}: `{key}` takes a list of {noun}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PolicyError(f"{where} must be a number, not {value!r}")
    return float(value)


def parse_policy(document: Any, source: str) -> Policy:
    """A Policy from the parsed YAML document."""
    if document is None:
        return Policy()
    if not isinstance(document, dict) or set(document) - {"ignore", "tolerances", "must"}:
        raise PolicyError(f"{source}: a policy is a mapping of ignore, tolerances and must")
    ignore = tuple(_pattern(p, f"{source}: ignore") for p in _list_of(document, "ignore", source, str))
    tolerances = []
    for i, entry in enumerate(_list_of(document, "tolerances", source, dict)):
        where = f"{source}: tolerances[{i}]"
        if "match" not in entry or not ({"abs", "rel"} & set(entry)):
            raise PolicyError(f"{where}: needs `match` and `abs` or `rel`")
        bounds = [_number(entry[key], f"{where}: `{key}`") for key in ("abs", "rel") if key in entry]
        if any(bound < 0 for bound in bounds):
            raise PolicyError(f"{where}: `abs` and `rel` cannot be negative")
        tolerances.append(Tolerance(_pattern(entry["match"], where),
                                    float(entry["abs"]) if "abs" in entry else None,
                                    float(entry["rel"]) if "rel" in entry else None))
    must = []
    for i, entry in enumerate(_list_of(document, "must", source, dict)):
        where = f"{source}: must[{i}]"
        checks = [key for key in _CHECKS if isinstance(entry, dict) and key in entry]
        if not isinstance(entry, dict) or "match" not in entry or len(checks) != 1:
            raise PolicyError(f"{where}: needs `match` and exactly one of {', '.join(_CHECKS)}")
        check = checks[0]
        if check == "in" and not isinstance(entry["in"], list):
            raise PolicyError(f"{where}: `in` takes a list")
        if check == "exactly" and not isinstance(entry["exactly"], dict):
            raise PolicyError(f"{where}: `exactly` takes a mapping of NAME: value")
        if check in ("min", "max"):
            _number(entry[check], f"{where}: `{check}`")
        must.append(Must(_pattern(entry["match"], where), check, entry[check], str(entry.get("why", ""))))
    return Policy(ignore, tuple(tolerances), tuple(must))


def load_policy(path: Path) -> Policy:
    """Read a policy file; PolicyError (one line) when it is missing or malformed."""
    try:
        document = yaml.safe_load(path.read_text("utf-8"))
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: not a YAML text file (not UTF-8)") from None
    except yaml.YAMLError as exc:
        raise PolicyError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return parse_policy(document, str(path))


def leaves(data: Any, prefix: tuple[PathPart, ...] = ()) -> Iterator[tuple[tuple[PathPart, ...], Any]]:
    """Every (path, value) of `data`, where an empty mapping or any non-mapping is a leaf."""
    if isinstance(data, dict) and data:
        for key in sorted(data):
            yield from leaves(data[key], (*prefix, str(key)))
    else:
        yield prefix, data


def _node_matches(document: dict[str, Any], pattern: PathPattern) -> list[tuple[tuple[PathPart, ...], Any]]:
    """Nodes (leaves or inner mappings) whose path matches `pattern`."""
    found = []

    def walk(node: Any, prefix: tuple[PathPart, ...]) -> None:
        if prefix and pattern.match(prefix) is not None:
            found.append((prefix, node))
        if isinstance(node, dict):
            for key in sorted(node):
                walk(node[key], (*prefix, str(key)))

    walk(document, ())
    return found


def _violation(must: Must, text: str) -> str:
    return f"{text}" + (f" ({must.why})" if must.why else "")


def violations(policy: Policy, snapshot: Snapshot) -> list[str]:
    """What the policy's `must` facts say is wrong with `snapshot`, one line each."""
    out: list[str] = []
    for must in policy.must:
        nodes = _node_matches(snapshot.document, must.pattern)
        source = must.pattern.source
        if must.check == "absent":
            out.extend(_violation(must, f"{format_path(p)} is {show_value(v)}, must be absent") for p, v in nodes)
            continue
        if must.check == "exactly":
            actual = {str(p[-1]): v for p, v in nodes}
            wanted = {str(k): v for k, v in must.value.items()}
            if actual != wanted:
                extra = sorted(set(actual) - set(wanted))
                missing = sorted(set(wanted) - set(actual))
                wrong = sorted(k for k in set(actual) & set(wanted) if actual[k] != wanted[k])
                reasons = ([f"unexpected {', '.join(extra)}"] if extra else []) + \
                    ([f"missing {', '.join(missing)}"] if missing else []) + \
                    [f"{k}={show_value(actual[k])} (must be {show_value(wanted[k])})" for k in wrong]
                out.append(_violation(must, f"{source}: " + "; ".join(reasons)))
            continue
        if not nodes:
            out.append(_violation(must, f"{source}: not recorded in the snapshot (is its probe taken?)"))
            continue
        for path, value in nodes:
            problem = _must_problem(must, value)
            if problem:
                out.append(_violation(must, f"{format_path(path)} is {show_value(value)}, {problem}"))
    return out


def _must_problem(must: Must, value: Any) -> str | None:
    if must.check == "equals":
        return None if value == must.value else f"must be {show_value(must.value)}"
    if must.check == "in":
        return None if value in must.value else f"must be one of {show_value(must.value)}"
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None:
        return f"must be a number {'>=' if must.check == 'min' else '<='} {must.value}"
    if must.check == "min":
        return None if number >= float(must.value) else f"must be >= {must.value}"
    return None if number <= float(must.value) else f"must be <= {must.value}"


def check_reference(against: str | None, store: Store, host_name: str) -> Snapshot:
    """What `driftcheck check` compares with: `against` (a baseline name or any snapshot reference), else
    baseline `default`, else the newest snapshot probed on this host (never an import or a replay)."""
    baselines = Baselines(store)
    names = [b.name for b in baselines.entries()]
    if against:
        if against in names:
            return baselines.snapshot(against)
        try:
            return resolve_snapshot(against, store)
        except UnknownSnapshotError as exc:
            known = f"baselines: {', '.join(names)}" if names else "no baselines saved yet"
            raise UnknownSnapshotError(against, f"no such baseline, and {exc.reason} ({known})") from None
    if "default" in names:
        return baselines.snapshot("default")
    for entry in store.entries():
        if entry.host != host_name:
            continue
        snapshot = resolve_snapshot(entry.id, store)
        if snapshot.document.get("origin") == "probed":
            return snapshot
    raise UsageError(f"nothing to check against: no baseline `default` and no snapshot probed on {host_name}; "
                     "run `driftcheck baseline save default` first")


def probes_to_check(reference: Snapshot) -> list[str]:
    """The cheap built-in probes that `reference` holds: what a fresh check must take to compare with it."""
    names = []
    for name in reference.document["probes"]:
        cls = probe_class(name)
        if cls is not None and cls.cheap and not cls.on_request:
            names.append(name)
    return names


def restricted_to(reference: Snapshot, probes: list[str]) -> Snapshot:
    """`reference` with only the probes a check took, so probes it left out are not "missing"."""
    document = copy.deepcopy(reference.document)
    document["probes"] = {name: outcome for name, outcome in document["probes"].items() if name in probes}
    return Snapshot(document, reference.source)


# Causes below this confidence (an unrelated variable such as LANG, a fact no rule knows) are shown
# but do not fail the gate on their own.
DEFAULT_MIN_CONFIDENCE = 0.1


@dataclass
class CheckResult:
    """The verdict of `driftcheck check`."""

    reference: Snapshot
    fresh: Snapshot
    explained: Explained
    violations: list[str] = field(default_factory=list)
    min_confidence: float = DEFAULT_MIN_CONFIDENCE

    @property
    def relevant(self) -> list[Any]:
        """The explanations confident enough to count as drift."""
        return [e for e in self.explained.explanations if e.confidence >= self.min_confidence]

    @property
    def drift(self) -> bool:
        """The verdict: a confident enough cause, or a policy violation."""
        return bool(self.relevant or self.violations)

    def to_json(self) -> dict[str, Any]:
        """What `driftcheck check --format json` prints: the explain report, the violations, the verdict."""
        report = self.explained.to_json()
        report["violations"] = self.violations
        report["drift"] = self.drift
        return report


def check_against(reference: Snapshot, fresh: Snapshot, policy: Policy | None = None,
                  min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> CheckResult:
    """Compare `fresh` with `reference` (only the probes `fresh` took) and apply the policy."""
    policy = policy or Policy()
    base = restricted_to(reference, list(fresh.document["probes"]))
    explained = explain(diff_snapshots(base, fresh), ignore=policy.ignores)
    return CheckResult(reference, fresh, explained, violations(policy, fresh), min_confidence)


# `driftcheck.check(...)` is the harness call of `driftcheck.api`; this module stays importable as itself.
make_callable(__name__, "driftcheck.api", "check")
