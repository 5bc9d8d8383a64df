"""How a fact's value reads to people: on/off, none, 1980 rather than 1980.0, KiB as GiB, a unit after a
number. Below both the diff (which leaves out a reading whose two values read the same) and explain (which
writes every title with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from driftcheck.analysis.diff import Change

_KIB_PER_GIB = 1024 * 1024
_UNIT_WORDS = {"mhz": "MHz", "w": "W", "c": "C", "mib": "MiB", "s": "s", "pct": "%", "mbps": "Mb/s", "bytes": "bytes"}


def show_value(value: Any) -> str:
    """A fact as people read it: on/off, none, a comma list, 1980 rather than 1980.0."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(show_value(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return _show_dict(value)
    return str(value)


def _show_dict(value: dict[str, Any]) -> str:
    """A mapping as people read it: a package copy, a GPU process, or `key=value` pairs (not JSON)."""
    if not value:
        return "none"
    if "version" in value and "location" in value:
        return f"{show_value(value.get('version'))} in {show_value(value.get('location'))}"
    if "pid" in value and ("name" in value or "used_memory_mib" in value):
        memory = value.get("used_memory_mib")
        extra = f", {show_value(memory)} MiB" if memory is not None else ""
        return f"{show_value(value.get('name'))} (pid {show_value(value.get('pid'))}{extra})"
    return ", ".join(f"{key}={show_value(item)}" for key, item in sorted(value.items()))


def amount(change: Change, value: Any) -> str:
    """A reading's value with its unit: KiB as GiB, the unit a field name ends with after the number."""
    if value is None:
        return "absent"
    unit = str(change.parts[-1]).rsplit("_", 1)[-1].lower() if change.parts else ""
    if unit == "kib" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value / _KIB_PER_GIB:.1f} GiB"
    text = show_value(value)
    if unit in _UNIT_WORDS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{text} {_UNIT_WORDS[unit]}"
    return text if len(text) <= 60 else text[:57] + "..."


def reads_the_same(change: Change) -> bool:
    """Whether a reading's two values read the same once written with their unit (23.0 GiB -> 23.0 GiB):
    nothing a reader can see moved, so it is not listed."""
    return change.kind == "changed" and amount(change, change.before) == amount(change, change.after)
