"""Every restoring change the flag tables can produce, for the values a field can hold: the cases both the
table test and the real-parser test run."""

from __future__ import annotations

from driftcheck.serving.flag_tables import FlagSpec, FlagTable, Restoration
from driftcheck.snapshot.jsontypes import JSONValue


def sample_values(spec: FlagSpec) -> list[JSONValue]:
    """Values a server could report for the field: its default, each choice, and one of its type."""
    values: list[JSONValue] = []
    if spec.sets:
        values += sorted({value for value in spec.sets.values() if isinstance(value, bool)})
    elif spec.choices:
        # a choice that is the text "None" stands for no value in vLLM's enums; the flag does not take it
        values += [choice for choice in spec.choices if choice != "None"]
    elif spec.resolves:
        values += list(spec.resolves)  # vLLM's optimization levels: text the configuration holds as an integer
    elif spec.value in ("int", "human_int", "human_int_or_auto", "human_int_iec"):
        values += [[1, 2, 8] if spec.nargs in ("+", "*") else 7]
    elif spec.value == "float":
        values += [0.5]
    elif spec.value == "json":
        # A configuration object (vLLM's compilation or speculative config): its JSON is checked by its own
        # class, which takes only its own keys; no sample value is honest for all of them.
        return []
    elif spec.takes_value:
        values += [["a", "b"] if spec.nargs in ("+", "*") else "some-value"]
    if spec.default is not None and not isinstance(spec.default, (dict, list)) and spec.default not in values:
        values.append(spec.default)
    values.append(None)
    return values


def restorations(table: FlagTable) -> list[tuple[JSONValue, Restoration]]:
    """(A's value, the restoring change) for every field of the table and every sample value it can restore."""
    found = []
    for spec in table.fields.values():
        if not spec.flags or spec.action in ("append", "count"):
            continue
        for value in sample_values(spec):
            restoration = table.restoring(spec.field, value)
            if restoration is not None:
                found.append((value, restoration))
    return found
