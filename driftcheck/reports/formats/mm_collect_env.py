"""OpenMMLab's `collect_env` dump: `lmdeploy check_env`, mmdeploy's `tools/check_env.py`, mmcv/mmengine's.

mmengine's collect_env (mmengine/utils/dl_utils/collect_env.py) prints `Key: value` lines in a fixed order:
`sys.platform`, `Python` (sys.version), `CUDA available`, `numpy_random_seed`, one `GPU <i,j,...>: <name>`
line per model (every device torch counts, grouped by name), `CUDA_HOME`, `NVCC` (nvcc's release line),
`GCC` or `MSVC`, `PyTorch`, `PyTorch compiling details` (torch.__config__.show(): indented `- ...` lines),
then `TorchVision`, `OpenCV`, `MMEngine`; lmdeploy and mmdeploy add their own packages after it. Pasted
from a log, every line carries a logger's prefix (`10/07 17:11:55 - mmengine - INFO - `, `INFO:root:`).

Python's, torch's and the GPUs' facts, nvcc's toolkit and the listed packages become facts; the compiler,
CUDA_HOME, `sys.platform` and the build details stay raw fields. A cuDNN of two digits before its first dot
(`CuDNN 90.1` under torch 2.6, `90.5.1`) names no cuDNN release: it stays in the raw details, unread.

The output always goes on after the build details: a paste that ends inside them (or before them) keeps
the lines it holds whole (the last one may stop mid-value: left unclaimed) and says it is cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

# A logger's prefix on each line of a pasted log: mmengine's MMLogger, the `logging` root logger, mmcv's.
_PREFIX = re.compile(r"^(?:\d\d/\d\d \d\d:\d\d:\d\d - \w+ - INFO - "
                     r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - \w+ - INFO - |INFO:root:)")
_KEY_LINE = re.compile(r"^(?P<key>[A-Za-z][\w. ]*?|GPU [\d,]+): ?(?P<value>.*?)\s*$")
_GPU_KEY = re.compile(r"^GPU (?P<indexes>\d+(?:,\d+)*)$")
_BANNER = re.compile(r"^\s*\*+Environmental information\*+\s*$|^.*\b(?:lmdeploy check_env|check_env\.py)\s*$")
_DETAILS = "PyTorch compiling details"
# A key that names a distribution's version: the key as printed → the distribution.
_PACKAGES = {"PyTorch": "torch", "TorchVision": "torchvision", "MMEngine": "mmengine", "MMCV": "mmcv",
             "LMDeploy": "lmdeploy", "MMDeploy": "mmdeploy", "transformers": "transformers", "gradio": "gradio",
             "fastapi": "fastapi", "pydantic": "pydantic", "triton": "triton"}
# The change path the paste ends inside: the raw fields (the build details and the package lines after them).
FIELDS = "host.report.fields"


def _unprefixed(line: str) -> str:
    return _PREFIX.sub("", line, count=1)


def detect(text: str) -> bool:
    """A `sys.platform:` line, then a `Python:` line (a logger's prefix allowed on each)."""
    lines = [_unprefixed(line).strip() for line in text.replace("\r", "").splitlines() if line.strip()]
    return any(line.startswith("sys.platform: ") and lines[i + 1].startswith("Python: ")
               for i, line in enumerate(lines[:-1]))


def starts(lines: list[str], i: int) -> bool:
    """The `sys.platform:` line, whose next line is `Python:`."""
    return _unprefixed(lines[i]).startswith("sys.platform: ") and i + 1 < len(lines) and \
        _unprefixed(lines[i + 1]).startswith("Python: ")


@dataclass
class _Entry:
    key: str
    value: str
    block: list[str] = field(default_factory=list)
    block_lines: list[int] = field(default_factory=list)


def _entries(paste: Paste) -> list[_Entry]:
    """The `Key: value` lines from `sys.platform` on, each with the indented lines that continue it."""
    entries: list[_Entry] = []
    for i, raw in enumerate(paste.lines):
        if i in paste.noise and _PREFIX.match(raw):
            # Paste cleaning sets a logger's line aside as noise: here the logger carries the report.
            paste.noise.remove(i)
            paste.claimed.discard(i)
        if i in paste.claimed or not raw.strip():
            continue
        line = _unprefixed(raw)
        if _BANNER.match(line):
            paste.claim(i)
            paste.noise.append(i)
            continue
        match = _KEY_LINE.match(line)
        if match and (entries or match["key"] == "sys.platform"):
            entries.append(_Entry(match["key"], match["value"]))
        elif entries and line.startswith((" ", "\t")):
            entries[-1].block.append(line.strip())
            entries[-1].block_lines.append(i)
        else:
            continue
        paste.claim(i)
    return entries


def _gpus(entries: list[_Entry]) -> dict[int, str]:
    """Each GPU's name by index, from the `GPU 0,1,2,3: NVIDIA GeForce RTX 3090` lines."""
    return {int(index): entry.value for entry in entries if (m := _GPU_KEY.match(entry.key))
            for index in m["indexes"].split(",")}


def _cut(entries: list[_Entry]) -> bool:
    """Whether the paste ends inside or before the build details: collect_env always prints lines after them."""
    keys = [entry.key for entry in entries]
    return _DETAILS not in keys or keys[-1] == _DETAILS


def parse(text: str) -> Parsed:
    """Python, torch (version, CUDA availability, cuDNN), the GPUs, nvcc and the package versions."""
    paste = Paste.of(text)
    entries = _entries(paste)
    if not entries:
        raise ValueError("no `sys.platform:` line")
    cut = _cut(entries)
    if cut and entries[-1].block:
        # The line the paste ends in may stop mid-value: it stays the user's text, never a read value.
        entries[-1].block.pop()
        paste.claimed.discard(entries[-1].block_lines.pop())
    values = {entry.key: entry.value for entry in entries}
    details = next((entry.block for entry in entries if entry.key == _DETAILS), [])
    torch_version = facts.known(values.get("PyTorch"))
    cudnn = next((facts.cudnn_from_text(line[len("- CuDNN "):]) for line in details
                  if re.match(r"- CuDNN \d\.", line)), None)
    gpus = _gpus(entries)
    # The GPU lines are all of them once a later line was printed (they come before CUDA_HOME).
    gpus_whole = bool(gpus) and not entries[-1].key.startswith("GPU ")
    torch = facts.torch_data(torch_version, cuda=facts.torch_version_cuda(torch_version), cudnn=cudnn,
                             cuda_available=facts.truth(values.get("CUDA available")),
                             device_count=len(gpus) if gpus_whole else None)
    packages = [(name, version) for key, name in _PACKAGES.items() if (version := facts.known(values.get(key)))]
    gpu_data = facts.gpu_data([gpus[i] for i in sorted(gpus)], None, FORMAT.name, count_known=gpus_whole) \
        if gpus and sorted(gpus) == list(range(len(gpus))) else None
    probes: dict[str, JSONObject | None] = {
        "python": facts.python_data(values.get("Python"), None),
        "torch": torch,
        "packages": facts.packages_data(packages, None) if packages else None,
        "gpu": gpu_data,
        "kernels": facts.cuda_toolkit_data(values.get("NVCC")),
    }
    read = {"Python", "CUDA available", "PyTorch", *_PACKAGES} | {e.key for e in entries if _GPU_KEY.match(e.key)}
    if probes["kernels"] is not None:
        read.add("NVCC")
    fields = {entry.key: "\n".join([entry.value, *entry.block]).strip() for entry in entries if entry.key not in read}
    return Parsed(probes={name: data for name, data in probes.items() if data}, variant="collect_env",
                  fields=fields, unclaimed=paste.unclaimed(), noise=paste.noise_lines(),
                  complete=["probes.gpu.data.gpus"] if gpu_data and gpus_whole else [],
                  cut=[FIELDS] if cut else [])


FORMAT = Format("mm-collect-env", "lmdeploy check_env / OpenMMLab collect_env", "openmmlab", detect, parse, starts,
                start_hint=r".*sys\.platform: ")
