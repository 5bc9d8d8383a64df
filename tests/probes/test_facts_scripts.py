"""The facts scripts run in the *target* interpreter: stdlib only, Python 3.8 and newer."""

from __future__ import annotations

import ast
import glob
import os
import shutil
import subprocess
import sys
from importlib import resources

import pytest

from driftcheck.hosts import LocalHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.kernels import KernelsProbe
from driftcheck.probes.packages import PackagesProbe
from driftcheck.probes.runner import run_one, run_probes
from driftcheck.probes.torch import TorchProbe
from driftcheck.store.hashcache import HashCache

SCRIPTS = ("dist_facts", "torch_facts", "python_facts", "facts_batch")


def _python38() -> str | None:
    """A working Python 3.8 (a version manager's shim may exist and still refuse to run)."""
    candidates = [*sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8"))),
                  shutil.which("python3.8")]
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 8)"],
                              capture_output=True, timeout=30, check=False)
        if done.returncode == 0:
            return candidate
    return None


@pytest.mark.parametrize("script", SCRIPTS)
def test_scripts_use_only_python_3_8_syntax_and_the_stdlib(script: str) -> None:
    source = resources.files("driftcheck.probes.scripts").joinpath(f"{script}.py").read_text("utf-8")
    tree = ast.parse(source, feature_version=(3, 8))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported - {"torch"} <= set(sys.stdlib_module_names)


def test_probes_run_in_a_python_3_8_interpreter(tmp_path) -> None:  # type: ignore[no-untyped-def]
    python = _python38()
    if python is None:
        pytest.skip("no Python 3.8 on this machine")
    host = LocalHost(python)
    packages = run_one(PackagesProbe(), host, ProbeOptions())
    assert packages.status == "ok", packages.error
    assert packages.data is not None and "pip" in packages.data["packages"]
    kernels = run_one(KernelsProbe(HashCache(tmp_path / "cache.db")), host, ProbeOptions())
    assert kernels.status == "ok", kernels.error
    torch = run_one(TorchProbe(), host, ProbeOptions(deep=True))
    assert torch.status in ("ok", "unavailable"), torch.error
    # The same probes answered by one run of that interpreter (facts_batch) read the same.
    together = run_probes(host, [PackagesProbe(), KernelsProbe(HashCache(tmp_path / "cache.db")), TorchProbe()])
    assert together["packages"].data == packages.data
    assert together["kernels"].status == "ok", together["kernels"].error
    assert together["torch"].status in ("ok", "unavailable"), together["torch"].error
