"""Work done in a fresh child interpreter, so that a crash, a hang or a library's global state stays there.

One protocol for every such child (an isolated probe, `probes/isolated.py`; one run of a benchmark suite,
`baselines/one_run.py`): the parent starts `python -m <module>`, writes one JSON request on its stdin
and reads one JSON reply from its stdout, `{"result": ...}` or `{"error": {"type", "message", "traceback",
"exit_code"}}` when the work raised. The parent sees a reply as the result or as `ChildFailed`; a child
that runs past its time is killed (`ChildTimeout`); one that dies (a signal, a non-zero exit) or prints
no reply is `ChildDied`, with the last line of its stderr. A child may report steps of long work
(`report_step`: a benchmark's runs) as stderr lines the parent hands to `call`'s `on_step` as they come.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

# Marks a stderr line of the child as a step of its work for the parent to show, not as a complaint.
STEP_PREFIX = "driftcheck-step: "
StepReporter = Callable[[str], None]


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


def report_step(line: str) -> None:
    """The child's side of a step report: one line on stderr that `call(on_step=...)` hands on."""
    sys.stderr.write(STEP_PREFIX + line.replace("\n", " ") + "\n")
    sys.stderr.flush()


def call(module: str, request: Any, timeout_s: float, on_step: StepReporter | None = None) -> Any:
    """Run `python -m module` with `request` on its stdin; its result, or the failure it reported.
    `on_step` receives the steps the child reports (`report_step`) while it works."""
    argv = [sys.executable, "-m", module]
    data = json.dumps(request).encode("utf-8")
    try:
        if on_step is None:
            done = subprocess.run(argv, input=data, capture_output=True, timeout=timeout_s, check=False)
            returncode, stdout, stderr_bytes = done.returncode, done.stdout, done.stderr
        else:
            returncode, stdout, stderr_bytes = _run_reporting(argv, data, timeout_s, on_step)
    except subprocess.TimeoutExpired as exc:
        raise ChildTimeout(f"ran past {timeout_s:g} s and was killed") from exc
    if returncode != 0:
        stderr = stderr_bytes.decode("utf-8", errors="replace").strip()
        last = stderr.splitlines()[-1] if stderr else ""
        how = f"signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
        raise ChildDied(f"died with {how}" + (f": {last}" if last else ""))
    try:
        reply = json.loads(stdout)
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


def _run_reporting(argv: list[str], data: bytes, timeout_s: float,
                   on_step: StepReporter) -> tuple[int, bytes, bytes]:
    """`subprocess.run` with captured output, handing each step line of stderr to `on_step` as it comes;
    the other stderr lines are kept, as `run` keeps them. A child past `timeout_s` is killed (TimeoutExpired)."""
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdout: list[bytes] = []
    kept: list[bytes] = []

    def read_stdout(stream: IO[bytes]) -> None:
        stdout.append(stream.read())

    def read_stderr(stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", errors="replace")
            if line.startswith(STEP_PREFIX):
                try:
                    on_step(line[len(STEP_PREFIX):].rstrip("\n"))
                except Exception:  # a reporter that fails (a closed terminal) must not stop this pipe's draining
                    continue
            else:
                kept.append(raw)

    readers = [threading.Thread(target=read_stdout, args=(process.stdout,), daemon=True),
               threading.Thread(target=read_stderr, args=(process.stderr,), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        process.stdin.write(data)
        process.stdin.close()
    except BrokenPipeError:  # the child ended before reading: its exit says why
        pass
    try:
        process.wait(timeout_s)
    except BaseException:  # past its time, or Ctrl-C here: the child goes too, then its pipes close
        process.kill()
        process.wait()
        raise
    finally:
        for reader in readers:
            reader.join()
    return process.returncode, b"".join(stdout), b"".join(kept)


def serve(work: Callable[[Any], Any], sort_keys: bool = False, as_text: bool = False) -> int:
    """The child's side: run `work` on the request read from stdin and print the reply; the exit status.

    `as_text` writes values JSON cannot hold as their text; else such a result is the child's crash."""
    request = json.loads(sys.stdin.read())
    try:
        result = work(request)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides what it means
        import traceback  # only here: the parent imports this module for every snapshot, where nothing fails

        code = getattr(exc, "exit_code", None)
        error = {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__,
                 "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4)),
                 "exit_code": code if isinstance(code, int) else None}
        sys.stdout.write(json.dumps({"error": error}))
        return 0
    sys.stdout.write(json.dumps({"result": result}, sort_keys=sort_keys, default=str if as_text else None) + "\n")
    return 0
