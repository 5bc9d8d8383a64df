"""NVIDIA tool outputs and NVML, read into the `gpu` and `pcie` data shapes of docs/data-shapes.md.

Pure parsers for `nvidia-smi -q -x`, `nvidia-smi -q`, `--query-gpu` CSV and `nvidia-smi topo -m` text, an NVML reader
that yields the same shapes, and Linux sysfs link facts. Which
format a pasted text is, is decided by the registry in `driftcheck.reports.formats`.

The names below are imported on first use: every snapshot imports this package for `nvidia.driver` (is a driver
there at all?), and on a machine without one the parsers (an XML parser among them, ~5 ms) are never used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from driftcheck.nvidia.nvml import read_nvml
    from driftcheck.nvidia.smi_csv import parse_query_csv
    from driftcheck.nvidia.smi_text import parse_smi_text
    from driftcheck.nvidia.smi_xml import parse_smi_xml
    from driftcheck.nvidia.topo import merge_topology, parse_topo
    from driftcheck.nvidia.values import NvidiaFormatError

_LAZY = {"NvidiaFormatError": "values", "merge_topology": "topo", "parse_query_csv": "smi_csv",
         "parse_smi_text": "smi_text", "parse_smi_xml": "smi_xml", "parse_topo": "topo", "read_nvml": "nvml"}

__all__ = ["NvidiaFormatError", "merge_topology", "parse_query_csv", "parse_smi_text", "parse_smi_xml", "parse_topo",
           "read_nvml"]

if not TYPE_CHECKING:  # hidden from type checkers, which see the imports above

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'driftcheck.nvidia' has no attribute {name!r}")
        return getattr(importlib.import_module(f"driftcheck.nvidia.{module}"), name)
