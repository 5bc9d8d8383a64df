"""DeepSpeed's `ds_report`: the op compatibility table and the environment block after it.

The op table lists each C++/CUDA op as `name ....... [NO] ....... [OKAY]` (installed, compatible); the
block `DeepSpeed general environment info:` gives torch's version and its CUDA or HIP, DeepSpeed's own
version (`deepspeed info ... 0.15.5+46d7d0d1, <git hash>, <branch>`), nvcc's version and what the wheel
was compiled with, all as `key ........ value`. torch and DeepSpeed's versions become facts; the ops, nvcc
and the rest stay raw fields (no probe holds them). Users often paste only one of the two parts.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste

_INFO = re.compile(r"^\s*(?P<key>[a-z][\w ./()-]*?) \.{2,}\s*(?P<value>.*?)\s*$")
_OP = re.compile(r"^\s*(?P<op>\w+)\s+\.*\s*\[(?P<installed>[A-Z]+)\](?:\s*\.+\s*\[(?P<compatible>[A-Z]+)\])?\s*$")
_BANNERS = re.compile(r"^\s*(-{10,}|DeepSpeed C\+\+/CUDA extension op report|DeepSpeed general environment info:"
                      r"|op name \.+ installed \.+ compatible|JIT compiled ops requires ninja|NOTE: Ops not installed.*"
                      r"|runtime if needed\..*|meet the required dependencies.*)\s*$")
_MARKS = ("DeepSpeed general environment info:", "DeepSpeed C++/CUDA extension op report")


def detect(text: str) -> bool:
    """ds_report's banners, or its `torch version ....` and `deepspeed info ....` lines."""
    if any(mark in text for mark in _MARKS):
        return True
    keys = {m["key"] for line in text.replace("\r", "").splitlines() if (m := _INFO.match(line))}
    return {"torch version", "deepspeed info"} <= keys


def starts(lines: list[str], i: int) -> bool:
    """The rule above the op report's banner, or the environment banner when pasted alone."""
    line = lines[i].strip()
    if line.startswith("-----") and i + 1 < len(lines):
        return lines[i + 1].strip() == "DeepSpeed C++/CUDA extension op report"
    return line == "DeepSpeed general environment info:" and not (i > 0 and lines[i - 1].strip().startswith("---"))


def parse(text: str) -> Parsed:
    """torch (version, CUDA or HIP) and DeepSpeed's version; the ops and the rest as raw fields."""
    paste = Paste.of(text)
    info: dict[str, str] = {}
    fields: dict[str, str] = {}
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        op, item = _OP.match(line), _INFO.match(line)
        if _BANNERS.match(line):
            pass
        elif op:
            if op["compatible"]:
                fields[f"op {op['op']}"] = f"installed [{op['installed']}], compatible [{op['compatible']}]"
            else:  # `ninja .... [OKAY]`: a tool the JIT build needs, found or not
                fields[op["op"]] = f"[{op['installed']}]"
        elif item:
            info[item["key"]] = item["value"]
        else:
            continue
        paste.claim(i)
    version = facts.known(info.get("torch version"))
    deepspeed = (info.get("deepspeed info") or "").split(",")[0].strip()
    packages = [(name, v) for name, v in (("torch", version), ("deepspeed", deepspeed)) if v]
    probes = {
        "torch": facts.torch_data(version, cuda=facts.known(info.get("torch cuda version")),
                                  hip=facts.known(info.get("torch hip version"))),
        "packages": facts.packages_data(packages, None) if packages else None,
    }
    mapped = ("torch version", "torch cuda version", "torch hip version")
    fields.update({key: value for key, value in info.items() if key not in mapped})
    return Parsed(probes={name: data for name, data in probes.items() if data}, variant="ds_report", fields=fields,
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines())


FORMAT = Format("ds-report", "ds_report", "deepspeed", detect, parse, starts,
                start_hint=r"\s*(?:-----|DeepSpeed general environment info:)")
