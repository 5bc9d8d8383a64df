"""Reading many small /proc and /sys files through a Host, one missing file at a time.

Probes such as `system` and `nccl` read dozens of files of which any may be absent (a VM without
cpufreq, a container without /sys/class/infiniband) or unreadable. `SysReader` collects what it read
into a JSON-able raw record (`files`: path → text or null, `dirs`: path → names or null) so that
`parse` stays a pure function of it, and `RawView` answers the same questions from that record.
A path that exists but may not be read is also listed under `denied`: "not allowed to see" is not
"not there" (a denied cgroup limit file must never read as "no limit").
"""

from __future__ import annotations

from collections.abc import Mapping

from driftcheck.hosts import Host

# The value a probe writes for a fact whose file exists but may not be read: unknown, never "absent".
DENIED = "denied"


class SysReader:
    """Reads through `host`, remembering every answer; an unreadable path is recorded as None."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.files: dict[str, str | None] = {}
        self.dirs: dict[str, list[str] | None] = {}
        self.denied: set[str] = set()

    def text(self, path: str) -> str | None:
        """The file's text, or None when it is absent or cannot be read (see `is_denied`)."""
        if path not in self.files:
            try:
                self.files[path] = self.host.read_text(path)
            except PermissionError:
                self.files[path] = None
                self.denied.add(path)
            except (OSError, ValueError):
                self.files[path] = None
        return self.files[path]

    def listing(self, path: str) -> list[str] | None:
        """The directory's entry names, or None when it is absent or cannot be listed (see `is_denied`)."""
        if path not in self.dirs:
            try:
                self.dirs[path] = self.host.list_dir(path)
            except PermissionError:
                self.dirs[path] = None
                self.denied.add(path)
            except (OSError, ValueError):
                self.dirs[path] = None
        return self.dirs[path]

    def is_denied(self, path: str) -> bool:
        """Whether `path` exists but reading or listing it was refused."""
        return path in self.denied

    def raw(self) -> dict[str, object]:
        """Everything read so far, as the JSON-able raw material of a probe."""
        return {"files": dict(self.files), "dirs": dict(self.dirs), "denied": sorted(self.denied)}


class RawView:
    """The answers a `SysReader` recorded, for use inside a pure `parse`."""

    def __init__(self, raw: Mapping[str, object]) -> None:
        files, dirs, denied = raw.get("files"), raw.get("dirs"), raw.get("denied")
        self.files: dict[str, str | None] = _texts(files) if isinstance(files, dict) else {}
        self.dirs: dict[str, list[str] | None] = _listings(dirs) if isinstance(dirs, dict) else {}
        self.denied: frozenset[str] = frozenset(map(str, denied)) \
            if isinstance(denied, (list, tuple, set, frozenset)) else frozenset()

    def is_denied(self, path: str) -> bool:
        """Whether reading or listing `path` was refused (it exists), as opposed to absent."""
        return path in self.denied

    def text(self, path: str) -> str | None:
        """The recorded text of `path`, None when it was absent or unreadable."""
        return self.files.get(path)

    def stripped(self, path: str) -> str | None:
        """The recorded text of `path` without surrounding whitespace."""
        text = self.files.get(path)
        return None if text is None else text.strip()

    def integer(self, path: str) -> int | None:
        """The recorded content of `path` as an integer, None when absent or not a number."""
        return to_int(self.stripped(path))

    def listing(self, path: str) -> list[str] | None:
        """The recorded entry names of directory `path`, None when it was absent."""
        names = self.dirs.get(path)
        return None if names is None else list(names)


def to_int(text: str | None) -> int | None:
    """`text` as an int, or None when it is None or not an integer."""
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def key_values(text: str | None, separator: str = ":") -> dict[str, str]:
    """`Name<sep> value` lines (as in /proc/meminfo, /proc/PID/status) as a dict."""
    result: dict[str, str] = {}
    for line in (text or "").splitlines():
        name, sep, value = line.partition(separator)
        if sep:
            result[name.strip()] = value.strip()
    return result


def kib(value: str | None) -> int | None:
    """A /proc/meminfo value such as `24683652 kB` in KiB."""
    if not value:
        return None
    number, _, unit = value.partition(" ")
    amount = to_int(number)
    if amount is None:
        return None
    factor = {"": 1, "kB": 1, "KB": 1, "mB": 1024, "MB": 1024, "gB": 1024 * 1024, "GB": 1024 * 1024}
    return amount * factor.get(unit.strip(), 1)


def _texts(files: Mapping[object, object]) -> dict[str, str | None]:
    """The recorded `files` member: path -> text, None for a file that could not be read."""
    return {str(path): None if text is None else str(text) for path, text in files.items()}


def _listings(dirs: Mapping[object, object]) -> dict[str, list[str] | None]:
    """The recorded `dirs` member: path -> entry names, None for a directory that could not be listed."""
    return {str(path): [str(name) for name in names] if isinstance(names, list) else None
            for path, names in dirs.items()}
