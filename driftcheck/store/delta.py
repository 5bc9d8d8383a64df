"""A snapshot document as the difference from another: how the store keeps history small.

Most snapshots of a machine repeat the one before almost entirely (the same 600 packages, the same
file hashes); what differs is a handful of leaves (a clock, the uptime, one upgraded package). A delta
is a tree shaped like the document that holds only those leaves: a mapping means "descend here", a
one-element list `[value]` means "set this key to value" and an empty list `[]` means "remove this
key". Lists and scalars of the document are leaves: a changed list is stored whole. Shared path
prefixes are written once, so a day's delta is small even before compression.
Applying the delta to its base gives back the document exactly (same canonical bytes, so the same id
and a signature that still verifies); the store checks that before it relies on a delta.
"""

from __future__ import annotations

import zlib

from driftcheck.snapshot.canonical import canonical_bytes
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue

# A tree shaped like the document: an object descends, `[value]` sets a key, `[]` removes it.
Delta = JSONObject


def _same(before: JSONValue, after: JSONValue) -> bool:
    # `1 == 1.0 == True` in Python, but not in JSON: the type decides the canonical bytes, also inside a list.
    if type(before) is not type(after) or before != after:
        return False
    return not isinstance(before, list) or canonical_bytes(before) == canonical_bytes(after)


def delta_tree(base: JSONObject, target: JSONObject) -> Delta:
    """The delta that turns `base` into `target` (empty when they are equal)."""
    delta: Delta = {}
    for key in set(base) | set(target):
        if key not in target:
            delta[key] = []
            continue
        after = target[key]
        if key not in base:
            delta[key] = [after]
            continue
        before = base[key]
        if isinstance(before, dict) and isinstance(after, dict):
            inner = delta_tree(before, after)
            if inner:
                delta[key] = inner
        elif not _same(before, after):
            delta[key] = [after]
    return delta


def apply_delta(document: JSONObject, delta: Delta) -> JSONObject:
    """`document` with `delta` applied, changed in place (ValueError when the delta does not fit it).

    In place because a chain applies dozens of deltas to one freshly parsed document: copying it at
    every link would cost more than the rest of a read.
    """
    for key, change in delta.items():
        if isinstance(change, list):
            if len(change) > 1:
                raise ValueError(f"malformed delta at {key!r}")
            if change:
                document[key] = change[0]
            else:
                document.pop(key, None)
        elif isinstance(change, dict) and isinstance(inner := document.get(key), dict):
            apply_delta(inner, change)
        else:
            raise ValueError(f"delta at {key!r} does not fit its base")
    return document


def pack(value: object) -> bytes:
    """`value` as compressed canonical JSON: what the store writes."""
    return zlib.compress(canonical_bytes(value), 9)


def unpack(blob: bytes) -> str:
    """The canonical JSON text `pack` compressed."""
    return zlib.decompress(blob).decode("utf-8")
