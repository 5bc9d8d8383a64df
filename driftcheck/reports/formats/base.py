"""The shape every format module fills: one `Format` entry, whose `parse` returns a `Parsed`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from driftcheck.snapshot.jsontypes import JSONObject, object_or_empty


@dataclass
class Parsed:
    """What one pasted text says, in probe shapes, and what it said that no probe holds.

    `probes`: probe name → data in that probe's shape. `role`: "report" (a whole environment report),
    "gpu" (a GPU description) or "topology" (a bare topology matrix), which decides how files combine.
    `fields`: `Key: value` lines no probe took, kept as raw fields. `unclaimed`: lines nothing understood,
    verbatim. `noise`: markup and log lines set aside. `complete`: change paths of maps the text lists in
    full (a key missing there is gone, not merely unreported). `cut`: change paths of lists the paste
    ends inside (what follows them is missing, not gone).
    """

    probes: dict[str, JSONObject]
    role: str = "report"
    variant: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    unclaimed: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Format:
    """One text format `driftcheck import` reads: its name, the tool that prints it, detect and parse.

    `detect(text)` says whether the text is this format; `parse(text)` reads it, raising
    `driftcheck.nvidia.values.NvidiaFormatError` (or ValueError) when it looks like the format but is broken;
    `starts(lines, i)` whether its output begins at line i of an issue body holding several.
    """

    name: str
    title: str
    tool: str
    detect: Callable[[str], bool]
    parse: Callable[[str], Parsed]
    # Whether line i of an issue body is where this tool's output begins (an issue body is cut there into
    # sections); None for a format that is never pasted after another output in one block, or is embedded in one.
    starts: Callable[[list[str], int], bool] | None = None
    # A pattern matching the start of line i (`re.match`) without which `starts` is never true there: an issue
    # body of 35,000 lines is cut into sections by testing one union of these per line, not every `starts`.
    start_hint: str | None = None


# The process list of every GPU: a format that reads its processes section lists each GPU's processes in full.
GPU_PROCESSES = "probes.gpu.data.gpus.*.processes"


def gpu_completeness(probes: Mapping[str, JSONObject], process_sections: int) -> list[str]:
    """Maps a whole nvidia-smi GPU description lists in full, declared from what it holds: its GPUs when it
    holds as many as it says are attached (`gpu_count`; a paste cut mid-list holds fewer), and each GPU's
    processes when the text holds a processes section for every GPU (`process_sections` of them: an empty
    one means none run; `-d CLOCK` prints none, and then nothing is known about processes)."""
    gpu = object_or_empty(probes.get("gpu"))
    gpus = gpu.get("gpus")
    if not isinstance(gpus, dict) or not gpus:
        return []
    complete = []
    if gpu.get("gpu_count") == len(gpus):
        complete += ["probes.gpu.data.gpus", "probes.pcie.data.gpus"]
    if process_sections >= len(gpus):
        complete.append(GPU_PROCESSES)
    return complete
