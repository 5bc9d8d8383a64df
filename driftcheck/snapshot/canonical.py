"""Canonical JSON: the exact bytes that get signed and hashed."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_bytes(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8, no NaN: one byte sequence for one value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def content_of(document: dict[str, Any]) -> dict[str, Any]:
    """The signed part of a snapshot document: everything but its signature."""
    return {key: value for key, value in document.items() if key != "signature"}


def snapshot_id(document: dict[str, Any]) -> str:
    """A snapshot's id: SHA-256 of its canonical content (signature excluded), in hex."""
    return hashlib.sha256(canonical_bytes(content_of(document))).hexdigest()


def pretty_json(value: Any) -> str:
    """Indented, key-sorted JSON for files people read; parses back to the same value."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
