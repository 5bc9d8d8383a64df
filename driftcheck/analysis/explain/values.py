"""Facts rendered as people read them: on/off, none, lists, clock ranges, governors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from driftcheck.analysis.amounts import show_value
from driftcheck.snapshot.paths import PathPart


def show_locked_clocks(value: Any) -> str:
    """`locked_clocks` of a GPU: "1410-1410 MHz", with the memory range when it is locked too; "none"."""
    if not isinstance(value, dict):
        return show_value(value)
    parts = []
    for prefix, label in (("gpu", ""), ("memory", "memory ")):
        low, high = value.get(f"{prefix}_min_mhz"), value.get(f"{prefix}_max_mhz")
        if low is not None or high is not None:
            parts.append(f"{label}{show_value(low)}-{show_value(high)} MHz")
    return ", ".join(parts) if parts else "none"


def show_governors(value: Any) -> str:
    """`cpufreq.governors` ({governor: CPU count}): "performance on 224 CPUs"."""
    if not isinstance(value, dict):
        return show_value(value)
    if not value:
        return "none"
    return ", ".join(f"{name} on {show_value(count)} CPU{'' if count == 1 else 's'}"
                     for name, count in sorted(value.items()))


def show_at(parts: Sequence[PathPart], value: Any) -> str:
    """A value rendered for the fact it is at `parts` (locked clocks, governors), else `show_value`."""
    tail = [str(part) for part in parts]
    if tail[-1:] == ["locked_clocks"]:
        return show_locked_clocks(value)
    if tail[-2:] == ["cpufreq", "governors"]:
        return show_governors(value)
    return show_value(value)


# Words a field name spells in lower case that people write otherwise.
_WORDS = {"sm": "SM", "cuda": "CUDA", "cudnn": "cuDNN", "hip": "HIP", "nccl": "NCCL", "gpu": "GPU", "cpu": "CPU",
          "numa": "NUMA", "id": "ID", "mig": "MIG", "ecc": "ECC", "pcie": "PCIe", "os": "OS", "smt": "SMT",
          "thp": "THP", "epp": "EPP", "nvlink": "NVLink", "mtu": "MTU", "fw": "firmware", "ver": "version",
          "vbios": "VBIOS", "libc": "libc", "p2p": "peer-to-peer", "max": "maximum", "min": "minimum",
          "hugepages": "huge pages", "cpufreq": "CPU frequency", "iommu": "IOMMU"}
# Unit suffixes: the title states the unit beside the value.
_UNITS = ("mhz", "w", "c", "mib", "kib", "bytes", "s", "pct", "mbps", "cores")


def human_field(field: str) -> str:
    """A field path as words: `power.limit_w` -> "power limit", `version_id` -> "version ID"."""
    words: list[str] = []
    for part in field.split("."):
        tokens = [token for token in part.split("_") if token]
        if len(tokens) > 1 and tokens[-1].lower() in _UNITS:
            tokens = tokens[:-1]
        words.extend(_WORDS.get(token, token) for token in tokens)
    return " ".join(words)


def _stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def field_for(field: str, template: str) -> str:
    """`field` without the words the template already says around it: a title "GPU count {field}" shows
    "2 -> 1", not "GPU count GPU count 2 -> 1"."""
    said = {_stem(word) for word in re.findall(r"[A-Za-z0-9]+", re.sub(r"\{[^}]*\}", " ", template))}
    kept = []
    for word in field.split(" "):
        parts = re.findall(r"[A-Za-z0-9]+", word)
        if not parts or any(_stem(part) not in said for part in parts):
            kept.append(word)
    return " ".join(kept)
