"""Change paths: the dotted strings that name a place in a snapshot (`probes.env.data.vars.HOME`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

_PLAIN_SEGMENT = re.compile(r"^[A-Za-z0-9_\-]+$")

PathPart = str | int


def leaves(data: object, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    """Every (path parts, value) under `data`, keys in sorted order; as in a diff, a list, a scalar or an
    empty mapping is a leaf (a non-empty mapping is descended into)."""
    if isinstance(data, dict) and data:
        for key in sorted(data, key=str):
            yield from leaves(data[key], (*prefix, str(key)))
    else:
        yield prefix, data


def format_path(parts: Sequence[PathPart]) -> str:
    """Join path parts: plain names with dots, list positions as [i], other keys as ["..."]."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_SEGMENT.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


_SEGMENT = re.compile(r'\.?([A-Za-z0-9_\-]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def parse_path(path: str) -> tuple[PathPart, ...]:
    """The parts of a path written by `format_path` (the inverse of it); ValueError when malformed."""
    if not path:
        raise ValueError("not a change path: empty")
    parts: list[PathPart] = []
    position = 0
    while position < len(path):
        found = _SEGMENT.match(path, position)
        if found is None or (found.group(1) is not None and position and not found.group(0).startswith(".")):
            raise ValueError(f"not a change path: {path!r}")
        name, index, quoted = found.groups()
        parts.append(name if name is not None else int(index) if index is not None else json.loads(quoted))
        position = found.end()
    return tuple(parts)
