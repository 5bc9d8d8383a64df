"""The built-in probes, listed explicitly: the order here is the order of a snapshot's report."""

from __future__ import annotations

from driftcheck.errors import UsageError
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.bench import BenchProbe
from driftcheck.probes.clocksource import ClocksourceProbe
from driftcheck.probes.cpu import CpuProbe
from driftcheck.probes.daemons import DaemonsProbe
from driftcheck.probes.env import EnvProbe
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.kernels import KernelsProbe
from driftcheck.probes.nccl import NcclProbe
from driftcheck.probes.packages import PackagesProbe
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.process import ProcessProbe
from driftcheck.probes.python import PythonProbe
from driftcheck.probes.redact import Redactor
from driftcheck.probes.server import ServerProbe
from driftcheck.probes.system import SystemProbe
from driftcheck.probes.torch import TorchProbe
from driftcheck.probes.workdir import WorkdirProbe
from driftcheck.snapshot.probe_names import PROBE_NAMES

_REGISTERED: dict[str, type[Probe]] = {cls.name: cls for cls in (
    PythonProbe, EnvProbe, PackagesProbe, KernelsProbe, TorchProbe, GpuProbe, PcieProbe, NcclProbe, SystemProbe,
    CpuProbe, DaemonsProbe, ClocksourceProbe, ProcessProbe, ServerProbe, WorkdirProbe, BenchProbe)}
if set(_REGISTERED) != set(PROBE_NAMES):  # one list of names (snapshot/probe_names.py), one class for each
    raise ImportError(f"probe classes {sorted(_REGISTERED)} do not match PROBE_NAMES {sorted(PROBE_NAMES)}")
PROBE_CLASSES: tuple[type[Probe], ...] = tuple(_REGISTERED[name] for name in PROBE_NAMES)


def probe_class(name: str) -> type[Probe] | None:
    """The built-in probe class called `name`, or None."""
    return next((cls for cls in PROBE_CLASSES if cls.name == name), None)


def builtin_probes(redactor: Redactor) -> list[Probe]:
    """One instance of every built-in probe; probes that handle secrets get the user's redactor."""
    return [cls(redactor) if cls.needs_redactor else cls() for cls in PROBE_CLASSES]  # type: ignore[call-arg]


def select_probes(probes: list[Probe], only: list[str] | None = None, skip: list[str] | None = None,
                  cheap_only: bool = False, options: ProbeOptions | None = None) -> list[Probe]:
    """The probes a run takes: `only` (if given, else the default set) minus `skip`.

    An `on_request` probe (process, bench) is in the default set only when `options` ask for it, and is
    added to `only` when they do. With `cheap_only` the default set keeps the cheap probes. Unknown names
    are a UsageError.
    """
    known = {p.name for p in probes}
    unknown = sorted({*(only or []), *(skip or [])} - known)
    if unknown:
        raise UsageError(f"unknown probe {', '.join(unknown)}; known probes: {', '.join(sorted(known))}")
    options = options or ProbeOptions()

    def taken(probe: Probe) -> bool:
        if probe.on_request and probe.requested(options):
            return True
        if only:
            return probe.name in only
        return not probe.on_request and (probe.cheap or not cheap_only)

    return [p for p in probes if taken(p) and p.name not in (skip or [])]


__all__ = ["PROBE_CLASSES", "Probe", "ProbeOptions", "builtin_probes", "probe_class", "probe_names",
           "select_probes"]
