"""The types of JSON documents: a snapshot, a probe's data, a tool's parsed output.

A value typed `JSONValue` is narrowed (`isinstance`) where it is read; a value only passed through is typed
`object` (or `Mapping[str, object]`) instead.
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]


def object_or_empty(value: JSONValue) -> JSONObject:
    """`value` when it is a JSON object, else an empty one: a member that is absent, null or of another
    shape reads as "nothing there"."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: JSONValue) -> list[JSONValue]:
    """`value` when it is a JSON list, else an empty one (absent, null or of another shape)."""
    return value if isinstance(value, list) else []
