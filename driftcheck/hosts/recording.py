"""Recording a host's raw inputs to a directory, to be replayed by `ReplayHost` (hosts/replay.py).

Layout of a recording directory:
  host.json        name, environment, directory listings, command results, facts-script results,
                   and the paths that were missing or denied
  files/<path>     every file the probes read, at its absolute path below `files/`
  SOURCE           a free-text note of where the recording came from (written by hand)

Files are plain files so that a test case is a recording with one file edited (a governor, a THP
setting, a cgroup limit).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from driftcheck.errors import CommandTimeout, ConnectionLost, FactsScriptError, HostError, TargetPythonError
from driftcheck.hosts.base import CommandResult, GatherAll, Host, ScriptAnswer, ScriptCall
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

RECORDING_FORMAT = 1


def command_key(argv: Sequence[str]) -> str:
    """How a command is keyed in a recording (and in the SSH host's answer cache)."""
    return json.dumps(list(argv))


def python_key(script_name: str, args: Sequence[str]) -> str:
    """How a facts-script call is keyed in a recording (and in the SSH host's answer cache)."""
    return json.dumps([script_name, *args])


def _failure(exc: BaseException) -> JSONObject:
    return {"error": type(exc).__name__, "message": str(exc)}


_CALL_FAILURES = (OSError, CommandTimeout, ConnectionLost)

# What may be written to disk, from what a probe read: the environment, a file's content, a string.
EnvironRedactor = Callable[[Mapping[str, str]], dict[str, str]]
FileRedactor = Callable[[str, bytes], bytes]
TextRedactor = Callable[[str], str]


class RecordingHost(Host):
    """Wraps a host and keeps everything the probes read, so it can be saved with `save(dir)`.

    `redact_environ` turns the environment into what may be written to disk (secrets replaced);
    `redact_file(path, content)` does the same for a file's content (a process's environ or command
    line), and `redact_text` for command output and facts-script strings. The probes themselves still
    see the unredacted answers, exactly as without recording.
    """

    def __init__(self, inner: Host, redact_environ: EnvironRedactor | None = None,
                 redact_file: FileRedactor | None = None, redact_text: TextRedactor | None = None) -> None:
        self.inner = inner
        self.kind = inner.kind
        # Recorded call by call so that a replay can answer them: one hash call, no cache, no NVML.
        self.capabilities = replace(inner.capabilities, in_process=False, hash_cache=False, few_calls=True)
        self.target_python = inner.target_python
        self._redact_environ = redact_environ
        self._redact_file = redact_file
        self._redact_text = redact_text
        self._lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        # Each call's answer, or the failure it raised ({"error": type name, "message": ...}).
        self.missing: dict[str, JSONObject] = {}
        self.dirs: dict[str, list[str] | JSONObject] = {}
        self.commands: dict[str, JSONObject] = {}
        self.scripts: dict[str, JSONObject] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def read_bytes(self, path: str) -> bytes:
        try:
            content = self.inner.read_bytes(path)
        except OSError as exc:
            with self._lock:
                self.missing[path] = _failure(exc)
            raise
        stored = self._redact_file(path, content) if self._redact_file is not None else content
        with self._lock:
            self.files[path] = stored
        return content

    def list_dir(self, path: str) -> list[str]:
        try:
            names = self.inner.list_dir(path)
        except OSError as exc:
            with self._lock:
                self.dirs[path] = _failure(exc)
            raise
        with self._lock:
            self.dirs[path] = names
        return names

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        try:
            result = self.inner.run(argv, timeout_s)
        except _CALL_FAILURES as exc:
            with self._lock:
                self.commands[command_key(argv)] = _failure(exc)
            raise
        stored = result.to_json()
        if self._redact_text is not None:
            stored["stdout"] = self._redact_text(result.stdout)
            stored["stderr"] = self._redact_text(result.stderr)
        with self._lock:
            self.commands[command_key(argv)] = stored
        return result

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        try:
            result = self.inner.python(script_name, args, timeout_s)
        except (*_CALL_FAILURES, TargetPythonError, FactsScriptError) as exc:
            with self._lock:
                self.scripts[python_key(script_name, args)] = _failure(exc)
            raise
        stored = _map_strings(result, self._redact_text) if self._redact_text is not None else result
        with self._lock:
            self.scripts[python_key(script_name, args)] = {"result": stored}
        return result

    def python_many(self, calls: Sequence[ScriptCall]) -> list[ScriptAnswer]:
        # One run of the inner host's interpreter, as without recording; each call kept under its own key,
        # so a replay answers it one by one.
        answers = self.inner.python_many(calls)
        for call, answer in zip(calls, answers, strict=True):
            with self._lock:
                if answer.error is None:
                    stored = _map_strings(answer.value, self._redact_text) if self._redact_text is not None \
                        else answer.value
                    self.scripts[python_key(call.script_name, call.args)] = {"result": stored}
                elif isinstance(answer.error, (*_CALL_FAILURES, TargetPythonError, FactsScriptError)):
                    self.scripts[python_key(call.script_name, call.args)] = _failure(answer.error)
        return answers

    def environ(self) -> dict[str, str]:
        return self.inner.environ()

    def prefetch(self, gather_all: GatherAll) -> None:
        # The inner host learns ahead; what the probes then really ask goes through this recorder.
        self.inner.prefetch(gather_all)

    def save(self, directory: Path, options: Mapping[str, object] | None = None) -> Path:
        """Write the recording to `directory` (which must not hold a recording yet).

        `options` (the probe options the recording was taken with) are kept so that a replay asks
        the same questions, e.g. of the same processes.
        """
        files_root = directory / "files"
        if (directory / "host.json").exists():
            raise HostError(f"{directory} already holds a recording; choose another directory")
        files_root.mkdir(parents=True, exist_ok=True)
        for path, content in sorted(self.files.items()):
            target = files_root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        environ = self.inner.environ()
        if self._redact_environ is not None:
            environ = self._redact_environ(environ)
        document: dict[str, object] = {
            "format": RECORDING_FORMAT,
            "host": self.inner.describe(),
            "environ": environ,
            "missing": self.missing,
            "dirs": self.dirs,
            "commands": self.commands,
            "scripts": self.scripts,
        }
        if options is not None:
            document["options"] = options
        (directory / "host.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", "utf-8")
        return directory


def _map_strings(value: JSONValue, convert: TextRedactor) -> JSONValue:
    """`value` (JSON-like) with `convert` applied to every string in it."""
    if isinstance(value, str):
        return convert(value)
    if isinstance(value, list):
        return [_map_strings(item, convert) for item in value]
    if isinstance(value, dict):
        return {key: _map_strings(item, convert) for key, item in value.items()}
    return value
