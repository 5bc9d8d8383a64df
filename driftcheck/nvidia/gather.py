"""Gathering GPU facts from a host: NVML in-process on a local host, else nvidia-smi through the Host.

Both GPU probes share this. NVML runs only where the probe runs in-process on the machine itself (the
runner starts it in an isolated child, since initialisation can hang); over SSH or in a replay the
same facts come from `nvidia-smi -q -x` and `nvidia-smi topo -m`, run through the Host.
"""

from __future__ import annotations

import contextlib

from driftcheck.errors import ProbeUnavailable
from driftcheck.hosts import Host
from driftcheck.snapshot.jsontypes import JSONObject

SMI_XML_ARGV = ("nvidia-smi", "-q", "-x")
SMI_TOPO_ARGV = ("nvidia-smi", "topo", "-m")


class NvmlUnavailable(Exception):
    """pynvml is not importable, or NVML did not initialise (no driver, no GPU, no library)."""


def read_local_nvml() -> dict[str, JSONObject]:
    """Both shapes read through NVML on this machine; NvmlUnavailable saying why when NVML cannot start."""
    try:
        import pynvml
    except ImportError as exc:
        raise NvmlUnavailable(f"pynvml not importable ({exc})") from None
    # Imported here (it brings ctypes): the gpu and pcie probes import this module on every snapshot, and a
    # machine without a driver never reads NVML.
    from driftcheck.nvidia.nvml import read_nvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise NvmlUnavailable(f"NVML did not initialise: {exc}") from None
    try:
        return read_nvml(pynvml)
    except pynvml.NVMLError as exc:
        # A GPU that fell off the bus fails device enumeration; nvidia-smi then says what it can.
        raise NvmlUnavailable(f"NVML read failed: {exc}") from None
    finally:
        with contextlib.suppress(pynvml.NVMLError):
            pynvml.nvmlShutdown()


def _first_line(*texts: str) -> str:
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return ""


def run_smi(host: Host, argv: tuple[str, ...], why_not_nvml: str | None) -> str:
    """The stdout of an nvidia-smi command; ProbeUnavailable with the reason when there is no driver or GPU."""
    prefix = f"{why_not_nvml}; " if why_not_nvml else ""
    try:
        result = host.run(list(argv), timeout_s=30.0)
    except FileNotFoundError:
        raise ProbeUnavailable(f"{prefix}nvidia-smi not found: no NVIDIA driver on this host") from None
    if result.returncode != 0:
        message = _first_line(result.stdout, result.stderr) or f"exit code {result.returncode}"
        raise ProbeUnavailable(f"{prefix}{' '.join(argv)} failed (exit {result.returncode}): {message}")
    return result.stdout


def gather_nvidia(host: Host, with_topology: bool) -> JSONObject:
    """Raw GPU facts: {"nvml": shapes} in-process when NVML works, else {"xml": ..., "topo": ...} from nvidia-smi."""
    why_not_nvml = None
    if host.capabilities.in_process:
        try:
            return {"nvml": read_local_nvml()}
        except NvmlUnavailable as exc:
            why_not_nvml = str(exc)
    raw: JSONObject = {"xml": run_smi(host, SMI_XML_ARGV, why_not_nvml)}
    if with_topology:
        try:
            raw["topo"] = run_smi(host, SMI_TOPO_ARGV, None)
        except ProbeUnavailable as exc:
            raw["topo"], raw["topo_error"] = None, str(exc)
    return raw


def smi_text(raw: JSONObject, key: str) -> str:
    """The output of one nvidia-smi command in what `gather_nvidia` gathered (`xml`, `topo`); ValueError when
    it holds none."""
    text = raw.get(key)
    if not isinstance(text, str):
        raise ValueError(f"no nvidia-smi output ({key}) was gathered")
    return text
