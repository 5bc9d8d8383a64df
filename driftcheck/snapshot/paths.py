"""Change paths: the dotted strings that name a place in a snapshot (`probes.env.data.vars.HOME`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

_PLAIN_SEGMENT = re.compile(r"^[A-Za-z0-9_\-]+$")

PathPart = str | int


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
