"""Child-process side of an isolated probe: gather on this machine and print the raw result as JSON.

Started by the runner as `python -m driftcheck.probes.isolated` with a JSON request on stdin, so that
a probe whose library hangs or crashes the interpreter (CUDA, NVML initialisation) takes only this
process down.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from typing import Any

from driftcheck.hosts import LocalHost
from driftcheck.probes.base import ProbeOptions


def main() -> int:
    request = json.loads(sys.stdin.read())
    module_name, _, qualname = request["probe"].partition(":")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    probe = target()
    host = LocalHost(request["python"])
    try:
        raw = probe.gather(host, ProbeOptions.from_json(request["options"]))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides the outcome
        reply = {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__,
                 "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))}
        sys.stdout.write(json.dumps(reply))
        return 0
    sys.stdout.write(json.dumps({"raw": raw}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
