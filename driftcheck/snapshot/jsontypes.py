"""The types of JSON documents: a snapshot, a probe's data, a tool's parsed output.

A value typed `JSONValue` is narrowed (`isinstance`) where it is read; a value only passed through is typed
`object` (or `Mapping[str, object]`) instead. Its containers are the read-only `Sequence` and `Mapping`, so a
record built as `dict[str, int | None]` or a `list[str]` is a JSON value as it is; `JSONObject`, the object at
the top of a document or record, is a `dict` its builder fills. A reader narrows with `isinstance(value, dict)`
or `isinstance(value, list)`: what `json.loads` gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONValue: TypeAlias = None | bool | int | float | str | Sequence["JSONValue"] | Mapping[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]


def object_or_empty(value: JSONValue) -> JSONObject:
    """`value` when it is a JSON object, else an empty one: a member that is absent, null or of another
    shape reads as "nothing there"."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: JSONValue) -> list[JSONValue]:
    """`value` when it is a JSON list, else an empty one (absent, null or of another shape)."""
    return value if isinstance(value, list) else []


def member_object(parent: JSONObject, key: str) -> JSONObject:
    """The object under `key` of a record whose shape the caller built (TypeError if it holds none)."""
    child = parent[key]
    if not isinstance(child, dict):
        raise TypeError(f"{key!r} holds {type(child).__name__}, not an object")
    return child


def value_at(value: JSONValue, *keys: str) -> JSONValue:
    """The value under `keys`, one object inside the next; None where one is absent or not an object."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
