# Batch reader run by the *target* interpreter on a remote host (e.g. `ssh node7 python3 -c <this>`).
# Stdlib only, Python 3.8+: nothing of driftcheck is installed there. It serves requests on stdin
# until end of file: each a JSON document (files to read, directories to list, commands to run,
# facts scripts to run) framed by its length on a line of its own, each answered the same way on
# stdout. A whole layer of a snapshot's reads costs one round trip, not one per file, and the shell
# and interpreter start once per snapshot, not once per request.
# Reads of /proc/self/* happen in this process: the target interpreter's own view, not a `cat`'s.
# Every command and script runs under its own time limit; a failure is an answer, never an exception.
import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading

MIN_VERSION = (3, 8)


def _failure(exc, name=None):
    return {"error": name or type(exc).__name__, "message": str(exc) or type(exc).__name__}


def _read(path):
    try:
        with open(path, "rb") as handle:
            return {"b64": base64.b64encode(handle.read()).decode("ascii")}
    except OSError as exc:
        return _failure(exc)


def _list(path):
    try:
        return {"names": sorted(os.listdir(path))}
    except OSError as exc:
        return _failure(exc)


def _decode(data):
    return data.decode("utf-8", errors="replace")


def _run(argv, timeout_s, cwd=None):
    try:
        completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s, cwd=cwd,
                                   check=False)
    except subprocess.TimeoutExpired:
        return {"error": "CommandTimeout", "message": argv[0] + " ran past " + str(timeout_s) + " s"}
    except OSError as exc:
        return _failure(exc)
    return {"returncode": completed.returncode, "stdout": _decode(completed.stdout),
            "stderr": _decode(completed.stderr)}


def _hello():
    return {"python": sys.executable, "version": list(sys.version_info[:3]), "hostname": socket.gethostname(),
            "environ": dict(os.environ)}


def _in_threads(jobs):
    """Run the callables concurrently (tools and scripts are slow, the CPUs many); answers in order."""
    answers = [None] * len(jobs)

    def work(index, job):
        answers[index] = job()

    threads = [threading.Thread(target=work, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def answer(request):
    """The answer to one request."""
    answer = {}
    if request.get("hello"):
        answer["hello"] = _hello()
    answer["reads"] = {path: _read(path) for path in request.get("reads", [])}
    answer["lists"] = {path: _list(path) for path in request.get("lists", [])}
    jobs = [lambda r=r: _run(r["argv"], r["timeout_s"]) for r in request.get("runs", [])]
    # Facts scripts run from "/" so no working directory leaks into the interpreter's package view.
    jobs += [lambda s=s: _run([sys.executable, "-c", s["source"]] + s["args"], s["timeout_s"], cwd="/")
             for s in request.get("scripts", [])]
    done = _in_threads(jobs)
    answer["runs"] = done[:len(request.get("runs", []))]
    answer["scripts"] = done[len(request.get("runs", [])):]
    return answer


def main():
    if sys.version_info < MIN_VERSION:
        needed = ".".join(str(part) for part in MIN_VERSION)
        sys.stderr.write("python " + sys.version.split()[0] + " is older than " + needed + "\n")
        return 3
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    # Lead a process group of our own, and say which: a caller that gives up on an answer ends the group
    # (this reader and any command it runs), so nothing is left running on the host after a time-out.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    sink.write(b"pid " + str(os.getpgrp()).encode("ascii") + b"\n")
    sink.flush()
    while True:
        header = source.readline()
        if not header.strip():
            return 0
        request = json.loads(source.read(int(header)).decode("utf-8"))
        body = json.dumps(answer(request)).encode("utf-8")
        sink.write(str(len(body)).encode("ascii") + b"\n" + body)
        sink.flush()


if __name__ == "__main__":
    sys.exit(main())
