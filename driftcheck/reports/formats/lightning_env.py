"""PyTorch Lightning's `collect_env_details.py`, which Lightning's bug template asks for.

The script prints four sections in order, `* CUDA:`, `* Lightning:`, `* Packages:`, `* System:`, each
holding `- key: value` lines one indent deeper (a tab, or spaces once pasted); a list value (CUDA's `GPU`,
System's `architecture`) is a bare `- key:` with one `- item` per element one indent deeper still, and
`GPU: None` when torch counts no device.

CUDA's GPU names and count, `available` and `version` (torch.version.cuda) → `gpu` and `torch`; the
Lightning and Packages sections' `name: version` lines → `packages` (torch's own version → `torch`);
System's `python` → `python`, its `release` (platform.release()) → the Linux kernel; the rest raw fields.

The sections come in a fixed order: a paste that ends before `* System:` ends inside the last section it
holds, whose list is then marked cut; its last line, which may stop mid-line, is left unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_SECTION = re.compile(r"^\* (?P<name>CUDA|Lightning|Packages|System):\s*$")
_ITEM = re.compile(r"^(?P<indent>\s+)- (?P<key>[^:]+?)(?::(?:\s+(?P<value>\S.*?))?)?\s*$")
# What each section's list is, as a change path: where a paste that ends inside it was cut.
_CUT_PATHS = {"CUDA": "probes.gpu.data.gpus", "Lightning": "probes.packages.data.packages",
              "Packages": "probes.packages.data.packages"}


@dataclass
class _Item:
    key: str
    value: str | None
    line: int
    elements: list[str] = field(default_factory=list)


def detect(text: str) -> bool:
    """The `* CUDA:` section, then the `* Lightning:` section."""
    sections = [m["name"] for line in text.replace("\r", "").splitlines() if (m := _SECTION.match(line.strip()))]
    return sections[:2] == ["CUDA", "Lightning"]


def starts(lines: list[str], i: int) -> bool:
    """The `* CUDA:` line, when its `- GPU:` line follows."""
    return lines[i].strip() == "* CUDA:" and i + 1 < len(lines) and lines[i + 1].strip().startswith("- GPU:")


def _sections(paste: Paste) -> dict[str, list[_Item]]:
    """Each section's items, a list item's elements gathered under it (by their deeper indent)."""
    sections: dict[str, list[_Item]] = {}
    current: list[_Item] | None = None
    indent = 0
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        section, item = _SECTION.match(line.strip()), _ITEM.match(line.expandtabs(8))
        if section:
            current = sections.setdefault(section["name"], [])
            indent = 0
        elif current is not None and item:
            depth = len(item["indent"])
            if current and indent and depth > indent and current[-1].value is None and item["value"] is None:
                current[-1].elements.append(item["key"])
            else:
                indent = indent or depth
                current.append(_Item(item["key"], item["value"], i))
        else:
            continue
        paste.claim(i)
    return sections


def parse(text: str) -> Parsed:
    """GPUs, torch, packages, Python and the kernel of one Lightning environment report."""
    paste = Paste.of(text)
    sections = _sections(paste)
    if "CUDA" not in sections:
        raise ValueError("no `* CUDA:` section")
    last = list(sections)[-1]
    cut = last != "System"
    if cut and sections[last]:
        # The line the paste ends in may stop mid-line: it stays the user's text, never a read value.
        paste.claimed.discard(sections[last].pop().line)
    cuda = {item.key: item for item in sections["CUDA"]}
    gpu_item = cuda.get("GPU")
    names = gpu_item.elements if gpu_item else []
    # The GPU list is whole once a later line was printed; `GPU: None` is torch counting no device.
    whole = gpu_item is not None and (len(sections["CUDA"]) > 1 or last != "CUDA")
    count = 0 if gpu_item is not None and gpu_item.value == "None" else len(names) if whole else None
    packages = [(item.key, item.value) for name in ("Lightning", "Packages") for item in sections.get(name, [])
                if item.value and item.value != "None"]
    torch_version = dict(packages).get("torch")
    system = {item.key: item for item in sections.get("System", [])}
    release = facts.known(system["release"].value) if "release" in system and \
        "OS" in system and system["OS"].value == "Linux" else None
    python_item = system.get("python")
    probes: dict[str, JSONObject | None] = {
        "torch": facts.torch_data(torch_version, cuda=facts.known(_value(cuda.get("version"))),
                                  cuda_available=facts.truth(_value(cuda.get("available"))), device_count=count),
        "packages": facts.packages_data(packages, None) if packages else None,
        "gpu": facts.gpu_data(names, None, FORMAT.name, count_known=whole) if names else None,
        "python": facts.python_data(python_item.value, None) if python_item else None,
        "system": facts.system_data(None, release, {}, {}) if release else None,
    }
    fields = {f"system {item.key}": item.value or ", ".join(item.elements) for item in system.values()
              if item.key not in ("python", "release")}
    return Parsed(probes={name: data for name, data in probes.items() if data}, variant="collect_env_details",
                  fields=fields, unclaimed=paste.unclaimed(), noise=paste.noise_lines(),
                  complete=["probes.gpu.data.gpus"] if names and whole else [],
                  cut=[_CUT_PATHS[last]] if cut else [])


def _value(item: _Item | None) -> str | None:
    return item.value if item else None


FORMAT = Format("lightning-env", "Lightning collect_env_details.py", "lightning", detect, parse, starts,
                start_hint=r"\s*\* CUDA:")
