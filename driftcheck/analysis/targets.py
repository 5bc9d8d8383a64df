"""What a snapshot was taken of: its target (interpreter, host, server, benchmark suite), as it recorded it.

`check --against REF` retakes REF's target unless the user names another: a baseline saved with
`--python /venv/bin/python` is checked against that venv, not against driftcheck's own interpreter.
When two snapshots describe different targets, that is said first, and the facts only an interpreter
knows (its packages, their compiled files, its torch) are not compared: two interpreters' package
lists differ by design, and reading that as drift sends the user to reinstall what was never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from driftcheck.snapshot.model import Snapshot

# Probes whose facts belong to one interpreter: compared only between snapshots of the same interpreter.
INTERPRETER_PROBES = ("packages", "kernels", "torch")


@dataclass(frozen=True)
class Target:
    """What a snapshot recorded about its target; None where it recorded nothing."""

    python: str | None = None
    host: str | None = None
    server: str | None = None
    bench_suite: str | None = None
    bench_runs: int | None = None
    server_log: str | None = None


def _data(snapshot: Snapshot, probe: str) -> Mapping[str, object]:
    outcome = snapshot.document["probes"].get(probe) or {}
    data = outcome.get("data")
    return data if outcome.get("status") == "ok" and isinstance(data, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def recorded_python(snapshot: Snapshot) -> str | None:
    """The interpreter `snapshot` describes: the python probe's `executable`, else the packages probe's
    `interpreter`, else the host's `python` (what the snapshot was asked to probe)."""
    return (_text(_data(snapshot, "python").get("executable")) or _text(_data(snapshot, "packages").get("interpreter"))
            or _text((snapshot.document.get("host") or {}).get("python")))


def is_imported(snapshot: Snapshot) -> bool:
    """Whether the snapshot was built from pasted text: it names no interpreter path and no host."""
    return snapshot.document.get("origin") == "imported"


def reference_target(reference: Snapshot) -> Target:
    """What `reference` recorded about its target: interpreter, host, server URL, benchmark suite and runs,
    the server log it read.

    An imported report records no target (a paste names neither a path nor a machine we can reach).
    """
    if is_imported(reference):
        return Target()
    bench = _data(reference, "bench")
    runs = bench.get("runs")
    return Target(python=recorded_python(reference), host=_text(reference.document["host"].get("name")),
                  server=_text(_data(reference, "server").get("url")), bench_suite=_text(bench.get("suite")),
                  bench_runs=runs if isinstance(runs, int) and not isinstance(runs, bool) else None,
                  server_log=_server_log_path(reference))


def _server_log_path(reference: Snapshot) -> str | None:
    """The server log the reference's server probe read (`--server-log`), None when it read none."""
    log = _data(reference, "server").get("server_log")
    return _text(log.get("path")) if isinstance(log, dict) else None


@dataclass(frozen=True)
class TargetDifference:
    """How the targets of A and B differ: `interpreters` (A's path, B's path) and `hosts`, each or None."""

    interpreters: tuple[str, str] | None = None
    hosts: tuple[str, str] | None = None

    def __bool__(self) -> bool:
        return bool(self.interpreters or self.hosts)

    def line(self) -> str:
        """The one-line finding that leads the output: what differs, and what was therefore not compared."""
        parts = []
        if self.hosts:
            parts.append(f"another host (A {self.hosts[0]}, B {self.hosts[1]})")
        if self.interpreters:
            parts.append(f"another interpreter (A {self.interpreters[0]}, B {self.interpreters[1]}): "
                         f"{', '.join(INTERPRETER_PROBES)} not compared, two interpreters' packages differ by design")
        return "different targets: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The `targets` member of the JSON report."""
        return {"same": not self, "interpreters": list(self.interpreters) if self.interpreters else None,
                "hosts": list(self.hosts) if self.hosts else None, "line": self.line() if self else None,
                "not_compared": list(INTERPRETER_PROBES) if self.interpreters else []}


def _interpreter_records(snapshot: Snapshot) -> tuple[str | None, str | None, str | None]:
    """The interpreter path as the python probe, the packages probe and the host record give it."""
    return (_text(_data(snapshot, "python").get("executable")), _text(_data(snapshot, "packages").get("interpreter")),
            _text((snapshot.document.get("host") or {}).get("python")))


def _interpreters(a: Snapshot, b: Snapshot) -> tuple[str, str] | None:
    """A's and B's interpreter paths when they differ, read from the first source both sides hold: a path as
    typed and the one the interpreter reports for itself may differ for one interpreter."""
    for pa, pb in zip(_interpreter_records(a), _interpreter_records(b), strict=True):
        if pa and pb:
            return (pa, pb) if pa != pb else None
    return None


def target_difference(a: Snapshot, b: Snapshot) -> TargetDifference:
    """How A's and B's recorded targets differ; nothing when either side does not say (an imported report)."""
    if is_imported(a) or is_imported(b):
        return TargetDifference()
    ta, tb = reference_target(a), reference_target(b)
    interpreters = _interpreters(a, b)
    prefixes = [_text(_data(side, "python").get("prefix")) for side in (a, b)]
    if interpreters and prefixes[0] and prefixes[0] == prefixes[1]:
        # `bin/python` and `bin/python3` of one environment: one interpreter, one set of packages.
        interpreters = None
    hosts = (ta.host, tb.host) if ta.host and tb.host and ta.host != tb.host else None
    return TargetDifference(interpreters, hosts)
