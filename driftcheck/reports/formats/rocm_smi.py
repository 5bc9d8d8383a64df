"""AMD's `rocm-smi` (its default "Concise Info" table) into the GPU shape, the vendor named.

Every generation prints a banner (`ROCm System Management Interface`), a header row (`GPU  Temp  AvgPwr ...`,
ROCm 6: `Device  Node  IDs ...` with a second header row), one row per GPU starting with its index, and
closes with `End of ROCm SMI Log`. The rows give the GPUs' indexes and how many there are; names are not
in this table (a report beside it names them, and the two merge). Temperatures, power and clocks are
readings of the moment: kept as the raw row, never as facts. A table the paste cuts before its closing
rule gives its rows but no GPU count. Log prefixes a job runner puts on every line (`nid005113 out: `)
are removed first.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_BANNER = re.compile(r"ROCm System Management Interface")
_END = re.compile(r"End of ROCm SMI Log")
_HEADER = re.compile(r"^\s*(GPU|Device)\s+(Temp|Node)\b")
_RULE = re.compile(r"^\s*=+[^=]*=*\s*$")
_ROW = re.compile(r"^\s*(?P<index>\d+)\s+\S")
# A prefix a job runner writes before every line of the tool's output (`nid005113 out: `).
_PREFIX = re.compile(r"^(?P<prefix>\S+ (?:out|err): )=")
GPUS = "probes.gpu.data.gpus"


def detect(text: str) -> bool:
    """rocm-smi's banner or closing line."""
    return bool(_BANNER.search(text) or _END.search(text))


def starts(lines: list[str], i: int) -> bool:
    """The banner's first line."""
    return bool(_BANNER.search(lines[i])) and not (i > 0 and _BANNER.search(lines[i - 1]))


def _strip_prefix(text: str) -> str:
    lines = text.replace("\r\n", "\n").split("\n")
    found = next((m["prefix"] for line in lines if (m := _PREFIX.match(line)) and _BANNER.search(line)), None)
    if not found:
        return text
    return "\n".join(line[len(found):] if line.startswith(found) else line for line in lines)


def parse(text: str) -> Parsed:
    """The `gpu` probe (vendor, GPU indexes and count) of a pasted rocm-smi concise table."""
    paste = Paste.of(_strip_prefix(text))
    rows: dict[int, str] = {}
    header: str | None = None
    state = "before"  # before the header, in the header (ROCm 6: two rows and a rule), in the rows, after
    closed = False
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        row = _ROW.match(line)
        if _BANNER.search(line) or _END.search(line):
            closed = closed or bool(_END.search(line))
        elif state == "before" and _HEADER.match(line):
            header, state = line.strip(), "header"
        elif state == "header" and (line.lstrip().startswith("(") or _RULE.match(line)):
            pass
        elif state in ("header", "rows") and row:
            rows[int(row["index"])] = " ".join(line.split())
            state = "rows"
        elif _RULE.match(line):
            state = "after" if state == "rows" else state
        else:
            continue
        paste.claim(i)
    if header is None or not rows:
        raise ValueError("a rocm-smi output without its Concise Info table")
    # The GPU rows are all there only when the table's closing rule and the log's last line follow them.
    whole = closed and state == "after"
    gpu: JSONObject = {"source": "rocm-smi", "vendor": "AMD",
                           "gpus": {f"GPU{index}": {"index": index} for index in sorted(rows)}}
    if whole:
        gpu["gpu_count"] = len(rows)
    fields = {"concise header": " ".join(header.split()),
              **{f"GPU{index} concise": row for index, row in sorted(rows.items())}}
    return Parsed(probes={"gpu": gpu}, variant="rocm-smi", fields=fields, unclaimed=paste.unclaimed(),
                  noise=paste.noise_lines(), complete=[GPUS] if whole else [], cut=[] if whole else [GPUS])


FORMAT = Format("rocm-smi", "rocm-smi", "rocm-smi", detect, parse, starts,
                start_hint=r".*ROCm System Management Interface")
