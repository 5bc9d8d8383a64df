"""Text Generation Inference's `text-generation-launcher --env`, which TGI's issue template asks for.

launcher/src/env_runtime.rs prints `Runtime environment:` (through the launcher's logger, so a timestamp
and `INFO text_generation_launcher:` precede it), then `Target:`, `Cargo version:`, `Commit sha:`,
`Docker label:`, then `nvidia-smi:` followed by nvidia-smi's whole output indented by three blanks (or
`N/A`), and in later releases `xpu-smi:` and `hpu-smi:` the same way.

The build lines stay raw fields (no probe holds a launcher's commit); the nvidia-smi output is read as
nvidia-smi's own table is, GPUs and driver, and what that table reads whole or cut is declared the same.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats import nvidia_smi_table
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste

_BANNER = re.compile(r"^(?:.*\btext_generation_launcher: )?Runtime environment:\s*$")
_KEY_LINE = re.compile(r"^(?P<key>Target|Cargo version|Commit sha|Docker label): ?(?P<value>.*?)\s*$")
_TOOL = re.compile(r"^(?P<tool>nvidia-smi|xpu-smi|hpu-smi):\s*$")
_PROMPT = re.compile(r"^.*\btext-generation-launcher --env\W*$")


def detect(text: str) -> bool:
    """`Runtime environment:` followed by the launcher's `Target:` and `Commit sha:` lines."""
    lines = [line.strip() for line in text.replace("\r", "").splitlines()]
    start = next((i for i, line in enumerate(lines) if _BANNER.match(line)), None)
    if start is None:
        return False
    keys = {m["key"] for line in lines[start + 1:start + 6] if (m := _KEY_LINE.match(line))}
    return {"Target", "Commit sha"} <= keys


def starts(lines: list[str], i: int) -> bool:
    """The `Runtime environment:` line, when the launcher's `Target:` line follows it."""
    return bool(_BANNER.match(lines[i].strip())) and i + 1 < len(lines) and lines[i + 1].startswith("Target: ")


def _tool_blocks(paste: Paste, start: int) -> dict[str, list[int]]:
    """The lines after each `nvidia-smi:` / `xpu-smi:` / `hpu-smi:` line, up to the next one or the end."""
    blocks: dict[str, list[int]] = {}
    current: list[int] | None = None
    for i in range(start, len(paste.lines)):
        match = _TOOL.match(paste.lines[i].strip())
        if match:
            paste.claim(i)
            current = blocks.setdefault(match["tool"], [])
        elif current is not None and i not in paste.noise:
            current.append(i)
    return blocks


def parse(text: str) -> Parsed:
    """The launcher's build lines as raw fields, and the GPUs of the nvidia-smi output it embeds."""
    paste = Paste.of(text)
    start = next((i for i, line in enumerate(paste.lines) if _BANNER.match(line.strip())), None)
    if start is None:
        raise ValueError("no `Runtime environment:` line")
    paste.claim(start)
    fields: dict[str, str] = {}
    for i, line in enumerate(paste.lines):
        match = _KEY_LINE.match(line.strip()) if i > start else None
        if match:
            fields[match["key"]] = match["value"]
            paste.claim(i)
        elif i not in paste.claimed and _PROMPT.match(line):
            paste.claim(i)
            paste.noise.append(i)
    parsed = Parsed(probes={}, role="report", variant="text-generation-launcher --env", fields=fields)
    for tool, indexes in _tool_blocks(paste, start + 1).items():
        block = "\n".join(paste.lines[i] for i in indexes)
        if tool == "nvidia-smi" and nvidia_smi_table.detect(block):
            table = nvidia_smi_table.parse(block)
            parsed.probes.update(table.probes)
            parsed.complete, parsed.cut = table.complete, table.cut
            parsed.unclaimed += table.unclaimed
            parsed.noise += table.noise
            paste.claim(*indexes)
        elif [paste.lines[i].strip() for i in indexes if paste.lines[i].strip()] == ["N/A"]:
            fields[tool] = "N/A"  # the tool is not installed there
            paste.claim(*indexes)
    parsed.unclaimed = paste.unclaimed() + parsed.unclaimed
    parsed.noise = paste.noise_lines() + parsed.noise
    return parsed


FORMAT = Format("tgi-env", "text-generation-launcher --env", "text-generation-inference", detect, parse, starts,
                start_hint=r".*Runtime environment:")
