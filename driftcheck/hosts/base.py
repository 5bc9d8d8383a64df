"""The face every host shows the probes: files, commands, the target interpreter, the environment.

A probe never opens a file or starts a process itself; it asks its `Host`. That keeps parsing a
pure function of what was gathered, lets the same probe run over SSH, and lets tests replay a real
recorded machine instead of patching `open`. What differs between hosts (NVML in this process, a
hash cache, calls that cost a round trip) is declared in `Capabilities`, so probes ask what a host
can do instead of which class it is.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass

from driftcheck.errors import FactsScriptError, TargetPythonError
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue
from driftcheck.snapshot.shipped import shipped_text


@dataclass(frozen=True)
class Capabilities:
    """What a host can do beyond the common face; every probe decision between hosts reads these."""

    # Code may run in this driftcheck process (or a child of it) against the machine itself: NVML,
    # isolated probes, benchmarks. Only for the machine driftcheck runs on.
    in_process: bool = False
    # A read of /proc/self/* is answered by the process that matters: driftcheck itself locally, the
    # target interpreter over SSH (its batch reader runs in it), as recorded in a replay.
    process_local_reads: bool = True
    # File hashes may be cached between snapshots (not for a recording or a replay: the cache
    # describes the live machine, and a replay answers only the calls that were recorded).
    hash_cache: bool = False
    # Each call is costly (a network round trip) or recorded call by call: ask in as few calls as possible.
    few_calls: bool = False
    # Answers come from a recording: a call that was not recorded is an absence, not a failure.
    recorded: bool = False

    def to_json(self) -> dict[str, bool]:
        return asdict(self)


@dataclass(frozen=True)
class CommandResult:
    """What a command printed and how it ended."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def to_json(self) -> JSONObject:
        return {"argv": list(self.argv), "returncode": self.returncode, "stdout": self.stdout,
                "stderr": self.stderr}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> CommandResult:
        """The result `to_json` wrote; ValueError when `data` is not one."""
        argv, returncode = data["argv"], data["returncode"]
        if not isinstance(argv, list) or not isinstance(returncode, int):
            raise ValueError("not a command result (argv must be a list, returncode an integer)")
        return cls(tuple(str(part) for part in argv), returncode, str(data["stdout"]), str(data["stderr"]))


def facts_script(script_name: str) -> str:
    """The source of a stdlib-only facts script shipped in `driftcheck/probes/scripts/`."""
    # Read through the top package's loader, not `driftcheck.probes.scripts`'s: importing that one imports every
    # probe first (~30 ms), and `driftcheck run` reads these sources to start its target interpreter before it
    # imports the probes (hosts/warm.py).
    return shipped_text("driftcheck", f"probes/scripts/{script_name}.py")


@dataclass(frozen=True)
class ScriptCall:
    """One run of a facts script by the target interpreter: the script's name, its arguments and time limit."""

    script_name: str
    args: tuple[str, ...] = ()
    timeout_s: float = 60.0

    @property
    def key(self) -> tuple[str, ...]:
        """What makes two calls the same question (the time limit does not)."""
        return (self.script_name, *self.args)


@dataclass(frozen=True)
class ScriptAnswer:
    """What one facts-script call gave: the JSON it printed, or the failure its own run would have raised."""

    value: JSONValue = None
    error: Exception | None = None

    def result(self) -> JSONValue:
        """The JSON the script printed; raises the call's failure when it had one."""
        if self.error is not None:
            raise self.error
        return self.value


# Called with a host to run every probe's gather against it once; exceptions are the caller's to swallow.
GatherAll = Callable[["Host"], None]


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


