"""The built-in probes, listed explicitly: the order here is the order of a snapshot's report."""

from __future__ import annotations

from driftcheck.errors import UsageError
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.env import EnvProbe
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.kernels import KernelsProbe
from driftcheck.probes.nccl import NcclProbe
from driftcheck.probes.packages import PackagesProbe
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.process import ProcessProbe
from driftcheck.probes.python import PythonProbe
from driftcheck.probes.system import SystemProbe
from driftcheck.probes.torch import TorchProbe
from driftcheck.redact import Redactor

PROBE_CLASSES: tuple[type[Probe], ...] = (
    PythonProbe,
    EnvProbe,
    PackagesProbe,
    KernelsProbe,
    TorchProbe,
    GpuProbe,
    PcieProbe,
    NcclProbe,
    SystemProbe,
    ProcessProbe,
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
                  cheap_only: bool = False, options: ProbeOptions | None = None) -> list[Probe]:
    """The probes a run takes: `only` (if given) minus `skip`; unknown names are a UsageError.

    Without `only`, an `on_request` probe is taken only when `options` ask for it.
    """
    known = {p.name for p in probes}
    unknown = sorted({*(only or []), *(skip or [])} - known)
    if unknown:
        raise UsageError(f"unknown probe {', '.join(unknown)}; known probes: {', '.join(sorted(known))}")
    options = options or ProbeOptions()
    if only:
        chosen = [p for p in probes if p.name in only]
    else:
        chosen = [p for p in probes if not p.on_request or p.requested(options)]
    if cheap_only and not only:
        chosen = [p for p in chosen if p.cheap]
    return [p for p in chosen if p.name not in (skip or [])]


__all__ = ["PROBE_CLASSES", "Probe", "ProbeOptions", "builtin_probes", "probe_class", "probe_names",
           "select_probes"]
