"""NVIDIA tool outputs and NVML, read into the `gpu` and `pcie` data shapes of docs/data-shapes.md.

Pure parsers for `nvidia-smi -q -x`, `nvidia-smi -q`, `--query-gpu` CSV and `nvidia-smi topo -m` text, an NVML reader
that yields the same shapes, and Linux sysfs link facts. Which
format a pasted text is, is decided by the registry in `driftcheck.reports.formats`.
"""

from driftcheck.nvidia.nvml import read_nvml
from driftcheck.nvidia.smi_csv import parse_query_csv
from driftcheck.nvidia.smi_text import parse_smi_text
from driftcheck.nvidia.smi_xml import parse_smi_xml
from driftcheck.nvidia.topo import merge_topology, parse_topo
from driftcheck.nvidia.values import NvidiaFormatError

__all__ = ["NvidiaFormatError", "merge_topology", "parse_query_csv", "parse_smi_text", "parse_smi_xml", "parse_topo",
           "read_nvml"]
