"""TensorRT-LLM's `[TensorRT-LLM] TensorRT-LLM version: 0.12.0` line: the installed tensorrt_llm's version.

`import tensorrt_llm` prints that line first, so it opens every trtllm-build, convert_checkpoint and
benchmark log users paste (the scripts often print the bare version again on the next line). It becomes
the `tensorrt-llm` package in the `packages` shape, as a pip list would give it; the log around it stays
unclaimed. A terminal that lost a newline fuses the next line onto it (`0.8.0Traceback ...`): the version
ends where a version can (`0.8.0`), and digits running on past it (`0.8.00.8.0`) make it no version.
Lines naming two different versions are two environments: refused.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste

_PART = r"(?:0|[1-9]\d*)"
_LINE = re.compile(rf"^\s*\[TensorRT-LLM\] TensorRT-LLM version: (?P<version>{_PART}(?:\.{_PART})+"
                   r"(?:\.?(?:dev|rc|post|a|b)\d+)?)(?![\d.])")
_MARK = re.compile(r"\[TensorRT-LLM\] TensorRT-LLM version: ")
_BARE = re.compile(r"^\s*(?P<version>\d+(?:\.\d+)+(?:\.?(?:dev|rc|post|a|b)\d+)?)\s*$")


def detect(text: str) -> bool:
    """The `[TensorRT-LLM] TensorRT-LLM version:` line at the start of a line."""
    return bool(re.search(r"^[ \t]*\[TensorRT-LLM\] TensorRT-LLM version: ", text, re.MULTILINE))


def parse(text: str) -> Parsed:
    """The `packages` probe's tensorrt-llm entry of a pasted TensorRT-LLM log."""
    paste = Paste.of(text, anchors=("Traceback (most recent call last):",))
    versions: set[str] = set()
    fields: dict[str, str] = {}
    for i, line in enumerate(paste.lines):
        if i in paste.claimed:
            continue
        found = _LINE.match(line)
        bare = _BARE.match(line)
        if found:
            versions.add(found["version"])
        elif _MARK.search(line):
            fields["TensorRT-LLM version (unreadable)"] = line.split(": ", 1)[1]
        elif bare and bare["version"] in versions:  # the script printing tensorrt_llm.__version__ again
            pass
        else:
            continue
        paste.claim(i)
    if len(versions) > 1:
        raise ValueError(f"it names two TensorRT-LLM versions ({', '.join(sorted(versions))})")
    if not versions:
        raise ValueError("its version line holds no version")
    packages = facts.packages_data([("tensorrt_llm", versions.pop())], None)
    return Parsed(probes={"packages": packages}, variant="tensorrt-llm", fields=fields,
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines())


# No `starts`: the line opens a log, whose section began above it.
FORMAT = Format("tensorrt-llm", "TensorRT-LLM version line", "tensorrt_llm", detect, parse)
