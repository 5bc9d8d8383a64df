"""A host whose facts-script calls, named ahead, are answered by one run of the target interpreter.

A snapshot asks the target interpreter for its facts from several probes (python, packages, kernels,
torch, nccl), each through `Host.python`. Each such call started that interpreter anew, and starting it
(its site, its .pth files) costs more than the scripts' own work. The runner names the calls before the
probes start (`Probe.interpreter_calls`), and `SharedScriptsHost` answers them from one `python_many`
run begun at once in the background: a probe that asks waits only for that run, and a probe that asks
something not named ahead is answered by the inner host as before. Everything else goes to the inner
host unchanged, so the probes cannot tell the difference.

`SharedCommandsHost` does the same for commands whose answer is one fact of the machine for every probe
(`ldconfig -p`, read by kernels twice and by nccl): the first asker runs it, the others get its answer. Made
for one run of the probes, it never answers the next snapshot from an old run.

`HeldBackScripts` is the face a host's `prefetch` speculates against: its facts-script calls read as
"not fetched yet", so a host that batches its reads (SSH) does not start the target interpreter for
them beside the one run that will answer them.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Collection, Sequence

from driftcheck.errors import CommandTimeout
from driftcheck.hosts.base import CommandResult, GatherAll, Host, LineStream, ScriptAnswer, ScriptCall
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue


class _Delegating(Host):
    """Every call of the Host face passed to `inner`; subclasses change what they need."""

    def __init__(self, inner: Host) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.capabilities = inner.capabilities
        self.target_python = inner.target_python

    @property
    def name(self) -> str:
        return self.inner.name

    def read_bytes(self, path: str) -> bytes:
        return self.inner.read_bytes(path)

    def read_lines(self, path: str, pattern: re.Pattern[bytes]) -> list[bytes]:
        # Passed on, not left to Host's form (read_bytes, then split): the inner host reads a large log in
        # pieces, over SSH on the far side.
        return self.inner.read_lines(path, pattern)

    def list_dir(self, path: str) -> list[str]:
        return self.inner.list_dir(path)

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        return self.inner.run(argv, timeout_s)

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        return self.inner.python(script_name, args, timeout_s)

    def python_many(self, calls: Sequence[ScriptCall]) -> list[ScriptAnswer]:
        return self.inner.python_many(calls)

    @property
    def script_interpreter(self) -> str:
        return self.inner.script_interpreter

    def environ(self) -> dict[str, str]:
        return self.inner.environ()

    def stream(self, argv: Sequence[str], timeout_s: float = 30.0) -> LineStream:
        return self.inner.stream(argv, timeout_s)

    @property
    def recorded_options(self) -> JSONObject | None:
        return self.inner.recorded_options

    def prefetch(self, gather_all: GatherAll) -> None:
        self.inner.prefetch(gather_all)

    def warm_up(self, ahead: Sequence[ScriptCall] = (), hold: bool = False) -> None:
        self.inner.warm_up(ahead, hold)

    def describe(self) -> JSONObject:
        return self.inner.describe()


class SharedScriptsHost(_Delegating):
    """`inner`, with `calls` answered by one `inner.python_many` run, begun when this host is made."""

    def __init__(self, inner: Host, calls: Sequence[ScriptCall]) -> None:
        super().__init__(inner)
        unique = list({call.key: call for call in calls}.values())
        # Questions more than one probe asks (python and nccl both read python_facts): each asker gets its
        # own copy of the answer, so none can change what another parses.
        self._shared = {call.key for call in unique if sum(other.key == call.key for other in calls) > 1}
        self._index = {call.key: position for position, call in enumerate(unique)}
        self._answers: list[ScriptAnswer] = []
        self._taken: set[tuple[str, ...]] = set()
        self._lock = threading.Lock()
        self._done = threading.Event()
        # A daemon, as the probes' own threads are: a run past every probe's limit must not hold up the exit.
        self._thread = threading.Thread(target=self._answer_all, args=(unique,), name="facts-batch", daemon=True)
        self._thread.start()

    def _answer_all(self, calls: list[ScriptCall]) -> None:
        try:
            self._answers = self.inner.python_many(calls)
        except Exception as exc:  # noqa: BLE001 - python_many keeps failures per call; this is a last resort
            self._answers = [ScriptAnswer(error=exc) for _ in calls]
        finally:
            self._done.set()

    def wait(self) -> None:
        """Return once the one run has answered (or failed)."""
        self._done.wait()

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        key = (script_name, *args)
        position = self._index.get(key)
        if position is None:
            return self.inner.python(script_name, args, timeout_s)
        # The run's limit is the longest of its calls'; a caller with a shorter one (nccl reads sys.path within
        # 10 s, and goes on without it) is not held past its own.
        if not self._done.wait(timeout_s):
            raise CommandTimeout(f"{script_name} in {self.script_interpreter}: the run answering every probe's "
                                 f"scripts gave no answer within {timeout_s:g} s")
        value = self._answers[position].result()
        with self._lock:
            again = key in self._taken
            self._taken.add(key)
        return copy.deepcopy(value) if again or key in self._shared else value


class SharedCommandsHost(_Delegating):
    """`inner`, with each command of `shared` run once: the first answer it gives is every later asker's (an
    asker that comes while it runs waits for that run).

    Only an answer is kept. A failure (the command not found, a timeout, a prefetching host's "not fetched
    yet" while it speculates) is raised to its asker alone, and the next asker runs the command again, as it
    would have without sharing.
    """

    def __init__(self, inner: Host, shared: Collection[Sequence[str]]) -> None:
        super().__init__(inner)
        self._answers: dict[tuple[str, ...], CommandResult] = {}
        self._locks = {tuple(argv): threading.Lock() for argv in shared}

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        key = tuple(argv)
        lock = self._locks.get(key)
        if lock is None:
            return self.inner.run(argv, timeout_s)
        with lock:
            if key not in self._answers:
                self._answers[key] = self.inner.run(argv, timeout_s)
            return self._answers[key]  # frozen: one result serves every asker


class HeldBackScripts(_Delegating):
    """`inner` for speculating: every facts-script call reads as absent, and asks `inner` nothing."""

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        raise FileNotFoundError(f"{script_name}: answered after the prefetch, by one run for all probes")

    def python_many(self, calls: Sequence[ScriptCall]) -> list[ScriptAnswer]:
        return [ScriptAnswer(error=FileNotFoundError(f"{call.script_name}: answered after the prefetch"))
                for call in calls]
