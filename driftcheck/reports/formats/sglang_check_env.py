"""SGLang's `python3 -m sglang.check_env`.

`Key: value` lines: Python, `CUDA available` (or ROCm/MUSA), `GPU 0,1,...: <model>` (one line per model,
indexes listed), `GPU ... Compute Capability`, CUDA_HOME/NVCC, `CUDA Driver Version` (nvidia-smi's answer,
one line per GPU, so the version repeats on bare lines), `PyTorch`, then one `<package>: <version>` line
per package it checks (`Module Not Found` when absent), the `nvidia-smi topo -m` block after
`NVIDIA Topology:`, `Hypervisor vendor` and `ulimit soft`.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats import collect_env_scan as collect_env
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.snapshot.jsontypes import JSONObject

_PYTHON = re.compile(r"^\s*Python: \d", re.MULTILINE)
_MARKS = re.compile(r"^\s*(sglang|sgl_kernel|CUDA available|ROCM available|PyTorch): ", re.MULTILINE)
_GPU_GROUP = re.compile(r"^GPU ([\d,]+)$")
_PACKAGE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_NOT_PACKAGES = {"Python", "PyTorch", "CUDA_HOME", "ROCM_HOME", "MUSA_HOME", "NVCC", "HIPCC", "MCC",
                 "CUDA Driver Version", "ROCM Driver Version", "MUSA Driver Version"}
_MISSING = "module not found"
_DRIVER_KEYS = ("CUDA Driver Version", "ROCM Driver Version", "MUSA Driver Version")


def detect(text: str) -> bool:
    """Whether `text` holds check_env's `Python: 3.x` line and its sglang/PyTorch/CUDA lines."""
    text = text.replace("\r", "")
    return bool(_PYTHON.search(text)) and len(set(m.group(1) for m in _MARKS.finditer(text))) >= 2


def _gpus(fields: dict[str, str]) -> tuple[list[str], bool]:
    """GPU model names in index order from `GPU 0,1: <model>` lines; whether every index was named."""
    by_index: dict[int, str] = {}
    for key, value in fields.items():
        group = _GPU_GROUP.match(key)
        if group and value:
            for index in group.group(1).split(","):
                if index.strip().isdigit():
                    by_index[int(index)] = value
    names = [by_index[i] for i in sorted(by_index)]
    return names, sorted(by_index) == list(range(len(by_index)))


def _packages(fields: dict[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(listed packages with a version, names reported as not installed)."""
    found: list[tuple[str, str]] = []
    missing: list[str] = []
    for key, value in fields.items():
        if key in _NOT_PACKAGES or not _PACKAGE.match(key):
            continue
        if value.strip().lower() == _MISSING:
            missing.append(key)
        elif re.match(r"^\d", value.strip()):
            found.append((key, value.strip()))
    torch = facts.known(fields.get("PyTorch"))
    if torch and not any(facts.package_key(name) == "torch" for name, _ in found):
        found.insert(0, ("torch", torch))
    return found, missing


def _claim_driver_repeats(scan: collect_env.Scan, driver: str | None) -> None:
    """nvidia-smi prints the driver once per GPU: the bare repeats belong to the driver line."""
    if not driver:
        return
    for i, line in enumerate(scan.paste.lines):
        if line.strip() == driver:
            scan.paste.claim(i)


def starts(lines: list[str], i: int) -> bool:
    """check_env's first line, `Python: 3.x`."""
    return bool(re.match(r"^Python: \d", lines[i]))


def parse(text: str) -> Parsed:
    """python, packages, torch, gpu, pcie and system facts of a check_env output."""
    scan = collect_env.scan(text)
    f = scan.fields
    driver_key = next((k for k in _DRIVER_KEYS if k in f), None)
    driver = facts.known(f.get(driver_key)) if driver_key else None
    _claim_driver_repeats(scan, driver)
    names, enumerated = _gpus(f)
    pip, missing = _packages(f)
    version = facts.known(f.get("PyTorch"))
    available = next((facts.truth(f[k]) for k in ("CUDA available", "ROCM available", "MUSA available") if k in f),
                     None)
    probes: dict[str, JSONObject | None] = {
        "python": facts.python_data(f.get("Python"), None),
        "packages": facts.packages_data(pip, None) if pip else None,
        "torch": facts.torch_data(version, cuda=facts.torch_version_cuda(version), cuda_available=available,
                                  device_count=len(names) if names and enumerated else None),
        "gpu": facts.gpu_data(names, driver if driver_key == "CUDA Driver Version" else None, FORMAT.name,
                              count_known=enumerated),
        "pcie": facts.pcie_data(scan.topology, FORMAT.name),
        "kernels": facts.cuda_toolkit_data(f.get("NVCC")),
    }
    kept = {name: data for name, data in probes.items() if data}
    package_keys = {name for name, _ in pip} | set(missing)
    mapped = (*package_keys, "Python", "PyTorch", "CUDA available", *(k for k in f if _GPU_GROUP.match(k)),
              *([driver_key] if driver_key == "CUDA Driver Version" else []),
              *(["NVCC"] if "kernels" in kept else []))
    result = collect_env.parsed(scan, kept, "check_env", tuple(mapped))
    if missing:
        result.fields["not installed"] = ", ".join(missing)
    return result


FORMAT = Format("sglang-check-env", "python3 -m sglang.check_env", "sglang", detect, parse, starts,
                start_hint=r"Python: \d")
