"""Probes that misbehave on purpose, for the runner's tests (importable by an isolated child process)."""

from __future__ import annotations

import os
import time
from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeDenied, ProbeOptions


class FastProbe(Probe):
    name = "fast"
    timeout_s = 5.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return {"pid": os.getpid()}

    def parse(self, raw: Any) -> dict[str, Any]:
        return {"gathered_in_pid": raw["pid"]}


class IsolatedFastProbe(FastProbe):
    name = "isolated_fast"
    isolated = True


class SteppingProbe(Probe):
    """Reports two steps of its work, as the benchmark probe reports its runs."""

    name = "isolated_steps"
    isolated = True
    timeout_s = 10.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        for step in ("run 1/2: done", "run 2/2: done"):
            if self.steps:
                self.steps(step)
        return {"pid": os.getpid()}

    def parse(self, raw: Any) -> dict[str, Any]:
        return {"gathered_in_pid": raw["pid"]}


class HangingProbe(Probe):
    name = "hangs"
    timeout_s = 0.5

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        time.sleep(3600)

    def parse(self, raw: Any) -> dict[str, Any]:
        return {}


class IsolatedHangingProbe(HangingProbe):
    name = "isolated_hangs"
    isolated = True
    timeout_s = 1.0


class CrashingProbe(Probe):
    """Kills its interpreter the way a faulting CUDA/NVML initialisation would."""

    name = "crashes"
    isolated = True
    timeout_s = 10.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        os.abort()

    def parse(self, raw: Any) -> dict[str, Any]:
        return {}


class BrokenProbe(Probe):
    name = "broken"

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return {"value": "not a number"}

    def parse(self, raw: Any) -> dict[str, Any]:
        return {"value": int(raw["value"])}


class MissingFileProbe(Probe):
    name = "missing"

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return host.read_text("/nonexistent/driftcheck/file")

    def parse(self, raw: Any) -> dict[str, Any]:
        return {}


class DeniedProbe(Probe):
    name = "denied"

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        raise ProbeDenied("needs root to read /dev/mem")

    def parse(self, raw: Any) -> dict[str, Any]:
        return {}


class NeedsBrokenProbe(FastProbe):
    name = "needs_broken"
    requires = ("broken",)


class NeedsFastProbe(FastProbe):
    name = "needs_fast"
    requires = ("fast",)
