"""The text formats `driftcheck import` reads, as a registry: one module per format, listed here.

Order matters: a report that embeds another format comes first (vLLM's report holds PyTorch's lines;
OpenMMLab's collect_env holds SGLang's `Python:` and `GPU 0,1:` lines after its own `sys.platform:`;
SGLang's and vLLM's hold a topology matrix, TGI's `--env` an nvidia-smi table), so the most specific
format claims the text. A new format is a new module with a `FORMAT` entry, added to `FORMATS`.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats import (
    amd_smi,
    conda_packages,
    ds_report,
    hf_env,
    ibstat,
    ibv_devinfo,
    lightning_env,
    lspci_link,
    mm_collect_env,
    numactl_hardware,
    nvcc_version,
    nvidia_smi_csv,
    nvidia_smi_table,
    nvidia_smi_text,
    nvidia_smi_topo,
    nvidia_smi_xml,
    pip_packages,
    pytorch_collect_env,
    rocm_smi,
    sglang_check_env,
    tensorrt_llm_version,
    tgi_env,
    triton_server,
    vllm_collect_env,
    xformers_info,
)
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste, blank_runs_capped

FORMATS: tuple[Format, ...] = (
    vllm_collect_env.FORMAT,
    mm_collect_env.FORMAT,
    sglang_check_env.FORMAT,
    tgi_env.FORMAT,
    pytorch_collect_env.FORMAT,
    nvidia_smi_xml.FORMAT,
    nvidia_smi_text.FORMAT,
    nvidia_smi_table.FORMAT,
    nvidia_smi_topo.FORMAT,
    nvidia_smi_csv.FORMAT,
    hf_env.FORMAT,
    ds_report.FORMAT,
    xformers_info.FORMAT,
    lightning_env.FORMAT,
    conda_packages.FORMAT,
    numactl_hardware.FORMAT,
    ibstat.FORMAT,
    ibv_devinfo.FORMAT,
    rocm_smi.FORMAT,
    amd_smi.FORMAT,
    nvcc_version.FORMAT,
    lspci_link.FORMAT,
    triton_server.FORMAT,
    tensorrt_llm_version.FORMAT,
    pip_packages.FORMAT,
)


def detect(text: str) -> Format | None:
    """The first format in `FORMATS` that claims `text` as pasted, or once a paste's line noise is removed
    (CR line ends, a log shipper's prefix on every line); None when none does."""
    text = blank_runs_capped(text)
    found = next((fmt for fmt in FORMATS if fmt.detect(text)), None)
    if found is None and Paste.changes(text):
        cleaned = "\n".join(Paste.of(text).lines)
        found = next((fmt for fmt in FORMATS if fmt.detect(cleaned)), None)
    return found


_STARTERS = tuple(fmt for fmt in FORMATS if fmt.starts is not None)
# One pattern for a line where some format's output may begin: the union of their `start_hint`s.
_HINT = re.compile("|".join(f"(?:{fmt.start_hint})" for fmt in _STARTERS if fmt.start_hint))
_UNHINTED = tuple(fmt for fmt in _STARTERS if not fmt.start_hint)


def starts(lines: list[str], i: int) -> bool:
    """Whether some format's output begins at line i of an issue body (where the body is cut into sections)."""
    if any(fmt.starts(lines, i) for fmt in _UNHINTED if fmt.starts is not None):
        return True
    return bool(_HINT.match(lines[i])) and any(fmt.starts(lines, i) for fmt in _STARTERS
                                                 if fmt.start_hint and fmt.starts is not None)


def by_name(name: str) -> Format | None:
    """The format called `name`, or None."""
    return next((fmt for fmt in FORMATS if fmt.name == name), None)


__all__ = ["FORMATS", "Format", "Parsed", "by_name", "detect", "starts"]
