"""AMD's `amd-smi` (`list`, `static`, `version`): the GPUs and driver into the GPU shape, the vendor named.

`amd-smi list` and `amd-smi static` print one block per GPU: `GPU: 0`, then `KEY: value` lines (list: `BDF`,
`UUID`) or sections (`ASIC:`, `BUS:`, `VBIOS:` or, from ROCm 7, `IFWI:` for the same `--vbios` answer,
`DRIVER:`, `BOARD:`, ...) holding them, indented. `amd-smi version` is one line of `Name: value` fields joined
by ` | `. Facts: each GPU under `GPU<n>` (as rocm-smi's, so the two merge) with its index, `MARKET_NAME` as its
name, its bus id in nvidia-smi's long form, its UUID and its VBIOS (IFWI) version; the driver's version when
it is one (an inbox driver reports the kernel's release, which stays raw). The rest, ROCm's and the tool's
versions among them, stays as raw fields. amd-smi prints no count and asks for GPUs by `-g`: the GPU list is
never claimed whole, and no GPU count is given.
"""

from __future__ import annotations

import re

from driftcheck.nvidia.values import normalize_bus_id
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_GPU = re.compile(r"^GPU: (?P<index>\d+)\s*$")
_SECTION = re.compile(r"^(?P<indent>\s+)(?P<name>[A-Z][A-Z0-9_]*):\s*$")
_ITEM = re.compile(r"^(?P<indent>\s+)(?P<key>[A-Z][A-Z0-9_]*):\s+(?P<value>\S.*?)\s*$")
_VERSION_LINE = re.compile(r"^\s*AMDSMI Tool: .*\|")
_COMMAND = re.compile(r"^\W*(?:\$\s*)?(?:sudo\s+)?amd-smi\b.*$|^[\d.]+ amd-smi\b.*$")
_VERSION = re.compile(r"^\d+(\.\d+)+$")
_DETECT = re.compile(r"^\s*AMDSMI Tool: .*\||^GPU: \d+[ \t]*\n\s+[A-Z][A-Z0-9_]*:", re.MULTILINE)
_BDF = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
# (section, key) -> the GPU field it is; the section is None for `amd-smi list`'s unsectioned keys.
_GPU_FIELDS = {("ASIC", "MARKET_NAME"): "name", ("BUS", "BDF"): "pci_bus_id", (None, "BDF"): "pci_bus_id",
               (None, "UUID"): "uuid", ("VBIOS", "VERSION"): "vbios_version", ("IFWI", "VERSION"): "vbios_version"}


def detect(text: str) -> bool:
    """`amd-smi version`'s line, or a `GPU: N` line followed by an indented `KEY:` line."""
    return bool(_DETECT.search(text.replace("\r", "")))


def starts(lines: list[str], i: int) -> bool:
    """The version line, or a first `GPU: N` line (not one after another GPU's indented lines)."""
    if _VERSION_LINE.match(lines[i]):
        return True
    if not _GPU.match(lines[i]):
        return False
    above = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
    return not above[:1].isspace()


def parse(text: str) -> Parsed:
    """The `gpu` probe (vendor, GPUs, driver) of a pasted amd-smi list, static or version output."""
    paste = Paste.of(text)
    gpus: dict[str, JSONObject] = {}
    fields: dict[str, str] = {}
    gpu: JSONObject = {"source": "amd-smi", "vendor": "AMD"}
    key: str | None = None
    section: tuple[int, str] | None = None  # indentation and name of the open section
    variant = "amd-smi list"
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        head, sect, item = _GPU.match(line), _SECTION.match(line), _ITEM.match(line)
        if _VERSION_LINE.match(line):
            variant = "amd-smi version"
            _read_versions(line, gpu, fields)
        elif head:
            key, section = f"GPU{head['index']}", None
            gpus.setdefault(key, {"index": int(head["index"])})
        elif key and sect:
            section = (len(sect["indent"]), sect["name"])
            variant = "amd-smi static"
        elif key and item:
            inside = section is not None and len(item["indent"]) > section[0]
            _read_item(gpus[key], gpu, key, section[1] if inside and section else None, item["key"],
                       item["value"], fields)
        elif _COMMAND.match(line):
            paste.noise.append(i)
        else:
            continue
        paste.claim(i)
    if gpus:
        gpu["gpus"] = gpus
    if len(gpu) == 2 and not fields:
        raise ValueError("it holds no GPU block and no version line")
    return Parsed(probes={"gpu": gpu}, variant=variant, fields=fields, unclaimed=paste.unclaimed(),
                  noise=paste.noise_lines())


def _read_item(entry: JSONObject, gpu: JSONObject, key: str, section: str | None, name: str, value: str,
               fields: dict[str, str]) -> None:
    """One `KEY: value` line of a GPU's block: a GPU field, the driver's version, or a raw field."""
    field = _GPU_FIELDS.get((section, name))
    known = value not in ("N/A", "<redacted>")
    if field == "pci_bus_id" and _BDF.match(value):
        entry[field] = normalize_bus_id(value)
    elif field in ("name", "uuid", "vbios_version") and known:
        entry[field] = value
    elif section == "DRIVER" and name == "VERSION" and _VERSION.match(value):
        gpu["driver_version"] = value
    else:
        fields[f"{key} {section + ' ' if section else ''}{name}"] = value


def _read_versions(line: str, gpu: JSONObject, fields: dict[str, str]) -> None:
    """`AMDSMI Tool: 25.3.0+ede62f2 | ... | amdgpu version: 6.10.5 | ...`: each part a raw field; amdgpu's a fact
    when it is a version."""
    for part in line.strip().split(" | "):
        name, _, value = part.partition(": ")
        if name == "amdgpu version" and _VERSION.match(value):
            gpu["driver_version"] = value
        else:
            fields[name.strip()] = value.strip()


FORMAT = Format("amd-smi", "amd-smi", "amd-smi", detect, parse, starts,
                start_hint=r"\s*AMDSMI Tool:|GPU: \d")
