"""Triton Inference Server's startup table of options (`| Option | Value |`): its version and settings.

tritonserver logs, once it has started, a box of `| <option> | <value> |` rows: `server_id`, `server_version`,
`server_extensions`, `model_repository_path[0]`, `model_control_mode`, `strict_model_config`, `rate_limit`, the
memory pool sizes, `min_supported_compute_capability`, `strict_readiness`, `exit_timeout`, ... Its rows are
padded to the width of the longest value (hundreds of spaces), and a long value wraps onto rows with an empty
option. The version goes to `server.version` (engine `triton`), every other option to `server.server_args`
under Triton's own name; `server_id` and the extension list stay raw fields. A row the paste ends inside
(no closing `|`) may hold half a value: kept raw, never a fact; a table without its closing rule is cut.
glog prefixes (`I1104 07:09:32.738248 15 tritonserver.cc:2176]`) are log noise.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_ROW = re.compile(r"^\|\s*(?P<key>[^|]*?)\s*\|\s*(?P<value>[^|]*?)\s*(?P<end>\|)?\s*$")
_RULE = re.compile(r"^\+-+\+-+\+\s*$")
_GLOG = re.compile(r"^[IWE]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.]+:\d+\]")
_VERSION = re.compile(r"^\d+(\.\d+)+$")
_RAW = ("server_id", "server_extensions")
SERVER_ARGS = "probes.server.data.server_args"


def detect(text: str) -> bool:
    """A `| server_version | <version>` row of Triton's option table."""
    return bool(re.search(r"^\|\s*server_version\s*\|\s*\d", text.replace("\r", ""), re.MULTILINE))


def starts(lines: list[str], i: int) -> bool:
    """The table's first rule or row (not one following another of its lines)."""
    above = lines[i - 1].strip() if i > 0 else ""
    return bool(_RULE.match(lines[i]) or lines[i].startswith("| Option")) and not above.startswith(("|", "+"))


def _unpad(text: str) -> str:
    """Table rows without their padding (a few hundred spaces), which a paste's cleaning would read as a fused line."""
    return "\n".join(re.sub(r"(\S) {2,}\|", r"\1 |", line) if line.lstrip().startswith("|") else line
                     for line in text.replace("\r\n", "\n").split("\n"))


def parse(text: str) -> Parsed:
    """The `server` probe (engine, version, options) of a pasted Triton option table."""
    paste = Paste.of(_unpad(text))
    rows: list[tuple[str, str, bool]] = []  # option, value, whether the row was closed
    boxed = False  # whether a closing rule follows the rows
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        row = _ROW.match(line.strip())
        if _GLOG.match(line):
            paste.noise.append(i)
        elif _RULE.match(line.strip()):
            boxed = bool(rows)
        elif row and not row["key"] and rows:  # a long value wrapped onto the next row
            option, value, _ = rows[-1]
            rows[-1] = (option, f"{value} {row['value']}".strip(), bool(row["end"]))
            boxed = False
        elif row and row["key"] != "Option":
            rows.append((row["key"], row["value"], bool(row["end"])))
            boxed = False
        elif not row:
            continue
        paste.claim(i)
    server: JSONObject = {"engine": "triton"}
    args: dict[str, str] = {}
    fields: dict[str, str] = {}
    for option, value, closed in rows:
        if not closed:
            fields[f"{option} (cut)"] = value
        elif option == "server_version" and _VERSION.match(value):
            server["version"] = value
        elif option in _RAW or option == "server_version":
            fields[option] = value
        else:
            args[option] = value
    if "version" not in server:
        raise ValueError("its server_version row is cut or missing")
    if args:
        server["server_args"] = args
    # The options are all there only when the box's closing rule follows the last row.
    cut = [] if boxed else [SERVER_ARGS]
    return Parsed(probes={"server": server}, variant="tritonserver", fields=fields, unclaimed=paste.unclaimed(),
                  noise=paste.noise_lines(), cut=cut)


FORMAT = Format("triton-server", "tritonserver (option table)", "tritonserver", detect, parse, starts,
                start_hint=r"\+-|\| Option")
