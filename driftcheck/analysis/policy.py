"""The gate's policy: what may differ, by how much, and what must hold whatever the reference says.

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

from dataclasses import dataclass
from typing import TypeVar

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.values import show_value
from driftcheck.errors import DriftcheckError, RuleCatalogError
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.paths import PathPart, format_path
from driftcheck.snapshot.patterns import PathPattern, compile_pattern

_CHECKS = ("equals", "in", "min", "max", "absent", "exactly")
_Item = TypeVar("_Item")


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
    value: object  # as the policy file gives it: a list for `in`, a mapping for `exactly`, a number for min/max
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


def _pattern(value: object, where: str) -> PathPattern:
    try:
        return compile_pattern(str(value))
    except RuleCatalogError as exc:
        raise PolicyError(f"{where}: {exc}") from None


def _list_of(document: dict[str, object], key: str, source: str, kind: type[_Item]) -> list[_Item]:
    """`document[key]` as a list of `kind` items (absent: empty); PolicyError naming the key otherwise."""
    value = document.get(key)
    if value is None:
        return []
    noun = "path patterns" if kind is str else "mappings"
    if not isinstance(value, list) or not all(isinstance(item, kind) for item in value):
        raise PolicyError(f"{source}: `{key}` takes a list of {noun}")
    return value


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PolicyError(f"{where} must be a number, not {value!r}")
    return float(value)


def parse_policy(document: object, source: str) -> Policy:
    """A Policy from the parsed YAML document (reading the file is the caller's: analysis does no I/O)."""
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


def _node_matches(document: dict[str, object], pattern: PathPattern) -> list[tuple[tuple[PathPart, ...], object]]:
    """Nodes (leaves or inner mappings) whose path matches `pattern`."""
    found: list[tuple[tuple[PathPart, ...], object]] = []

    def walk(node: object, prefix: tuple[PathPart, ...]) -> None:
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
            wanted = {str(k): v for k, v in must.value.items()} if isinstance(must.value, dict) else {}
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


def _must_problem(must: Must, value: object) -> str | None:
    if must.check == "equals":
        return None if value == must.value else f"must be {show_value(must.value)}"
    if must.check == "in":
        allowed = must.value if isinstance(must.value, list) else []  # parse_policy lets `in` take only a list
        return None if value in allowed else f"must be one of {show_value(must.value)}"
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None:
        return f"must be a number {'>=' if must.check == 'min' else '<='} {must.value}"
    bound = _number(must.value, must.pattern.source)  # checked a number when the policy was parsed
    if must.check == "min":
        return None if number >= bound else f"must be >= {must.value}"
    return None if number <= bound else f"must be <= {must.value}"
