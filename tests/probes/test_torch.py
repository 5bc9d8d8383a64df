"""The torch probe against the torch installed here (files only, then imported), and a venv without it."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.runner import run_one
from driftcheck.probes.torch import TorchProbe, cudnn_version_string, nccl_version_string, parse_config_show
from tests.conftest import DATA, CliResult
from tests.probes.conftest import WheelVenv
from tests.probes.facts_of import category_of


def _torch_version_py() -> dict:
    """torch/version.py read here without importing torch, to compare the probe against."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed in the test interpreter")
    path = Path(list(spec.submodule_search_locations)[0]) / "version.py"
    values = {}
    for node in ast.parse(path.read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and getattr(node, "value", None) is not None:
            values[target.id] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
    return values


def test_default_reads_files_and_does_not_import_torch() -> None:
    expected = _torch_version_py()
    outcome = run_one(TorchProbe(), LocalHost(sys.executable), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data is not None
    assert data["version"] == expected["__version__"] == metadata.version("torch")
    assert data["git_version"] == expected["git_version"] and len(data["git_version"]) == 40
    assert data["cuda_version"] == expected.get("cuda")
    assert data["deep"] is False
    assert data["cuda_available"] is None and data["backends"] is None and data["config"] is None
    # The CUDA wheels beside torch, as importlib.metadata (which the probe does not load) lists them.
    expected_wheels = {}
    for dist in metadata.distributions():
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if name.startswith("nvidia-") or name in ("triton", "pytorch-triton"):
            expected_wheels.setdefault(name, dist.version)
    assert data["cuda_wheels"] == expected_wheels


@pytest.mark.slow  # imports torch in a fresh interpreter
def test_deep_imports_torch_in_the_target_interpreter() -> None:
    expected = _torch_version_py()
    outcome = run_one(TorchProbe(), LocalHost(sys.executable), ProbeOptions(deep=True))
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data is not None
    assert data["deep"] is True
    assert data["version"] == expected["__version__"]
    assert isinstance(data["cuda_available"], bool)
    assert data["device_count"] == len(data["devices"])
    assert isinstance(data["backends"]["num_threads"], int) and data["backends"]["num_threads"] >= 1
    assert data["config"]["build_settings"]["TORCH_VERSION"] == expected["__version__"].split("+")[0]
    assert data["config"]["build_settings"]["COMMIT_SHA"] == expected["git_version"]


def test_an_interpreter_without_torch_is_unavailable(pristine_venv: WheelVenv) -> None:
    outcome = run_one(TorchProbe(), LocalHost(str(pristine_venv.python)), ProbeOptions(deep=True))
    assert outcome.status == "unavailable"
    assert "torch is not installed" in outcome.error["message"]


def test_config_show_of_a_real_build_parses_into_fields() -> None:
    config = parse_config_show((DATA / "torch" / "config_show_2.13.0+cpu.txt").read_text())
    assert config["C++ Version"] == "202002"
    assert config["CPU capability usage"] == "AVX512"
    settings = config["build_settings"]
    assert settings["TORCH_VERSION"] == "2.13.0"
    assert settings["USE_CUDA"] == "0" and settings["USE_NCCL"] == "OFF"
    assert settings["BLAS_INFO"] == "mkl"
    # A value holding spaces and dashes stays whole; the next setting starts at ", NAME=".
    assert settings["CXX_FLAGS"].startswith("-fvisibility-inlines-hidden")
    assert "LAPACK_INFO" not in settings["CXX_FLAGS"]
    assert "GCC 13.3" in config["features"] and "NNPACK is enabled" in config["features"]


def test_cudnn_and_nccl_versions_read_alike_from_torch_and_from_wheels() -> None:
    assert cudnn_version_string(90100) == cudnn_version_string("9.1.0.70") == "9.1.0"
    assert cudnn_version_string(8902) == "8.9.2"
    assert nccl_version_string((2, 21, 5)) == nccl_version_string(22105) == nccl_version_string("2.21.5") == "2.21.5"
    assert nccl_version_string(2708) == "2.7.8"
    assert cudnn_version_string(None) is None and nccl_version_string(None) is None


def test_categories() -> None:
    assert category_of(TorchProbe, "cudnn_version") == "cuda_version"
    assert category_of(TorchProbe, 'cuda_wheels["nvidia-nccl-cu12"]') == "cuda_version"
    assert category_of(TorchProbe, "version") == "package_version"
    assert category_of(TorchProbe, "devices.0.name") == "hardware_change"


def test_recorded_machine_without_torch_is_unavailable() -> None:
    outcome = run_one(TorchProbe(), ReplayHost(DATA / "hosts" / "cpu-venv-patched-markupsafe"),
                      ProbeOptions(deep=True))
    assert outcome.status == "unavailable"
    assert outcome.error["message"] == "torch is not installed for /opt/venvs/bench/bin/python"


def test_snapshot_deep_flag_reaches_the_torch_probe(tmp_path: Path, cli_process: Callable[..., CliResult]) -> None:
    _torch_version_py()
    out = tmp_path / "deep.json"
    done = cli_process("snapshot", "--probe", "torch", "--deep", "--no-sign", "-o", str(out))
    assert done.returncode == 0, done.stderr
    torch = json.loads(out.read_text())["probes"]["torch"]
    assert torch["status"] == "ok", torch["error"]
    assert torch["data"]["deep"] is True and isinstance(torch["data"]["backends"], dict)