class Host(ABC):
    """One machine as the probes see it: files, commands, the target interpreter, the environment."""

    kind: str = "abstract"
    capabilities: Capabilities = Capabilities()
    # The interpreter whose packages matter, as named on the host itself.
    target_python: str = "python3"

    @property
    @abstractmethod
    def name(self) -> str:
        """The host's name as recorded in a snapshot."""

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """The content of `path`; FileNotFoundError or PermissionError when it cannot be read."""

    def read_lines(self, path: str, pattern: re.Pattern[bytes]) -> list[bytes]:
        """The lines of `path`, cut at b"\\n" only (a line may keep its b"\\n"), in which `pattern` is found;
        FileNotFoundError or PermissionError as `read_bytes`. A host that can read a file in pieces does, where
        the file is, so that a file of gigabytes of which a few lines matter (a server's log) is never held whole
        nor sent whole."""
        return [line for line in self.read_bytes(path).split(b"\n") if pattern.search(line)]

    @abstractmethod
    def list_dir(self, path: str) -> list[str]:
        """The sorted entry names of directory `path`; FileNotFoundError when absent."""

    @abstractmethod
    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        """Run a command; FileNotFoundError when the program does not exist, CommandTimeout past the limit."""

    @abstractmethod
    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        """Run a facts script with the target interpreter and return the JSON it printed."""

    @abstractmethod
    def environ(self) -> dict[str, str]:
        """The environment the probes describe (for a local host, this process's)."""

    def python_many(self, calls: Sequence[ScriptCall]) -> list[ScriptAnswer]:
        """The answers to several facts-script calls, in order, from one run of the target interpreter.

        Starting the interpreter (its site, its .pth files) costs more than most scripts' own work, so the
        calls run as parts of `facts_batch`, each with its own output and exit code: a part that fails
        answers with its failure and the others keep theirs. A host that answers calls from a recording
        (a replay) answers them one by one, as they were recorded.
        """
        if self.capabilities.recorded or len(calls) < 2:
            return [self._python_answer(call) for call in calls]
        try:
            reply = self.python_batch(calls)
        except Exception as exc:  # noqa: BLE001 - every part's answer is this failure, for its probe to report
            return [ScriptAnswer(error=exc) for _ in calls]
        parts = reply.get("parts") if isinstance(reply, dict) else None
        if not isinstance(parts, list) or len(parts) != len(calls):
            lost = TargetPythonError(f"facts_batch in {self.script_interpreter} answered no list of parts")
            return [ScriptAnswer(error=lost) for _ in calls]
        return [_part_answer(call, part, self.script_interpreter) for call, part in zip(calls, parts, strict=True)]

    def python_batch(self, calls: Sequence[ScriptCall]) -> JSONValue:
        """`facts_batch`'s reply to `calls` (`{"parts": [...]}`), from one run of the target interpreter."""
        return self.python("facts_batch", batch_arguments(calls), max(call.timeout_s for call in calls))

    def _python_answer(self, call: ScriptCall) -> ScriptAnswer:
        try:
            return ScriptAnswer(value=self.python(call.script_name, call.args, call.timeout_s))
        except Exception as exc:  # noqa: BLE001 - kept as this call's answer, raised where it is asked
            return ScriptAnswer(error=exc)

    @property
    def script_interpreter(self) -> str:
        """The target interpreter as failures of its facts scripts name it."""
        return self.target_python

    def connect(self) -> Host:
        """Make the host ready for calls (log in, for a remote one); a host with nothing to open returns itself."""
        return self

    def close(self) -> None:  # noqa: B027 - a hook: most hosts hold nothing open
        """Release what `connect` opened; safe to call twice."""

    def __enter__(self) -> Host:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def recorded_options(self) -> JSONObject | None:
        """The probe options a recorded host was taken with (None: a live host, or none kept)."""
        return None

    def prefetch(self, gather_all: GatherAll) -> None:  # noqa: B027 - a hook: most hosts need nothing here
        """Learn ahead, in few calls, what `gather_all` will ask; a host whose calls are cheap does nothing."""

    def warm_up(self, ahead: Sequence[ScriptCall] = (), hold: bool = False) -> None:  # noqa: B027 - a hook
        """Start the run of the target interpreter that will answer the next facts-script calls, before they are
        known, and have it answer `ahead` (calls that need nothing from the host) meanwhile; with `hold`, start
        only its interpreter, held before it reads anything until the next `warm_up`. A host that cannot does
        nothing."""

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

    def describe(self) -> JSONObject:
        """What a snapshot records about the host it was taken on."""
        return {"name": self.name, "kind": self.kind}


def batch_arguments(calls: Sequence[ScriptCall], word: str = "--part") -> list[str]:
    """The arguments of `facts_batch` asking for `calls`: each script's source once, then each call's words
    (`--part`, or `--ahead` for calls answered before the request).

    Words as the calls' own runs would get them, not one JSON argument: a kernels call names hundreds of
    libraries, and one argument may not pass the kernel's limit on a single argument (128 KiB on Linux).
    """
    words: list[str] = []
    for name in dict.fromkeys(call.script_name for call in calls):
        words += ["--script", name, facts_script(name)]
    for call in calls:
        words += [word, call.script_name, str(len(call.args)), *call.args]
    return words


def _part_answer(call: ScriptCall, part: JSONValue, interpreter: str) -> ScriptAnswer:
    """One part of a `facts_batch` reply as the answer its own run would have given."""
    if not isinstance(part, dict):
        return ScriptAnswer(error=TargetPythonError(f"{call.script_name} in {interpreter}: no answer in the batch"))
    returncode = part.get("returncode")
    try:
        return ScriptAnswer(value=parse_script_output(call.script_name, interpreter,
                                                      returncode if isinstance(returncode, int) else 1,
                                                      str(part.get("stdout", "")), str(part.get("stderr", ""))))
    except (FactsScriptError, TargetPythonError) as exc:
        return ScriptAnswer(error=exc)


def parse_script_output(script_name: str, interpreter: str, returncode: int, stdout: str, stderr: str) -> JSONValue:
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
