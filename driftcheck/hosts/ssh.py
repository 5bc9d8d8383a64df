"""A machine over SSH (paramiko): nothing installed there, every layer of reads in one round trip.

One session per host runs `batch_io.py` in the target interpreter (`--python`, default `python3`),
started once: each request to it names files to read, directories to list, commands and facts
scripts to run, and is answered in one JSON document. `prefetch` runs the probes' gathers against what is
known so far, collects what they asked and did not get, fetches all of it in one call, and repeats
until nothing new is asked (a few rounds: one per layer of "list a directory, then read inside").
The probes then run for real against the answers. `round_trips` counts the exchanges that wait for
the far side once the connection is up: two to start the session (open a channel, start the
reader), one per request.

Every call has a time limit; a dropped connection or a command that hangs answers that call with
ConnectionLost or CommandTimeout, so the probe that asked ends as `error` or `timeout`. A session
that did not answer in time is closed; the next request starts a fresh one.
"""

from __future__ import annotations

import base64
import json
import re
import select
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

import paramiko

from driftcheck.errors import CommandTimeout, ConnectionLost, HostError, TargetPythonError, failure_by_name
from driftcheck.hosts.base import Capabilities, CommandResult, GatherAll, Host, facts_script, parse_script_output
from driftcheck.hosts.recording import command_key, python_key
from driftcheck.hosts.sshconnect import SSHTarget, connect, fingerprint, load_ssh_config, resolve
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

DEFAULT_PYTHON = "python3"
# `read_lines` on the far side (stdlib only, Python 3.8+): the lines of argv[1] in which the regex argv[2]
# (base64 of its bytes) is found, each printed as base64 on a line of its own, so no byte is lost to the
# answer's text; a failure to open is its exception's name and message on stderr, exit 3.
_READ_LINES_SOURCE = """\
import base64, re, sys
pattern = re.compile(base64.b64decode(sys.argv[2]))
try:
    handle = open(sys.argv[1], "rb")
except OSError as exc:
    sys.stderr.write(type(exc).__name__ + ": " + str(exc))
    sys.exit(3)
with handle:
    out = sys.stdout.buffer
    for line in handle:
        if pattern.search(line):
            out.write(base64.b64encode(line) + b"\\n")
"""
# Within the time limit of the probe that reads (30 s): ~1 GB of log a few seconds.
_READ_LINES_S = 25.0
CONNECT_TIMEOUT_S = 15.0
# Beyond the longest command in a batch: what reading files and moving the answer may take.
BATCH_GRACE_S = 20.0
MAX_PREFETCH_ROUNDS = 6
# The largest answer taken from the batch reader: a snapshot's reads of an 8-GPU server are a few MB, and an
# answer announced larger (a broken or hostile interpreter) is refused before it is read into memory.
MAX_ANSWER_BYTES = 256 * 1024 * 1024
# The longest frame header ("<size>\n") or process line, and the most of the reader's stderr kept.
_MAX_HEADER = 64
_MAX_STDERR = 64 * 1024
# How long ending the remote reader after a time-out may take.
_KILL_TIMEOUT_S = 5.0
# Exit codes of the remote side that mean "no such interpreter" (shell: not found / not executable).
_NO_INTERPRETER = {126: "not executable", 127: "not found"}


def _batch_source() -> str:
    return resources.files("driftcheck.hosts").joinpath("batch_io.py").read_text("utf-8")


@dataclass
class _Batch:
    """The calls one round trip asks; keys as in the answer cache."""

    reads: set[str] = field(default_factory=set)
    lists: set[str] = field(default_factory=set)
    runs: dict[str, tuple[list[str], float]] = field(default_factory=dict)
    scripts: dict[str, tuple[str, list[str], float]] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.reads or self.lists or self.runs or self.scripts)

    def longest_s(self) -> float:
        limits = [t for _, t in self.runs.values()] + [t for *_, t in self.scripts.values()]
        return max(limits, default=0.0)


