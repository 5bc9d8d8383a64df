"""Replaying a recording directory (written by `RecordingHost.save`) as a host."""

from __future__ import annotations

import errno
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from driftcheck.errors import HostError, failure_by_name
from driftcheck.hosts.base import Capabilities, CommandResult, Host
from driftcheck.hosts.recording import RECORDING_FORMAT, command_key, python_key
from driftcheck.snapshot.inputs import InputError, read_input
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

# The largest file a probe reads on a real machine is a few MB (/proc/cpuinfo of 512 CPUs, a module list): a
# recorded file past this is no recording of a machine, and is refused rather than read into memory.
RECORDED_FILE_LIMIT = 64 * 1024 * 1024


def _raise_recorded(entry: Mapping[str, object]) -> None:
    raise failure_by_name(str(entry["error"]), str(entry.get("message", "")))


class ReplayHost(Host):
    """A recorded machine: every read, command and script answers as it did when recorded.

    Anything the recording does not hold answers FileNotFoundError, as a machine without it would.
    """

    kind = "replay"
    capabilities = Capabilities(few_calls=True, recorded=True)

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        manifest = self.directory / "host.json"
        if not manifest.exists() and not manifest.is_symlink():
            raise HostError(f"{self.directory} is not a recording (a directory with host.json)")
        try:
            # Bounded, and a regular file only: a FIFO would block the replay for ever, /dev/zero never ends.
            document: JSONValue = json.loads(read_input(manifest, "a recording's host.json").decode("utf-8"))
        except InputError as exc:
            raise HostError(f"{manifest} {exc}") from None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise HostError(f"{manifest} is not valid JSON: {exc}") from exc
        if not isinstance(document, dict) or document.get("format") != RECORDING_FORMAT:
            raise HostError(f"{manifest} is not a driftcheck recording of format {RECORDING_FORMAT}")
        self._doc: JSONObject = document

    def _section(self, name: str) -> JSONObject:
        """One part of the recording (host, missing, dirs, commands, scripts, environ), by key."""
        section = self._doc.get(name)
        return section if isinstance(section, dict) else {}

    @property
    def name(self) -> str:
        return str(self._section("host").get("name", self.directory.name))

    def read_bytes(self, path: str) -> bytes:
        recorded = self._section("missing").get(path)
        if isinstance(recorded, dict):
            _raise_recorded(recorded)
        target = self.directory / "files" / path.lstrip("/")
        if not target.is_file():
            raise FileNotFoundError(f"{path} (not in the recording)")
        try:
            return read_input(target, "a recorded file", limit=RECORDED_FILE_LIMIT)
        except InputError as exc:  # a read failure of that file, as the probe reading it sees one
            raise OSError(errno.EFBIG, f"{path}: {exc}") from None

    def list_dir(self, path: str) -> list[str]:
        entry = self._section("dirs").get(path)
        if entry is None:
            raise FileNotFoundError(f"{path} (not in the recording)")
        if isinstance(entry, dict):
            _raise_recorded(entry)
        return [str(name) for name in entry] if isinstance(entry, list) else []

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        entry = self._section("commands").get(command_key(argv))
        if not isinstance(entry, dict):
            raise FileNotFoundError(f"{argv[0]}: command not in the recording")
        if "error" in entry:
            _raise_recorded(entry)
        return CommandResult.from_json(entry)

    def python(self, script_name: str, args: Sequence[str] = (), timeout_s: float = 60.0) -> JSONValue:
        entry = self._section("scripts").get(python_key(script_name, args))
        if not isinstance(entry, dict):
            raise FileNotFoundError(f"{script_name}: script result not in the recording")
        if "error" in entry:
            _raise_recorded(entry)
        return entry["result"]

    def environ(self) -> dict[str, str]:
        return {name: str(value) for name, value in self._section("environ").items()}

    @property
    def recorded_options(self) -> JSONObject | None:
        """The probe options the recording was taken with, when it kept them."""
        options = self._doc.get("options")
        return dict(options) if isinstance(options, dict) else None

    def describe(self) -> JSONObject:
        recorded = dict(self._section("host"))
        recorded["kind"] = self.kind
        recorded["recorded_kind"] = self._section("host").get("kind")
        return recorded
