"""`nvcc --version` (or `nvcc -V`): the CUDA toolkit's version, into `kernels.cuda_toolkit`.

nvcc prints a banner (`nvcc: NVIDIA (R) Cuda compiler driver`), a copyright line, `Built on <date>`,
`Cuda compilation tools, release 12.5, V12.5.82` and, from CUDA 11.0 on, `Build cuda_12.5.r12.5/compiler.N_0`.
The release line is the fact: `version` is its `V` number (what PyTorch's collect_env calls the CUDA runtime
version), `release` the `major.minor` before it, and `build` the last line where the toolkit prints one (absent
before 11.0: not in the output, not unknown). The build date stays a raw field. A paste that ends before the
release line holds no version, and is refused rather than read as a toolkit without one. Lines after nvcc's own
(another tool's output in the same block) stay unclaimed.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_BANNER = re.compile(r"^\s*nvcc: NVIDIA \(R\) Cuda compiler driver\s*$")
_COPYRIGHT = re.compile(r"^\s*Copyright \(c\) \d{4}-\d{4} NVIDIA Corporation\s*$")
_BUILT = re.compile(r"^\s*Built on (?P<date>\S+)\s*$")
_RELEASE = re.compile(r"^\s*Cuda compilation tools, release (?P<release>\d+\.\d+), V(?P<version>\d+(?:\.\d+)+)\s*$")
_BUILD = re.compile(r"^\s*Build (?P<build>cuda_\S+)\s*$")
# The command itself, as users paste it above the output (`**$ nvcc --version**`, `nvcc --version:`).
_COMMAND = re.compile(r"^\W*(?:\S*/)?nvcc (?:--version|-V)\W*$")
_DETECT = re.compile(r"^[ \t]*(?:nvcc: NVIDIA \(R\) Cuda compiler driver"
                     r"|Cuda compilation tools, release \d+\.\d+, V\d)", re.MULTILINE)
TOOLKIT = "probes.kernels.data.cuda_toolkit"


def detect(text: str) -> bool:
    """nvcc's banner, or its `Cuda compilation tools, release X.Y, VX.Y.Z` line at the start of a line."""
    return bool(_DETECT.search(text))


def starts(lines: list[str], i: int) -> bool:
    """nvcc's banner line."""
    return bool(_BANNER.match(lines[i]))


def parse(text: str) -> Parsed:
    """The CUDA toolkit's version of a pasted `nvcc --version`."""
    paste = Paste.of(text)
    toolkit: JSONObject = {}
    fields: dict[str, str] = {}
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip() or "version" in toolkit and "build" in toolkit:
            continue
        built, release, build = _BUILT.match(line), _RELEASE.match(line), _BUILD.match(line)
        if _COMMAND.match(line):
            paste.noise.append(i)
        elif built:
            fields["Built on"] = built["date"]
        elif release and "version" not in toolkit:
            toolkit.update(version=release["version"], release=release["release"])
        elif build and "version" in toolkit:
            toolkit["build"] = build["build"]
        elif not (_BANNER.match(line) or _COPYRIGHT.match(line)):
            continue
        paste.claim(i)
    if "version" not in toolkit:
        raise ValueError("the paste ends before nvcc's `Cuda compilation tools, release` line")
    return Parsed(probes={"kernels": {"cuda_toolkit": toolkit}}, variant="nvcc", fields=fields,
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines())


FORMAT = Format("nvcc", "nvcc --version", "nvcc", detect, parse, starts,
                start_hint=r"\s*nvcc: NVIDIA")
