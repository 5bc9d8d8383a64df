"""Work done in a fresh child interpreter, so that a crash, a hang or a library's global state stays there.

One protocol for every such child (an isolated probe, `probes/isolated.py`; one run of a benchmark suite,
`baselines/one_run.py`): the parent starts `python -m <module>`, writes one JSON request on its stdin
and reads one JSON reply from its stdout, `{"result": ...}` or `{"error": {"type", "message", "traceback",
"exit_code"}}` when the work raised. The parent sees a reply as the result or as `ChildFailed`; a child
that runs past its time is killed (`ChildTimeout`); one that dies (a signal, a non-zero exit) or prints
no reply is `ChildDied`, with the last line of its stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
from collections.abc import Callable
from typing import Any


class ChildTimeout(Exception):
    """The child ran past its time limit and was killed."""


class ChildDied(Exception):
    """The child ended without a reply: killed by a signal, a non-zero exit, or nothing JSON printed."""


class ChildFailed(Exception):
    """The child's work raised: its type name, message and short traceback (and exit code, if it has one)."""

    def __init__(self, type_name: str, message: str, child_traceback: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.child_traceback = child_traceback
        self.exit_code = exit_code


def call(module: str, request: Any, timeout_s: float) -> Any:
    """Run `python -m module` with `request` on its stdin; its result, or the failure it reported."""
    try:
        done = subprocess.run([sys.executable, "-m", module], input=json.dumps(request).encode("utf-8"),
                              capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ChildTimeout(f"ran past {timeout_s:g} s and was killed") from exc
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", errors="replace").strip()
        last = stderr.splitlines()[-1] if stderr else ""
        how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit code {done.returncode}"
        raise ChildDied(f"died with {how}" + (f": {last}" if last else ""))
    try:
        reply = json.loads(done.stdout)
    except ValueError:
        raise ChildDied("printed no reply") from None
    if isinstance(reply, dict) and "result" in reply:
        return reply["result"]
    error = reply.get("error") if isinstance(reply, dict) else None
    if not isinstance(error, dict):
        raise ChildDied("printed no reply")
    code = error.get("exit_code")
    raise ChildFailed(str(error.get("type")), str(error.get("message")), str(error.get("traceback") or ""),
                      code if isinstance(code, int) else None)


def serve(work: Callable[[Any], Any], sort_keys: bool = False, as_text: bool = False) -> int:
    """The child's side: run `work` on the request read from stdin and print the reply; the exit status.

    `as_text` writes values JSON cannot hold as their text; else such a result is the child's crash."""
    request = json.loads(sys.stdin.read())
    try:
        result = work(request)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides what it means
        code = getattr(exc, "exit_code", None)
        error = {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__,
                 "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4)),
                 "exit_code": code if isinstance(code, int) else None}
        sys.stdout.write(json.dumps({"error": error}))
        return 0
    sys.stdout.write(json.dumps({"result": result}, sort_keys=sort_keys, default=str if as_text else None) + "\n")
    return 0
