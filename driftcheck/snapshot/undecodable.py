"""Bytes that are not UTF-8, kept visible and never fatal.

Python reads the environment, command lines and file names with `surrogateescape`: a byte that is not UTF-8
(`X=$(printf 'caf\\xe9')`) becomes a lone surrogate (U+DCE9), which no UTF-8 encoder accepts, so a document
holding one could not be written, hashed or signed. Every such character is written instead as the escape
Python would show for the byte (`\\xe9`), and any other lone surrogate as `\\udXXX`: the text stays what was
read, byte for byte readable, and the document stays valid UTF-8 JSON.
"""

from __future__ import annotations

import json
import re

from driftcheck.snapshot.jsontypes import JSONValue

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def escape_undecodable(text: str) -> str:
    """`text` with each byte that was not UTF-8 (a surrogate escape) written as `\\xNN`, other lone surrogates
    as `\\uXXXX`; text without any is returned as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_escape, text)
    return text


def undecodable_escaped(value: JSONValue) -> JSONValue:
    """A JSON value whose every string (keys too) encodes as UTF-8: `escape_undecodable` applied throughout
    (the value itself, uncopied, when it has nothing to escape: one encoding in C tells)."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return _escaped(value)
    return value


def _escaped(value: JSONValue) -> JSONValue:
    if isinstance(value, str):
        return escape_undecodable(value)
    if isinstance(value, dict):
        return {escape_undecodable(key): _escaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    return value


__all__ = ["escape_undecodable", "undecodable_escaped"]
