"""The compilers a host builds kernels with (driftcheck.probes.toolchain): recorded nvcc outputs, and this machine's
own nvcc and gcc where it has them, checked against what each tool says another way."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from driftcheck.hosts import LocalHost
from driftcheck.probes.toolchain import gcc_version, nvcc_toolkit, read_toolchain, toolchain_facts
from driftcheck.reports.formats.nvcc_version import parse as parse_nvcc_report
from tests.conftest import DATA

NVCC = DATA / "reports" / "nvcc"


@pytest.mark.parametrize("name", sorted(p.name for p in NVCC.glob("*.txt")))
def test_nvcc_outputs_read_as_the_import_format_reads_them(name: str) -> None:
    text = (NVCC / name).read_text("utf-8")
    imported = parse_nvcc_report(text).probes["kernels"]["cuda_toolkit"]
    live = nvcc_toolkit(text)
    assert live is not None
    assert {k: live[k] for k in ("version", "release")} == {k: imported[k] for k in ("version", "release")}
    assert live["build"] == imported.get("build")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc here")
def test_this_machines_gcc_is_what_it_dumps() -> None:
    facts = toolchain_facts(read_toolchain(LocalHost()))
    dumped = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True, check=True).stdout.strip()
    assert facts["gcc_version"] == dumped


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc here")
def test_this_machines_nvcc_is_read_live() -> None:
    facts = toolchain_facts(read_toolchain(LocalHost()))
    out = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=True).stdout
    assert facts["cuda_toolkit"] == nvcc_toolkit(out) and facts["cuda_toolkit"] is not None
    assert facts["cuda_toolkit"]["release"] in out


def test_no_compiler_is_unknown() -> None:
    assert toolchain_facts({"nvcc": None, "gcc": None}) == {"cuda_toolkit": None, "gcc_version": None}
    assert gcc_version("clang version 17.0.6\n") is None
