"""The types of JSON documents: a snapshot, a probe's data, a tool's parsed output.

A value typed `JSONValue` is narrowed (`isinstance`) where it is read; a value only passed through is typed
`object` (or `Mapping[str, object]`) instead.
"""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]
