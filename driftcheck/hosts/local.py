"""This machine as a host: files opened and commands started by this process."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence

from driftcheck.errors import CommandTimeout
from driftcheck.hosts import warm
from driftcheck.hosts.base import (
    Capabilities,
    CommandResult,
    Host,
    LineStream,
    ScriptCall,
    batch_arguments,
    facts_script,
    parse_script_output,
)
from driftcheck.snapshot.home import cache_dir
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

# The facts scripts run from "/": the caller's working directory (sys.path[0]) stays out of the target's view.
_SCRIPTS_CWD = "/"
# Where the facts scripts keep what they can always make again between runs (their FACTS_CACHE_VARIABLE):
# dist_facts its parsed RECORDs, facts_batch the scripts' compiled code. This machine's own, live interpreters only:
# a recording, a replay or an SSH host reads and compiles everything anew.
FACTS_CACHE_VARIABLE = "DRIFTCHECK_FACTS_CACHE"


class _ProcessLineStream(LineStream):
    """A local process's stdout, line by line, as it prints; closing terminates the process."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        super().__init__()
        self._process = process

    def __iter__(self) -> Iterator[str]:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            yield line.rstrip("\r\n")

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
        try:
            self._process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class LocalHost(Host):
    """This machine. `target_python` is the interpreter whose packages matter (default: our own)."""

    kind = "local"
    capabilities = Capabilities(in_process=True, hash_cache=True)

    def __init__(self, target_python: str | None = None) -> None:
        # Made absolute: the facts scripts run from `_SCRIPTS_CWD`, where a relative path (`.venv/bin/python`, as
        # `--python` or a `run` command gives it) would name nothing. Not resolved through its links: a venv's
        # `bin/python` links to the base interpreter, and only the link's own place makes it the venv's.
        self.target_python = os.path.abspath(target_python) if target_python else sys.executable

    @property
    def name(self) -> str:
        return socket.gethostname()

    def read_bytes(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    def read_lines(self, path: str, pattern: re.Pattern[bytes]) -> list[bytes]:
        with open(path, "rb") as handle:
            return [line for line in handle if pattern.search(line)]

    def list_dir(self, path: str) -> list[str]:
        return sorted(os.listdir(path))

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        try:
            completed = subprocess.run(list(argv), capture_output=True, timeout=timeout_s,
                                       stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired as exc:
            raise CommandTimeout(f"{argv[0]} ran past {timeout_s:g} s") from exc
        return CommandResult(tuple(argv), completed.returncode,
                             completed.stdout.decode("utf-8", errors="replace"),
                             completed.stderr.decode("utf-8", errors="replace"))

    def stream(self, argv: Sequence[str], timeout_s: float = 30.0) -> LineStream:
        process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1)
        return _ProcessLineStream(process)

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        argv = [self.target_python, "-c", facts_script(script_name), *args]
        try:
            completed = subprocess.run(argv, capture_output=True, timeout=timeout_s, cwd=_SCRIPTS_CWD,
                                       env=_target_environ(), stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired as exc:
            raise CommandTimeout(f"{script_name} in {self.target_python} ran past {timeout_s:g} s") from exc
        return self._parsed(script_name, warm.Answer(completed.returncode, completed.stdout, completed.stderr))

    def warm_up(self, ahead: Sequence[ScriptCall] = (), hold: bool = False) -> None:
        """Start the target interpreter's next batch now (hosts/warm.py), `ahead` answered while it waits; with
        `hold`, only its interpreter, stopped before it reads anything, for the next `warm_up` to release."""
        tail = [facts_script("facts_batch"), *batch_arguments(ahead, word="--ahead"), "--stdin"]
        if hold:
            warm.hold(self.target_python, facts_script("facts_held"), tail, _target_environ(), _SCRIPTS_CWD)
        else:
            warm.start(self.target_python, tail, _target_environ(), _SCRIPTS_CWD)

    def python_batch(self, calls: Sequence[ScriptCall]) -> JSONValue:
        started = warm.take(self.target_python, _target_environ(), _SCRIPTS_CWD)
        if started is None:
            return super().python_batch(calls)
        timeout_s = max(call.timeout_s for call in calls)
        try:
            ended = warm.ask(started, batch_arguments(calls), timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise CommandTimeout(f"facts_batch in {self.target_python} ran past {timeout_s:g} s") from exc
        return self._parsed("facts_batch", ended)

    def _parsed(self, script_name: str, ended: warm.Answer) -> JSONValue:
        """What a run of `script_name` printed, as `parse_script_output` reads it."""
        return parse_script_output(script_name, self.target_python, ended.returncode,
                                   ended.stdout.decode("utf-8", errors="replace"),
                                   ended.stderr.decode("utf-8", errors="replace"))

    def environ(self) -> dict[str, str]:
        return dict(os.environ)

    def describe(self) -> JSONObject:
        return {"name": self.name, "kind": self.kind, "python": self.target_python}


def _target_environ() -> dict[str, str]:
    """The facts scripts' environment: this one, with relative PYTHONPATH entries made absolute (as the target
    would see them from here), and the directory of the scripts' cache."""
    environ = dict(os.environ)
    environ[FACTS_CACHE_VARIABLE] = str(cache_dir() / "facts")
    entries = environ.get("PYTHONPATH")
    if entries:
        environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(e) if e else os.getcwd()
                                                for e in entries.split(os.pathsep))
    return environ
