"""What a document can hold, whatever was read: bytes that are not UTF-8 kept visible, numbers that are not
finite dropped, never fatal.

Python reads the environment, command lines and file names with `surrogateescape`: a byte that is not UTF-8
(`X=$(printf 'caf\\xe9')`) becomes a lone surrogate (U+DCE9), which no UTF-8 encoder accepts, so a document
holding one could not be written, hashed or signed. Every such character is written instead as the escape
Python would show for the byte (`\\xe9`), and any other lone surrogate as its `\\u` escape (`\\ud800`):
the text stays what was read, byte for byte readable, and the document stays valid UTF-8 JSON. A number parsed
from a hostile file (`/proc/uptime` holding a million 9s reads as infinity) has no JSON form: it is kept as null,
no value.
"""

from __future__ import annotations

import json
import math
import re

from driftcheck.snapshot.jsontypes import JSONValue

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def escape_undecodable(text: str) -> str:
    """`text` with each byte that was not UTF-8 (a surrogate escape) written as `\\xNN`, other lone surrogates
    as their `\\u` escape (`\\ud800`); text without any is returned as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_escape, text)
    return text


def storable(value: JSONValue) -> JSONValue:
    """A JSON value whose every string (keys too) encodes as UTF-8 (`escape_undecodable` applied throughout) and
    whose every number is finite (NaN and infinities as null). The value itself, uncopied, when it holds
    neither: one encoding in C tells."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False, default=str).encode("utf-8")
    except (UnicodeEncodeError, ValueError):
        return _made_storable(value)
    return value


def _made_storable(value: JSONValue) -> JSONValue:
    if isinstance(value, str):
        return escape_undecodable(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {escape_undecodable(key): _made_storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_made_storable(item) for item in value]
    return value


__all__ = ["escape_undecodable", "storable"]
