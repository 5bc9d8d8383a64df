"""Telling which NVIDIA tool output a text is, and parsing it: for `driftcheck import` and the probes."""

from __future__ import annotations

import re
from typing import Any

from driftcheck.nvidia.smi_csv import parse_query_csv
from driftcheck.nvidia.smi_text import parse_smi_text
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.nvidia.topo import parse_topo
from driftcheck.nvidia.values import NvidiaFormatError

SMI_XML, SMI_TEXT, SMI_CSV, TOPO = "nvidia-smi-xml", "nvidia-smi-text", "nvidia-smi-csv", "nvidia-smi-topo"
FORMAT_NAMES = {SMI_XML: "nvidia-smi -q -x", SMI_TEXT: "nvidia-smi -q", SMI_CSV: "nvidia-smi --query-gpu --format=csv",
                TOPO: "nvidia-smi topo -m"}

_SMI_TEXT_MARK = re.compile(r"^(=+NVSMI LOG=+|Driver Version\s+:.*)$", re.MULTILINE)
_TOPO_ROW = re.compile(r"^\S*GPU0\s+X\s", re.MULTILINE)
_TOPO_LEGEND = re.compile(r"^\s*X\s+=\s+Self\s*$", re.MULTILINE)
_CSV_HEADER = re.compile(r"^\s*[a-z][\w.]*(\s*\[[^\]]*\])?(\s*,\s*[A-Za-z][\w.]*(\s*\[[^\]]*\])?)+\s*$")
_CSV_KNOWN = ("name", "uuid", "index", "pci.bus_id", "driver_version", "power.draw", "memory.used", "pstate")


def detect_format(text: str) -> str | None:
    """SMI_XML, SMI_TEXT, SMI_CSV or TOPO for the output in `text`; None when it is none of them."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("<?xml") or head.startswith("<nvidia_smi_log") or "<nvidia_smi_log>" in head[:4096]:
        return SMI_XML
    if _SMI_TEXT_MARK.search(text):
        return SMI_TEXT
    if _TOPO_LEGEND.search(text) or _TOPO_ROW.search(text):
        return TOPO
    first = head.split("\n", 1)[0]
    if _CSV_HEADER.match(first) and any(f.split("[")[0].strip() in _CSV_KNOWN for f in first.split(",")):
        return SMI_CSV
    return None


def parse_output(text: str, kind: str) -> dict[str, Any]:
    """The parsed form of an output of `kind`: {"gpu", "pcie"} for nvidia-smi -q/-q -x/CSV, the topology for topo."""
    if kind == SMI_XML:
        return parse_smi_xml(text)
    if kind == SMI_TEXT:
        return parse_smi_text(text)
    if kind == SMI_CSV:
        return parse_query_csv(text)
    if kind == TOPO:
        return parse_topo(text)
    raise NvidiaFormatError(f"unknown output kind {kind!r}")


def merge_topology(pcie: dict[str, Any], topology: dict[str, Any]) -> dict[str, Any]:
    """`pcie` with the topo matrix added, and each GPU's CPU affinity and NUMA node taken from its row."""
    merged = {**pcie, "topology": topology, "gpus": {key: dict(entry) for key, entry in pcie["gpus"].items()}}
    for entry in merged["gpus"].values():
        label = f"GPU{entry['index']}"
        affinity = (topology.get("cpu_affinity") or {}).get(label)
        numa = (topology.get("numa_affinity") or {}).get(label)
        if affinity is not None:
            entry["cpu_affinity"] = affinity
        if numa is not None and numa.isdigit():
            entry["numa_node"] = int(numa)
    return merged
