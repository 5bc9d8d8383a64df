"""Canonical JSON: the exact bytes that get signed and hashed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TypeVar


def canonical_bytes(value: object) -> bytes:
    """Sorted keys, no whitespace, UTF-8, no NaN: one byte sequence for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


_Value = TypeVar("_Value")


def content_of(document: Mapping[str, _Value]) -> dict[str, _Value]:
    """The signed part of a snapshot document: everything but its signature."""
    return {key: value for key, value in document.items() if key != "signature"}


def snapshot_id(document: Mapping[str, object]) -> str:
    """A snapshot's id: SHA-256 of its canonical content (signature excluded), in hex."""
    return hashlib.sha256(canonical_bytes(content_of(document))).hexdigest()


def pretty_json(value: object) -> str:
    """Indented, key-sorted JSON for files people read; parses back to the same value."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