class SSHHost(Host):
    """A remote machine. Use as a context manager, or call `connect()` and `close()`."""

    kind = "ssh"
    capabilities = Capabilities(in_process=False, process_local_reads=True, hash_cache=True, few_calls=True)

    def __init__(self, target: SSHTarget | str, python: str | None = None, identity: str | None = None,
                 accept_new_host_key: bool = False, connect_timeout_s: float = CONNECT_TIMEOUT_S,
                 grace_s: float = BATCH_GRACE_S) -> None:
        self.target = SSHTarget.parse(target) if isinstance(target, str) else target
        self.target_python = python or DEFAULT_PYTHON
        self.identity = identity
        self.accept_new_host_key = accept_new_host_key
        self.connect_timeout_s = connect_timeout_s
        self.grace_s = grace_s
        self.round_trips = 0
        self._session: _Session | None = None
        self._call_lock = threading.Lock()
        self._client: paramiko.SSHClient | None = None
        self._jumps: tuple[paramiko.SSHClient, ...] = ()
        self._host_key: paramiko.PKey | None = None
        self._hello: JSONObject = {}
        self._answers: dict[tuple[str, str], JSONObject] = {}
        self._lock = threading.Lock()
        self._speculating = False
        self._wanted = _Batch()

    # -- connection -------------------------------------------------------------------------------

    def connect(self) -> SSHHost:
        """Connect, check the host key, authenticate, and check the remote interpreter (one round trip).

        Raises a one-line HostError (UnknownHostKeyError, ChangedHostKeyError) when any of it fails.
        """
        config = load_ssh_config()
        endpoint = resolve(self.target, config, self.identity)
        self._client, self._jumps = connect(endpoint, self.accept_new_host_key, self.connect_timeout_s, config)
        transport = self._client.get_transport()
        self._host_key = transport.get_remote_server_key() if transport else None
        try:
            answer = self._call({"hello": True}, self.connect_timeout_s + self.grace_s)
        except (CommandTimeout, ConnectionLost) as exc:
            self.close()
            raise HostError(str(exc)) from None
        except TargetPythonError as exc:
            self.close()
            raise HostError(str(exc)) from None
        hello = answer.get("hello")
        self._hello = hello if isinstance(hello, dict) else {}
        return self

    def close(self) -> None:
        """Close the connection (and any jump hosts'); safe to call twice."""
        if self._session is not None:
            self._session.close()
            self._session = None
        for client in (self._client, *reversed(self._jumps)):
            if client is not None:
                client.close()
        self._client, self._jumps = None, ()

    def __enter__(self) -> SSHHost:
        return self.connect() if self._client is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def host_key_fingerprint(self) -> str | None:
        """The SHA256 fingerprint of the host key this connection was checked against."""
        return fingerprint(self._host_key) if self._host_key is not None else None

    # -- the Host face ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return str(self._hello.get("hostname") or self.target.host)

    def environ(self) -> dict[str, str]:
        environ = self._hello.get("environ")
        return {name: str(value) for name, value in environ.items()} if isinstance(environ, dict) else {}

    def read_bytes(self, path: str) -> bytes:
        answer = self._answer("read", path, lambda batch: batch.reads.add(path))
        return base64.b64decode(str(answer["b64"]))

    def read_lines(self, path: str, pattern: re.Pattern[bytes]) -> list[bytes]:
        # Filtered where the file is, by the target interpreter (stdlib `re`, the same engine as here): a log of
        # gigabytes read whole would be held whole there and be an answer past MAX_ANSWER_BYTES, refused with
        # every other call of its round trip.
        pattern_b64 = base64.b64encode(pattern.pattern).decode("ascii")
        done = self.run([self.target_python, "-c", _READ_LINES_SOURCE, path, pattern_b64], timeout_s=_READ_LINES_S)
        if done.returncode != 0:
            name, _, message = done.stderr.strip().partition(": ")
            raise failure_by_name(name, message or done.stderr.strip() or f"exit {done.returncode}")
        return [base64.b64decode(line) for line in done.stdout.split()]

    def list_dir(self, path: str) -> list[str]:
        names = self._answer("list", path, lambda batch: batch.lists.add(path))["names"]
        return [str(name) for name in names] if isinstance(names, list) else []

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        key = command_key(argv)
        answer = self._answer("run", key, lambda batch: batch.runs.__setitem__(key, (list(argv), timeout_s)))
        return CommandResult(tuple(argv), _returncode(answer), str(answer["stdout"]), str(answer["stderr"]))

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        key = python_key(script_name, args)
        answer = self._answer("script", key,
                              lambda batch: batch.scripts.__setitem__(key, (script_name, list(args), timeout_s)))
        return parse_script_output(script_name, self.script_interpreter, _returncode(answer),
                                   str(answer["stdout"]), str(answer["stderr"]))

    @property
    def script_interpreter(self) -> str:
        return f"{self.target_python} on {self.target}"

    def describe(self) -> JSONObject:
        return {"name": self.name, "kind": self.kind, "address": str(self.target), "python": self.target_python,
                "python_executable": self._hello.get("python"),
                "host_key_type": self._host_key.get_name() if self._host_key is not None else None,
                "host_key_fingerprint": self.host_key_fingerprint}

    # -- batching -----------------------------------------------------------------------------------

    def prefetch(self, gather_all: GatherAll) -> None:
        """Fetch, a layer per round trip, everything `gather_all` asks, until it asks nothing new."""
        for _ in range(MAX_PREFETCH_ROUNDS):
            with self._lock:
                self._speculating, self._wanted = True, _Batch()
            try:
                gather_all(self)
            finally:
                with self._lock:
                    self._speculating = False
                    wanted = self._wanted
            if wanted.empty():
                return
            self._fetch(wanted)

    def _answer(self, kind: str, key: str, want: Callable[[_Batch], object]) -> JSONObject:
        """The cached answer to one call; while speculating a miss is noted and reads as absent."""
        with self._lock:
            answer = self._answers.get((kind, key))
            if answer is None and self._speculating:
                want(self._wanted)
                raise FileNotFoundError(f"{key}: not fetched yet")
        if answer is None:
            batch = _Batch()
            want(batch)
            self._fetch(batch)
            with self._lock:
                answer = self._answers[(kind, key)]
        if "error" in answer:
            raise failure_by_name(str(answer["error"]), str(answer.get("message", "")))
        return dict(answer)

    def _fetch(self, batch: _Batch) -> None:
        """One round trip for every call in `batch`; a failed trip answers each call with its failure."""
        runs, scripts = list(batch.runs.items()), list(batch.scripts.items())
        request: dict[str, object] = {
            "reads": sorted(batch.reads), "lists": sorted(batch.lists),
            "runs": [{"argv": argv, "timeout_s": t} for _, (argv, t) in runs],
            "scripts": [{"source": facts_script(name), "args": args, "timeout_s": t} for _, (name, args, t) in scripts],
        }
        limit = batch.longest_s() + self.grace_s
        try:
            reply = self._call(request, limit)
        except (CommandTimeout, ConnectionLost, TargetPythonError) as exc:
            failure: JSONValue = {"error": type(exc).__name__, "message": str(exc)}
            reply = {"reads": dict.fromkeys(batch.reads, failure), "lists": dict.fromkeys(batch.lists, failure),
                     "runs": [failure] * len(runs), "scripts": [failure] * len(scripts)}
        with self._lock:
            for path in batch.reads:
                self._answers[("read", path)] = _keyed(reply.get("reads"), path) or _lost(path)
            for path in batch.lists:
                self._answers[("list", path)] = _keyed(reply.get("lists"), path) or _lost(path)
            for index, (key, _) in enumerate(runs):
                self._answers[("run", key)] = _nth(reply.get("runs"), index) or _lost(key)
            for index, (key, _) in enumerate(scripts):
                self._answers[("script", key)] = _nth(reply.get("scripts"), index) or _lost(key)

    def _call(self, request: Mapping[str, object], timeout_s: float) -> JSONObject:
        """Send `request` to the batch reader in the target interpreter; its JSON answer."""
        with self._call_lock:
            if self._client is None:
                raise ConnectionLost(f"{self.target}: not connected")
            if self._session is None:
                command = f"{shlex.quote(self.target_python)} -c {shlex.quote(_batch_source())}"
                self.round_trips += 2
                self._session = _Session.start(self._client, command, timeout_s, str(self.target))
            self.round_trips += 1
            try:
                body = self._session.exchange(json.dumps(request).encode("utf-8"), timeout_s)
            except _SessionEnded as ended:
                self._session = None
                raise self._why_ended(ended) from None
            except (CommandTimeout, ConnectionLost):
                # The reader may still be busy (a read that blocks): start afresh next time.
                self._session.close()
                self._session = None
                raise
        try:
            reply: JSONValue = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise TargetPythonError(f"{self.target}: {self.target_python} printed no JSON answer: {exc}") from None
        if not isinstance(reply, dict):
            raise TargetPythonError(f"{self.target}: {self.target_python} printed no JSON object")
        return reply

    def _why_ended(self, ended: _SessionEnded) -> Exception:
        """The failure a session that exited before answering stands for."""
        if ended.returncode is None:
            return ConnectionLost(f"{self.target}: the connection closed before an answer")
        last = ended.stderr.strip().splitlines()
        why = _NO_INTERPRETER.get(ended.returncode) or (last[-1] if last else f"exit code {ended.returncode}")
        return TargetPythonError(f"{self.target}: remote interpreter {self.target_python} cannot run driftcheck's "
                                 f"reader (Python 3.8+ needed): {why}")


