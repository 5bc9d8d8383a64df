"""The compilers on a host that build the kernels a benchmark runs: the CUDA toolkit's nvcc and gcc.

Read live by running them (`nvcc --version`, `gcc --version`), so a remote host answers too. nvcc prints
`Cuda compilation tools, release 13.0, V13.0.88` and, from CUDA 11.0 on, `Build cuda_13.0.r13.0/compiler...`;
gcc's first line ends with its version (`gcc (Debian 12.2.0-14+deb12u1) 12.2.0`). A compiler that is not there,
or that fails, is unknown (null), not absent.
"""

from __future__ import annotations

import re

from driftcheck.errors import CommandTimeout, ConnectionLost
from driftcheck.hosts import Host
from driftcheck.snapshot.jsontypes import JSONObject

_RELEASE = re.compile(r"^\s*Cuda compilation tools, release (?P<release>\d+\.\d+), V(?P<version>\d+(?:\.\d+)+)\s*$",
                      re.MULTILINE)
_BUILD = re.compile(r"^\s*Build (?P<build>cuda_\S+)\s*$", re.MULTILINE)
_GCC_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)\s*$")


def _stdout(host: Host, argv: list[str]) -> str | None:
    try:
        result = host.run(argv, timeout_s=20.0)
    except (OSError, CommandTimeout, ConnectionLost):
        return None
    return result.stdout if result.returncode == 0 else None


def nvcc_toolkit(stdout: str) -> JSONObject | None:
    """`{version, release, build}` from nvcc's release and build lines (build null before CUDA 11.0)."""
    release = _RELEASE.search(stdout)
    if release is None:
        return None
    build = _BUILD.search(stdout)
    return {"version": release.group("version"), "release": release.group("release"),
            "build": build.group("build") if build else None}


def gcc_version(stdout: str) -> str | None:
    """The version that ends gcc's first line."""
    first = stdout.strip().splitlines()[0] if stdout.strip() else ""
    match = _GCC_VERSION.search(first)
    return match.group(1) if first.startswith("gcc") and match else None


def read_toolchain(host: Host) -> JSONObject:
    """The raw answers of nvcc (on PATH, else under $CUDA_HOME) and gcc, for `toolchain_facts`."""
    cuda_home = host.environ().get("CUDA_HOME")
    nvcc = _stdout(host, ["nvcc", "--version"])
    if nvcc is None and cuda_home:
        nvcc = _stdout(host, [f"{cuda_home.rstrip('/')}/bin/nvcc", "--version"])
    return {"nvcc": nvcc, "gcc": _stdout(host, ["gcc", "--version"])}


def toolchain_facts(raw: JSONObject) -> JSONObject:
    """`{cuda_toolkit, gcc_version}` of what `read_toolchain` gathered."""
    nvcc, gcc = raw.get("nvcc"), raw.get("gcc")
    return {"cuda_toolkit": nvcc_toolkit(nvcc) if isinstance(nvcc, str) else None,
            "gcc_version": gcc_version(gcc) if isinstance(gcc, str) else None}
