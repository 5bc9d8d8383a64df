"""xFormers' `python -m xformers.info`: the version line, then one `name: status` line per feature.

xformers/info.py prints `xFormers <version>`, then each operator's availability
(`memory_efficient_attention.cutlassF: available`), `is_triton_available`, and always `pytorch.version` and
`pytorch.cuda` (`available` / `not available`); with CUDA, the current device's `gpu.compute_capability`
and `gpu.name`; later releases add `build.*` lines (what the wheel was built with). Names are padded to
40 or 50 columns; a longer name is followed by one space.

xformers' and torch's versions, torch's CUDA availability and the current GPU become facts; every other
line (operators, build) stays a raw field, since no probe holds them (`build.torch_version` is what the wheel
was built for, not what runs). Warnings printed before the version line are left unclaimed.

A paste that ends inside the list (its last line a name cut mid-word, or a name whose value never came)
keeps every whole line before it and says the list is cut; a value cut mid-word with no sign of it cannot
be told apart from a whole one.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_VERSION_LINE = re.compile(r"^\s*xFormers (?P<version>\d[\w.+!-]*)\s*$")
# `name: status`; a name is dotted and may carry `@<version>` or `-pt`. The value may be empty (cut).
_FEATURE = re.compile(r"^\s*(?P<name>[A-Za-z_][\w.@+-]*):(?:\s+(?P<value>\S.*?))?\s*$")
_PROMPT = re.compile(r"^.*\bpython3? -m xformers\.info\W*$")
# The change path the paste ends inside: the list of raw fields (torch and GPU lines come after it).
FIELDS = "host.report.fields"


def _features(lines: list[str]) -> tuple[int, str, list[tuple[int, str, str | None]]] | None:
    """The version line's index, xformers' version and the `(line index, name, value)` rows after it; None
    without a version line."""
    found = next(((i, m["version"]) for i, line in enumerate(lines) if (m := _VERSION_LINE.match(line))), None)
    if found is None:
        return None
    start, version = found
    rows: list[tuple[int, str, str | None]] = []
    for i in range(start + 1, len(lines)):
        match = _FEATURE.match(lines[i])
        if match:
            rows.append((i, match["name"], match["value"]))
        elif rows and rows[-1][2] is None and rows[-1][0] == i - 1 and lines[i].strip():
            # A name padded by 40 blanks or more was split from its value as a fused line: join them again.
            rows[-1] = (i, rows[-1][1], lines[i].strip())
        elif lines[i].strip():
            break
    return start, version, rows


def detect(text: str) -> bool:
    """An `xFormers <version>` line followed by at least two `name: status` lines."""
    found = _features(text.replace("\r", "").splitlines())
    return found is not None and len(found[2]) >= 2


def starts(lines: list[str], i: int) -> bool:
    """The `xFormers <version>` line, when a feature line follows it."""
    return bool(_VERSION_LINE.match(lines[i])) and i + 1 < len(lines) and bool(_FEATURE.match(lines[i + 1]))


def _cut(paste: Paste, rows: list[tuple[int, str, str | None]], end: int) -> bool:
    """Whether the paste ends inside the list: its last row has no value, or the first line after the rows
    is the last of the paste and a fragment of a name (`memory`, `sp24.sparse24_spar`)."""
    if rows and rows[-1][2] is None and not any(line.strip() for line in paste.lines[rows[-1][0] + 1:]):
        return True
    rest = [line for line in paste.lines[end:] if line.strip()]
    return len(rest) == 1 and bool(re.fullmatch(r"\s*[A-Za-z_][\w.@+-]*\s*", rest[0]))


def _gpu(name: str | None, capability: str | None) -> JSONObject | None:
    """The current device torch names: one GPU, with no count (xformers names only the one in use)."""
    if not name:
        return None
    gpu: JSONObject = {"index": 0, "name": name}
    if capability:
        gpu["compute_capability"] = capability
    return {"source": FORMAT.name, "gpus": {"GPU0": gpu}}


def parse(text: str) -> Parsed:
    """xformers' and torch's versions, CUDA availability and the current GPU; the rest as raw fields."""
    paste = Paste.of(text)
    found = _features(paste.lines)
    if found is None:
        raise ValueError("no `xFormers <version>` line")
    start, version, rows = found
    paste.claim(start)
    values: dict[str, str] = {}
    cut = _cut(paste, rows, rows[-1][0] + 1 if rows else start + 1)
    for position, (i, name, value) in enumerate(rows):
        paste.claim(i, *([] if _FEATURE.match(paste.lines[i]) else [i - 1]))  # a joined value: its name too
        if value is None and cut and position == len(rows) - 1:
            continue  # the value never came: nothing to keep
        values[name] = value or ""
    for i, line in enumerate(paste.lines):
        if i not in paste.claimed and _PROMPT.match(line):
            paste.claim(i)
            paste.noise.append(i)
    torch_version = facts.known(values.pop("pytorch.version", None))
    cuda = values.pop("pytorch.cuda", None)
    cuda_available = {"available": True, "not available": False}.get(cuda or "")
    gpu = _gpu(facts.known(values.pop("gpu.name", None)), facts.known(values.pop("gpu.compute_capability", None)))
    packages = [("xformers", version)] + ([("torch", torch_version)] if torch_version else [])
    probes: dict[str, JSONObject | None] = {
        "packages": facts.packages_data(packages, None),
        "torch": facts.torch_data(torch_version, cuda=facts.torch_version_cuda(torch_version),
                                  cuda_available=cuda_available),
        "gpu": gpu,
    }
    return Parsed(probes={name: data for name, data in probes.items() if data}, variant="xformers.info",
                  fields={f"xformers {name}": value for name, value in values.items()},
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines(), cut=[FIELDS] if cut else [])


FORMAT = Format("xformers-info", "python -m xformers.info", "xformers", detect, parse, starts,
                start_hint=r"\s*xFormers \d")
