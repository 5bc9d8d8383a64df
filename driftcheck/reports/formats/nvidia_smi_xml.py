"""`nvidia-smi -q -x`: the XML GPU description."""

from __future__ import annotations

from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.reports.formats.base import Format, Parsed, gpu_completeness


def detect(text: str) -> bool:
    """Whether `text` is nvidia-smi's XML log."""
    head = text.lstrip("\ufeff \t\r\n")
    return head.startswith(("<?xml", "<nvidia_smi_log")) or "<nvidia_smi_log>" in head[:4096]


def parse(text: str) -> Parsed:
    """The `gpu` and `pcie` probes of the XML."""
    probes = dict(parse_smi_xml(text))
    return Parsed(probes=probes, role="gpu", complete=gpu_completeness(probes, text.count("<processes")))


FORMAT = Format("nvidia-smi-xml", "nvidia-smi -q -x", "nvidia-smi", detect, parse)
