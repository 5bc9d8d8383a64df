"""Recording a host's raw inputs to a directory, and replaying such a directory as a host.

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftcheck.errors import HostError
from driftcheck.host import CommandResult, CommandTimeout, FactsScriptError, Host, TargetPythonError

RECORDING_FORMAT = 1


def _command_key(argv: Sequence[str]) -> str:
    return json.dumps(list(argv))


def _python_key(script_name: str, args: Sequence[str]) -> str:
    return json.dumps([script_name, *args])


def _failure(exc: BaseException) -> dict[str, str]:
    return {"error": type(exc).__name__, "message": str(exc)}


_FAILURES: dict[str, type[Exception]] = {
    "FileNotFoundError": FileNotFoundError,
    "PermissionError": PermissionError,
    "NotADirectoryError": NotADirectoryError,
    "IsADirectoryError": IsADirectoryError,
    "CommandTimeout": CommandTimeout,
    "TargetPythonError": TargetPythonError,
    "FactsScriptError": FactsScriptError,
}


def _raise_recorded(entry: dict[str, str]) -> None:
    raise _FAILURES.get(entry["error"], OSError)(entry.get("message", ""))


class RecordingHost(Host):
    """Wraps a host and keeps everything the probes read, so it can be saved with `save(dir)`.

    `redact_environ` turns the environment into what may be written to disk (secrets replaced);
    `redact_file(path, content)` does the same for a file's content (a process's environ or command
    line), and `redact_text` for command output and facts-script strings. The probes themselves still
    see the unredacted answers, exactly as without recording.
    """

    def __init__(self, inner: Host, redact_environ: Any = None, redact_file: Any = None,
                 redact_text: Any = None) -> None:
        self.inner = inner
        self.kind = inner.kind
        self._redact_environ = redact_environ
        self._redact_file = redact_file
        self._redact_text = redact_text
        self._lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.missing: dict[str, dict[str, str]] = {}
        self.dirs: dict[str, Any] = {}
        self.commands: dict[str, Any] = {}
        self.scripts: dict[str, Any] = {}

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
        except (OSError, CommandTimeout) as exc:
            with self._lock:
                self.commands[_command_key(argv)] = _failure(exc)
            raise
        stored = result.to_json()
        if self._redact_text is not None:
            stored["stdout"] = self._redact_text(result.stdout)
            stored["stderr"] = self._redact_text(result.stderr)
        with self._lock:
            self.commands[_command_key(argv)] = stored
        return result

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> Any:
        try:
            result = self.inner.python(script_name, args, timeout_s)
        except (OSError, CommandTimeout, TargetPythonError, FactsScriptError) as exc:
            with self._lock:
                self.scripts[_python_key(script_name, args)] = _failure(exc)
            raise
        stored = _map_strings(result, self._redact_text) if self._redact_text is not None else result
        with self._lock:
            self.scripts[_python_key(script_name, args)] = {"result": stored}
        return result

    def environ(self) -> dict[str, str]:
        return self.inner.environ()

    def save(self, directory: Path, options: dict[str, Any] | None = None) -> Path:
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
        document = {
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


def _map_strings(value: Any, convert: Any) -> Any:
    """`value` (JSON-like) with `convert` applied to every string in it."""
    if isinstance(value, str):
        return convert(value)
    if isinstance(value, list):
        return [_map_strings(item, convert) for item in value]
    if isinstance(value, dict):
        return {key: _map_strings(item, convert) for key, item in value.items()}
    return value


class ReplayHost(Host):
    """A recorded machine: every read, command and script answers as it did when recorded.

    Anything the recording does not hold answers FileNotFoundError, as a machine without it would.
    """

    kind = "replay"

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        manifest = self.directory / "host.json"
        try:
            self._doc: dict[str, Any] = json.loads(manifest.read_text("utf-8"))
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise HostError(f"{self.directory} is not a recording (a directory with host.json)") from exc
        except OSError as exc:
            raise HostError(f"{manifest}: cannot read: {exc.strerror or exc}") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HostError(f"{manifest} is not valid JSON: {exc}") from exc
        if not isinstance(self._doc, dict) or self._doc.get("format") != RECORDING_FORMAT:
            raise HostError(f"{manifest} is not a driftcheck recording of format {RECORDING_FORMAT}")

    @property
    def name(self) -> str:
        return str(self._doc.get("host", {}).get("name", self.directory.name))

    def read_bytes(self, path: str) -> bytes:
        recorded = self._doc.get("missing", {}).get(path)
        if recorded is not None:
            _raise_recorded(recorded)
        target = self.directory / "files" / path.lstrip("/")
        if not target.is_file():
            raise FileNotFoundError(f"{path} (not in the recording)")
        return target.read_bytes()

    def list_dir(self, path: str) -> list[str]:
        entry = self._doc.get("dirs", {}).get(path)
        if entry is None:
            raise FileNotFoundError(f"{path} (not in the recording)")
        if isinstance(entry, dict):
            _raise_recorded(entry)
        return list(entry)

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        entry = self._doc.get("commands", {}).get(_command_key(argv))
        if entry is None:
            raise FileNotFoundError(f"{argv[0]}: command not in the recording")
        if "error" in entry:
            _raise_recorded(entry)
        return CommandResult.from_json(entry)

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> Any:
        entry = self._doc.get("scripts", {}).get(_python_key(script_name, args))
        if entry is None:
            raise FileNotFoundError(f"{script_name}: script result not in the recording")
        if "error" in entry:
            _raise_recorded(entry)
        return entry["result"]

    def environ(self) -> dict[str, str]:
        return dict(self._doc.get("environ", {}))

    @property
    def recorded_options(self) -> dict[str, Any] | None:
        """The probe options the recording was taken with, when it kept them."""
        options = self._doc.get("options")
        return dict(options) if isinstance(options, dict) else None

    def describe(self) -> dict[str, Any]:
        recorded = dict(self._doc.get("host", {}))
        recorded["kind"] = self.kind
        recorded["recorded_kind"] = self._doc.get("host", {}).get("kind")
        return recorded
