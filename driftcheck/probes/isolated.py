"""Child-process side of an isolated probe: gather on this machine and reply with the raw result.

Started by the runner through the child protocol (`driftcheck.hosts.child`: a JSON request on
stdin, one JSON reply on stdout), so that a probe whose library hangs or crashes the interpreter (CUDA,
NVML initialisation) takes only this process down.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from driftcheck.hosts import LocalHost
from driftcheck.hosts.child import report_step, serve
from driftcheck.probes.base import ProbeOptions


def gather(request: dict[str, Any]) -> Any:
    """The raw result of the probe named in `request` (`module:Class`), gathered here."""
    module_name, _, qualname = request["probe"].partition(":")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    probe = target()
    probe.steps = report_step  # back to the parent, which shows them where the user asked for progress
    return probe.gather(LocalHost(request["python"]), ProbeOptions.from_json(request["options"]))


if __name__ == "__main__":
    sys.exit(serve(gather))
