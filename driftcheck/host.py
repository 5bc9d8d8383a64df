"""Hosts: where a probe's I/O goes. Local now; SSH and a replay of a recording use the same face.

A probe never opens a file or starts a process itself; it asks its `Host`. That keeps parsing a
pure function of what was gathered, lets the same probe run over SSH, and lets tests replay a real
recorded machine instead of patching `open`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class CommandResult:
    """What a command printed and how it ended."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def to_json(self) -> dict[str, Any]:
        return {"argv": list(self.argv), "returncode": self.returncode, "stdout": self.stdout,
                "stderr": self.stderr}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CommandResult:
        return cls(tuple(data["argv"]), int(data["returncode"]), str(data["stdout"]), str(data["stderr"]))


class LineStream:
    """The lines of a command that keeps printing (`nvidia-smi -lms`); `close()` ends it.

    This base form holds an output that has already ended: what a replay or a host that cannot stream gives.
    """

    def __init__(self, lines: Sequence[str] = ()) -> None:
        self._lines = list(lines)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def close(self) -> None:
        """Stop the command (nothing to do for an output that has ended)."""


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

    @property
    def returncode(self) -> int | None:
        return self._process.poll()


class CommandTimeout(Exception):
    """A command on a host ran past its time limit and was stopped."""


class TargetPythonError(Exception):
    """The target interpreter could not run a facts script (not a Python, too old), or printed no JSON."""


class FactsScriptError(Exception):
    """A facts script ran in the target interpreter and raised: a bug or a broken install, not an absence."""


def facts_script(script_name: str) -> str:
    """The source of a stdlib-only facts script shipped in `driftcheck/probes/scripts/`."""
    return resources.files("driftcheck.probes.scripts").joinpath(f"{script_name}.py").read_text("utf-8")


class Host(ABC):
    """One machine as the probes see it: files, commands, the target interpreter, the environment."""

    kind: str = "abstract"

    @property
    @abstractmethod
    def name(self) -> str:
        """The host's name as recorded in a snapshot."""

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """The content of `path`; FileNotFoundError or PermissionError when it cannot be read."""

    @abstractmethod
    def list_dir(self, path: str) -> list[str]:
        """The sorted entry names of directory `path`; FileNotFoundError when absent."""

    @abstractmethod
    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        """Run a command; FileNotFoundError when the program does not exist, CommandTimeout past the limit."""

    @abstractmethod
    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> Any:
        """Run a facts script with the target interpreter and return the JSON it printed."""

    @abstractmethod
    def environ(self) -> dict[str, str]:
        """The environment the probes describe (for a local host, this process's)."""

    def stream(self, argv: Sequence[str], timeout_s: float = 30.0) -> LineStream:
        """The stdout lines of a command that prints as it runs (`nvidia-smi -lms`), as they come.

        Hosts that cannot stream run the command to its end (within `timeout_s`) and give its lines then:
        a replay of a recorded sampling log reads back exactly as it was printed.
        """
        return LineStream(self.run(argv, timeout_s).stdout.splitlines())

    def read_text(self, path: str) -> str:
        """The content of `path` decoded as UTF-8, undecodable bytes replaced."""
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        """Whether `path` can be read as a file or listed as a directory."""
        try:
            self.read_bytes(path)
            return True
        except IsADirectoryError:
            return True
        except OSError:
            pass
        try:
            self.list_dir(path)
            return True
        except OSError:
            return False

    def describe(self) -> dict[str, Any]:
        """What a snapshot records about the host it was taken on."""
        return {"name": self.name, "kind": self.kind}


class LocalHost(Host):
    """This machine. `target_python` is the interpreter whose packages matter (default: our own)."""

    kind = "local"

    def __init__(self, target_python: str | None = None) -> None:
        self.target_python = target_python or sys.executable

    @property
    def name(self) -> str:
        return socket.gethostname()

    def read_bytes(self, path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

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

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> Any:
        # cwd "/" keeps the caller's working directory (sys.path[0]) out of the target's package view.
        argv = [self.target_python, "-c", facts_script(script_name), *args]
        try:
            completed = subprocess.run(argv, capture_output=True, timeout=timeout_s, cwd="/",
                                       env=_absolute_pythonpath(), stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired as exc:
            raise CommandTimeout(f"{script_name} in {self.target_python} ran past {timeout_s:g} s") from exc
        return parse_script_output(script_name, self.target_python, completed.returncode,
                                   completed.stdout.decode("utf-8", errors="replace"),
                                   completed.stderr.decode("utf-8", errors="replace"))

    def environ(self) -> dict[str, str]:
        return dict(os.environ)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "python": self.target_python}


def _absolute_pythonpath() -> dict[str, str]:
    """This environment with relative PYTHONPATH entries made absolute, as the target would see them from here."""
    environ = dict(os.environ)
    entries = environ.get("PYTHONPATH")
    if entries:
        environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(e) if e else os.getcwd()
                                                for e in entries.split(os.pathsep))
    return environ


def parse_script_output(script_name: str, interpreter: str, returncode: int, stdout: str, stderr: str) -> Any:
    """The JSON a facts script printed; FactsScriptError when it raised, TargetPythonError when it could not run."""
    if returncode != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {returncode}"
        if "Traceback (most recent call last)" in stderr:
            raise FactsScriptError(f"{script_name} raised in {interpreter}: {last}")
        raise TargetPythonError(f"{script_name} could not run in {interpreter}: {last}")
    try:
        return json.loads(stdout)
    except json.JSONDecodeError as exc:
        raise TargetPythonError(f"{script_name} in {interpreter} printed no JSON: {exc}") from exc
