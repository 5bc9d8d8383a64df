"""The built-in probes, listed explicitly: the order here is the order of a snapshot's report."""

from __future__ import annotations

from driftcheck.errors import UsageError
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.bench import BenchProbe
from driftcheck.probes.env import EnvProbe
from driftcheck.probes.python import PythonProbe
from driftcheck.redact import Redactor

PROBE_CLASSES: tuple[type[Probe], ...] = (
    PythonProbe,
    EnvProbe,
    BenchProbe,
)


def probe_names() -> list[str]:
    """Names of every built-in probe, in report order."""
    return [cls.name for cls in PROBE_CLASSES]


def probe_class(name: str) -> type[Probe] | None:
    """The built-in probe class called `name`, or None."""
    return next((cls for cls in PROBE_CLASSES if cls.name == name), None)


def builtin_probes(redactor: Redactor) -> list[Probe]:
    """One instance of every built-in probe; probes that handle secrets get the user's redactor."""
    return [cls(redactor) if cls.needs_redactor else cls() for cls in PROBE_CLASSES]  # type: ignore[call-arg]


def select_probes(probes: list[Probe], only: list[str] | None = None, skip: list[str] | None = None,
                  cheap_only: bool = False) -> list[Probe]:
    """The probes a run takes: `only` (if given) minus `skip`; unknown names are a UsageError.

    Opt-in probes (`opt_in = True`, e.g. `bench`) are taken only when `only` names them."""
    known = {p.name for p in probes}
    unknown = sorted({*(only or []), *(skip or [])} - known)
    if unknown:
        raise UsageError(f"unknown probe {', '.join(unknown)}; known probes: {', '.join(sorted(known))}")
    chosen = [p for p in probes if p.name in only] if only else \
        [p for p in probes if not getattr(p, "opt_in", False)]
    if cheap_only and not only:
        chosen = [p for p in chosen if p.cheap]
    return [p for p in chosen if p.name not in (skip or [])]


__all__ = ["PROBE_CLASSES", "Probe", "ProbeOptions", "builtin_probes", "probe_class", "probe_names",
           "select_probes"]
