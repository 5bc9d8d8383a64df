"""A child for the protocol's tests (run as `python -m tests.hosts.child_work`): does what it is asked."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from driftcheck.errors import UsageError
from driftcheck.hosts.child import report_step, serve


def work(request: dict[str, Any]) -> Any:
    """Echo, raise, exit or hang, as `request["do"]` says; report `request["steps"]` first."""
    do = request["do"]
    for step in request.get("steps") or []:
        report_step(step)
    if request.get("complain"):
        sys.stderr.write(request["complain"] + "\n")
    if do == "usage":
        raise UsageError("no such suite")
    if do == "crash":
        raise ValueError("bad value")
    if do == "exit":
        os._exit(3)
    if do == "hang":
        time.sleep(60)
    return {"echo": request.get("value")}


if __name__ == "__main__":
    sys.exit(serve(work))