class _SessionEnded(Exception):
    def __init__(self, returncode: int | None, stderr: str) -> None:
        super().__init__(stderr)
        self.returncode = returncode
        self.stderr = stderr


class _Session:
    """One running batch reader: length-framed JSON requests in, answers out, over one SSH channel."""

    def __init__(self, channel: paramiko.Channel, where: str) -> None:
        self.channel = channel
        self.where = where
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.pid: int | None = None  # the reader's process group, from its first line
        self.busy = False  # a request is out without its answer (abandoned, or still being waited for)

    @classmethod
    def start(cls, client: paramiko.SSHClient, command: str, timeout_s: float, where: str) -> _Session:
        transport = client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectionLost(f"{where}: connection closed")
        try:
            channel = transport.open_session(timeout=timeout_s)
            channel.exec_command(command)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise ConnectionLost(f"{where}: connection lost: {exc or type(exc).__name__}") from None
        return cls(channel, where)

    def close(self) -> None:
        """Close the channel; while a request is unanswered, end the remote reader's process group first (a
        reader stuck in a read or a command would otherwise stay alive on the host: closing the channel sends
        it no signal). An idle reader ends by itself at the end of its input."""
        if self.busy and self.pid is not None and self.pid > 1:
            self._kill_remote(self.pid)
        self.channel.close()

    def _kill_remote(self, pid: int) -> None:
        transport = self.channel.get_transport()
        if transport is None or not transport.is_active():
            return
        try:
            killer = transport.open_session(timeout=_KILL_TIMEOUT_S)
            killer.settimeout(_KILL_TIMEOUT_S)
            killer.exec_command(f"kill -KILL -- -{pid} 2>/dev/null || kill -KILL {pid} 2>/dev/null; exit 0")
            deadline = time.monotonic() + _KILL_TIMEOUT_S
            while not killer.exit_status_ready() and time.monotonic() < deadline:
                time.sleep(0.02)
            killer.close()
        except (paramiko.SSHException, OSError, EOFError):
            pass  # the channel closes below all the same

    def exchange(self, request: bytes, timeout_s: float) -> bytes:
        """Send one framed request and wait, at most `timeout_s`, for its framed answer (MAX_ANSWER_BYTES at
        most: a larger one is refused before it is read)."""
        deadline = time.monotonic() + timeout_s
        self.busy = True
        try:
            self.channel.sendall(str(len(request)).encode("ascii") + b"\n" + request)
            header = self._line(deadline, timeout_s)
            if self.pid is None and header.startswith(b"pid "):
                self.pid = int(header[4:])
                header = self._line(deadline, timeout_s)
            size = int(header.strip() or b"-1")
            if size < 0:
                raise ConnectionLost(f"{self.where}: the batch reader sent no answer frame")
            if size > MAX_ANSWER_BYTES:
                raise ConnectionLost(f"{self.where}: the batch reader announced a {size:,}-byte answer, more than "
                                     f"{MAX_ANSWER_BYTES / 2**20:.0f} MiB; refused")
            body = self._take(lambda: size if len(self.stdout) >= size else 0, deadline, timeout_s)
            self.busy = False
            return body
        except (paramiko.SSHException, OSError, EOFError, ValueError) as exc:
            raise ConnectionLost(f"{self.where}: connection lost: {exc or type(exc).__name__}") from None

    def _line(self, deadline: float, timeout_s: float) -> bytes:
        """The next line of stdout (a frame header or the process line), at most _MAX_HEADER bytes long."""
        def ready() -> int:
            end = self.stdout.find(b"\n", 0, _MAX_HEADER) + 1
            if not end and len(self.stdout) >= _MAX_HEADER:
                raise ConnectionLost(f"{self.where}: the batch reader sent no answer frame "
                                     f"(no header within {_MAX_HEADER} bytes)")
            return end
        return self._take(ready, deadline, timeout_s)

    def _take(self, ready: Callable[[], int], deadline: float, timeout_s: float) -> bytes:
        """The first `ready()` bytes of stdout once `ready()` is non-zero, reading the channel until then."""
        channel = self.channel
        while True:
            count = ready()
            if count:
                taken = bytes(self.stdout[:count])
                del self.stdout[:count]
                return taken
            if channel.recv_ready():
                self.stdout += channel.recv(1 << 20)
                continue
            if channel.recv_stderr_ready():
                self.stderr += channel.recv_stderr(1 << 16)
                del self.stderr[:-_MAX_STDERR]  # its last lines say why it ended; the rest is not kept
                continue
            if channel.exit_status_ready() and channel.eof_received:
                while channel.recv_stderr_ready():
                    self.stderr += channel.recv_stderr(1 << 16)
                raise _SessionEnded(channel.recv_exit_status(), self.stderr.decode("utf-8", errors="replace"))
            transport = channel.get_transport()
            if channel.closed or transport is None or not transport.is_active():
                raise _SessionEnded(None, "")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CommandTimeout(f"{self.where}: remote call ran past {timeout_s:g} s and was abandoned")
            select.select([channel], [], [], min(remaining, 0.1))


def _nth(answers: JSONValue, index: int) -> JSONObject | None:
    """The answer at `index` of a batch's list of answers, when it is an object."""
    if isinstance(answers, list) and index < len(answers) and isinstance(answer := answers[index], dict):
        return dict(answer)
    return None


def _keyed(answers: JSONValue, key: str) -> JSONObject | None:
    """The answer under `key` of a batch's object of answers, when it is a non-empty object."""
    answer = answers.get(key) if isinstance(answers, dict) else None
    return answer if isinstance(answer, dict) and answer else None


def _returncode(answer: JSONObject) -> int:
    """The exit status the batch reader reported for a command or script."""
    code = answer["returncode"]
    if isinstance(code, bool) or not isinstance(code, (int, float, str)):
        raise ConnectionLost(f"the batch reader answered a returncode of {code!r}")
    return int(code)


def _lost(path: str) -> JSONObject:
    return {"error": "ConnectionLost", "message": f"{path}: no answer in the batch"}
