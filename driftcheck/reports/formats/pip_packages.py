"""`pip freeze`, `pip list` and `uv pip list`: the packages of one interpreter, as users paste them.

`pip freeze` prints `name==version`, `name @ URL` (a wheel or a VCS checkout) and `-e` lines; `pip list` and
`uv pip list` print a two-column table under a `Package Version` header and a rule of dashes (an editable
install adds a location column). Both fill the `packages` probe's shape with name and version; a line that
is neither (a warning, a prompt) is kept as unclaimed text. A list is complete only when no line of it was
left unread: a paste cut mid-table gives its packages but does not claim the others are gone. A list piped
through `grep` (`pip list | grep torch`: rows without the header) is read from the rows after that command
line, and is never complete: it shows the packages grep kept.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_FREEZE_PINNED = re.compile(rf"^(?P<name>{_NAME})(?:\[[^\]]*\])?\s*===?\s*(?P<version>[^\s;#]+)\s*(?:[;#].*)?$")
_FREEZE_URL = re.compile(rf"^(?P<name>{_NAME})(?:\[[^\]]*\])?\s+@\s+(?P<url>\S+)\s*$")
_FREEZE_EDITABLE = re.compile(r"^-e\s+(?P<url>\S+?)(?:#egg=(?P<name>[A-Za-z0-9._-]+))?\s*$")
# pip's own note before an editable install it cannot name a URL for: it names the package instead.
_EDITABLE_NOTE = re.compile(rf"^#\s*Editable .*\((?P<name>{_NAME})==(?P<version>[^\s)]+)\)\s*$")
_LIST_HEADER = re.compile(r"^\s*Package\s+Version(\s+\S.*)?$")
_LIST_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$")
_LIST_ROW = re.compile(rf"^\s*(?P<name>{_NAME})\s+(?P<version>\d[^\s]*)(?:\s+(?P<location>/\S.*|[A-Za-z]:\\\S.*))?\s*$")
# The command of a filtered list (`pip3 list|grep -i torch`, after a prompt or not).
_GREP_COMMAND = re.compile(r"\bpip3?\s+(?P<how>list|freeze)\b[^|]*\|\s*grep\b")
# A version a URL install leaves in its wheel's file name: `torch-2.5.1+cu124-cp311-...whl`.
_WHEEL_VERSION = re.compile(r"/[A-Za-z0-9_.]+-(?P<version>\d[^-/]*)-[^/]*\.whl$")


def _table_start(lines: list[str]) -> int | None:
    for i, line in enumerate(lines[:-1]):
        if _LIST_HEADER.match(line) and _LIST_RULE.match(lines[i + 1]):
            return i + 2
    return None


def starts(lines: list[str], i: int) -> bool:
    """A `pip list` header with its rule of dashes below."""
    return bool(_LIST_HEADER.match(lines[i])) and i + 1 < len(lines) and bool(_LIST_RULE.match(lines[i + 1]))


def _grep_start(lines: list[str]) -> tuple[int, str] | None:
    """The line after a `pip list | grep` (or `pip freeze | grep`) command followed by one of its rows, and how."""
    for i, line in enumerate(lines[:-1]):
        command = _GREP_COMMAND.search(line)
        if command and _grep_row(command["how"], lines[i + 1]):
            return i + 1, command["how"]
    return None


def _grep_row(how: str, line: str) -> tuple[str, str | None] | None:
    if how == "list":
        row = _LIST_ROW.match(line)
        return (row["name"], row["version"]) if row else None
    return _freeze_row(line.strip())


def detect(text: str) -> bool:
    """A `pip list` table (header and rule), a `pip list | grep` command with its rows, or a text whose lines are
    mostly `pip freeze` requirements."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if _table_start(lines) is not None or _grep_start([line.rstrip() for line in text.splitlines()
                                                       if line.strip()]) is not None:
        return True
    allowed = len(lines) - max(3, 0.8 * len(lines))  # lines that may be something else
    frozen = 0
    for line in lines:
        if _FREEZE_PINNED.match(line) or _FREEZE_URL.match(line) or _FREEZE_EDITABLE.match(line) \
                or _EDITABLE_NOTE.match(line):
            frozen += 1
        else:
            allowed -= 1
            if allowed < 0:  # too many other lines already: no freeze output
                return False
    return frozen >= 3 and frozen >= 0.8 * len(lines)


def _freeze_row(line: str) -> tuple[str, str | None] | None:
    pinned = _FREEZE_PINNED.match(line)
    if pinned:
        return pinned["name"], pinned["version"]
    url = _FREEZE_URL.match(line)
    if url:
        wheel = _WHEEL_VERSION.search(url["url"])
        return url["name"], wheel["version"] if wheel else None
    editable = _FREEZE_EDITABLE.match(line)
    if editable and editable["name"]:
        return editable["name"], None
    return None


def parse(text: str) -> Parsed:
    """The `packages` probe (name and version of each distribution) of a pasted pip freeze or pip list."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    start = _table_start(lines)
    grepped = _grep_start(lines) if start is None else None
    if grepped is not None:
        return _parse_grepped(lines, *grepped)
    rows: list[tuple[str, str]] = []
    # What precedes the table's header (a note, another tool's lines) is kept; fences and prompts are noise.
    unclaimed: list[str] = [line for line in lines[:start - 2] if not Paste.of(line).noise] if start else []
    noted: tuple[str, str] | None = None
    for line in lines[start:] if start is not None else lines:
        note = _EDITABLE_NOTE.match(line.strip()) if start is None else None
        if note:
            noted = (note["name"], note["version"])
            continue
        found = _LIST_ROW.match(line) if start is not None else _freeze_row(line.strip())
        if found is None and noted and line.strip().startswith("-e "):
            found, noted = noted, None  # `-e /path` of the package pip's note just named
        if found is None:
            unclaimed.append(line)
            continue
        name, version = (found["name"], found["version"]) if isinstance(found, re.Match) else found
        rows.append((name, version or "unknown"))
    if not rows:
        raise ValueError("a pip package list with no package line")
    variant = "pip list" if start is not None else "pip freeze"
    # Every line read: the list is whole, and a package missing from it is not installed.
    complete = ["probes.packages.data.packages"] if not unclaimed else []
    return Parsed(probes={"packages": facts.packages_data(rows, None)}, variant=variant, unclaimed=unclaimed,
                  complete=complete)


def _parse_grepped(lines: list[str], start: int, how: str) -> Parsed:
    """The rows a `pip list | grep` printed after its command line; everything else kept (markup and prompts as
    noise), and the list never complete."""
    rows: list[tuple[str, str]] = []
    unclaimed: list[str] = []
    noise: list[str] = []
    for i, line in enumerate(lines):
        found = _grep_row(how, line) if i >= start else None
        if found is not None:
            rows.append((found[0], found[1] or "unknown"))
        elif i == start - 1 or Paste.of(line).noise:
            noise.append(line)
        else:
            unclaimed.append(line)
    return Parsed(probes={"packages": facts.packages_data(rows, None)}, variant=f"pip {how} | grep",
                  unclaimed=unclaimed, noise=noise)


FORMAT = Format("pip-packages", "pip freeze / pip list", "pip", detect, parse, starts,
                start_hint=r"\s*Package\s+Version")
