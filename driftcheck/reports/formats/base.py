"""The shape every format module fills: one `Format` entry, whose `parse` returns a `Parsed`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Parsed:
    """What one pasted text says, in probe shapes, and what it said that no probe holds.

    `probes`: probe name → data in that probe's shape. `role`: "report" (a whole environment report),
    "gpu" (a GPU description) or "topology" (a bare topology matrix), which decides how files combine.
    `fields`: `Key: value` lines no probe took, kept as raw fields. `unclaimed`: lines nothing understood,
    verbatim. `noise`: markup and log lines set aside. `complete`: change paths of maps the text lists in
    full (a key missing there is gone, not merely unreported).
    """

    probes: dict[str, dict[str, Any]]
    role: str = "report"
    variant: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    unclaimed: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Format:
    """One text format `driftcheck import` reads: its name, the tool that prints it, detect and parse.

    `detect(text)` says whether the text is this format; `parse(text)` reads it, raising
    `driftcheck.nvidia.values.NvidiaFormatError` (or ValueError) when it looks like the format but is broken.
    """

    name: str
    title: str
    tool: str
    detect: Callable[[str], bool]
    parse: Callable[[str], Parsed]
