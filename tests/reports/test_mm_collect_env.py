"""OpenMMLab's collect_env (`lmdeploy check_env`, mmdeploy's check_env): real pastes (SOURCES.md, mmenv/).

Every expected value below was read off the file by hand. Each stored paste ends inside the build details,
so each is cut: what precedes the cut is read, the line it ends in is not.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.mm_collect_env import FIELDS, parse
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA, CliResult

MM = DATA / "reports" / "mmenv"

# file: (python, torch, cuDNN or None, GPU names in index order, nvcc release or None)
EXPECTED: dict[str, tuple[str, str, str | None, list[str], str | None]] = {
    "lmdeploy_check_env_654": ("3.8.18", "2.0.0+cu117", "8.5", ["NVIDIA A100-SXM4-80GB"], "11.4"),
    # `CuDNN 90.1` names no cuDNN release: not read.
    "lmdeploy_check_env_3996": ("3.9.23", "2.6.0+cu124", None, ["NVIDIA GeForce RTX 3090"] * 4, "11.0"),
    "lmdeploy_check_env_win_3825": ("3.12.11", "2.6.0+cu126", None, ["NVIDIA GeForce RTX 4060 Laptop GPU"], "12.8"),
    "lmdeploy_check_env_internvl_538": ("3.10.14", "2.3.1+cu121", "8.9.2", ["NVIDIA A100-SXM4-80GB"], "12.2"),
    # `NVCC: Build cuda_11.1...` is no release line: kept raw.
    "mmdeploy_check_env_root_17": ("3.7.10", "1.9.0+cu111", "8.0.5", ["Tesla P40"] * 4, None),
    "mmdeploy_check_env_mmengine_2469": ("3.9.17", "1.12.1+cu116", None, ["NVIDIA GeForce RTX 3080"] * 8, None),
}


def _read(name: str) -> str:
    return (MM / f"{name}.txt").read_text("utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_paste_is_claimed_and_reads_python_torch_gpus_and_nvcc(name: str) -> None:
    python, torch, cudnn, gpus, nvcc = EXPECTED[name]
    text = _read(name)
    # SGLang's check_env shares the `Python:` and `GPU 0,1:` lines: the `sys.platform` line above them is this one.
    assert (found := detect(text)) is not None and found.name == "mm-collect-env"
    parsed = parse(text)
    assert parsed.probes["python"]["version"] == python
    assert parsed.probes["torch"]["version"] == torch and parsed.probes["torch"]["cuda_available"] is True
    assert parsed.probes["torch"].get("cudnn_version") == cudnn
    assert parsed.probes["torch"]["device_count"] == len(gpus)
    assert [gpu["name"] for gpu in parsed.probes["gpu"]["gpus"].values()] == gpus
    assert parsed.probes["gpu"]["gpu_count"] == len(gpus) and parsed.complete == ["probes.gpu.data.gpus"]
    assert parsed.probes.get("kernels", {}).get("cuda_toolkit", {}).get("release") == nvcc
    assert parsed.probes["packages"]["packages"]["torch"]["version"] == torch
    assert parsed.cut == [FIELDS]


def test_a_paste_cut_mid_value_keeps_the_whole_lines_and_leaves_the_last_one_unread() -> None:
    parsed = parse(_read("lmdeploy_check_env_654"))
    assert parsed.unclaimed == ["  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Rele"]
    details = parsed.fields["PyTorch compiling details"].splitlines()
    assert details[0] == "PyTorch built with:" and details[-1] == "- Magma 2.6.1" and len(details) == 13
    assert parsed.fields["GCC"] == "gcc (GCC) 4.8.5 20150623 (Red Hat 4.8.5-44)"
    assert parsed.fields["sys.platform"] == "linux" and parsed.fields["CUDA_HOME"] == "/usr/local/cuda"
    host = import_texts([("654", "654", _read("lmdeploy_check_env_654"))]).document["host"]
    assert host["cut"] == [FIELDS] and host["sources"][0]["format"] == "lmdeploy check_env / OpenMMLab collect_env"


def test_a_logger_prefix_on_every_line_is_read_through() -> None:
    parsed = parse(_read("mmdeploy_check_env_root_17"))
    assert parsed.noise == [] and parsed.unclaimed == ["  - Magma 2.5"]
    assert parsed.fields["NVCC"] == "Build cuda_11.1.TC455_06.29069683_0"
    banner = parse(_read("mmdeploy_check_env_mmengine_2469")).noise
    assert banner == ["10/07 17:11:54 - mmengine - INFO - **********Environmental information**********"]


def test_windows_keeps_its_compiler_lines_raw() -> None:
    parsed = parse(_read("lmdeploy_check_env_win_3825"))
    assert parsed.fields["sys.platform"] == "win32" and parsed.fields["GCC"] == "n/a"
    assert parsed.fields["MSVC"] == "用于 x64 的 Microsoft (R) C/C++ 优化编译器 19.43.34810 版"
    assert parsed.probes["python"]["compiler"] == "MSC v.1929 64 bit (AMD64)"


def test_in_an_issue_body_the_dump_is_found_after_prose() -> None:
    body = "The engine crashes on start.\n\n" + _read("lmdeploy_check_env_3996") + "\nThanks\n"
    host = import_texts([("issue", "issue", body)]).document["host"]
    assert [source["format"] for source in host["sources"]] == ["lmdeploy check_env / OpenMMLab collect_env"]


def test_two_dumps_explain_the_torch_change_and_say_both_were_cut(cli: Callable[..., CliResult]) -> None:
    a, b = MM / "lmdeploy_check_env_654.txt", MM / "lmdeploy_check_env_internvl_538.txt"
    text = cli("explain", str(a), str(b)).stdout
    assert "2.0.0+cu117 -> 2.3.1+cu121" in text
    assert f"the paste ends inside {FIELDS}: cut there, not removed" in text
