"""The env probe's performance groups, and that they never double-count a change."""

from __future__ import annotations

from driftcheck.hosts import ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.env import EnvProbe, performance_groups
from driftcheck.probes.redact import REDACTED_PATTERN, Redactor
from driftcheck.probes.runner import run_one
from tests.conftest import DATA
from tests.probes.facts_of import category_of, is_reading


def test_groups_cover_the_performance_families() -> None:
    names = ["CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "TORCH_CUDA_ARCH_LIST", "OMP_NUM_THREADS",
             "MKL_NUM_THREADS", "SGLANG_TORCH_PROFILER_DIR", "VLLM_ATTENTION_BACKEND", "FLASHINFER_WORKSPACE_BASE",
             "TRITON_CACHE_DIR", "NVIDIA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "LD_LIBRARY_PATH", "LD_PRELOAD",
             "HOME", "LD_BIND_NOW", "CUDAHOSTCXX"]
    assert performance_groups(names) == {
        "cuda": ["CUDA_VISIBLE_DEVICES"], "torch": ["PYTORCH_CUDA_ALLOC_CONF", "TORCH_CUDA_ARCH_LIST"],
        "omp": ["OMP_NUM_THREADS"], "mkl": ["MKL_NUM_THREADS"], "sglang": ["SGLANG_TORCH_PROFILER_DIR"],
        "vllm": ["VLLM_ATTENTION_BACKEND"], "flashinfer": ["FLASHINFER_WORKSPACE_BASE"],
        "triton": ["TRITON_CACHE_DIR"], "nvidia": ["NVIDIA_VISIBLE_DEVICES"], "nccl": ["NCCL_P2P_DISABLE"],
        "loader": ["LD_LIBRARY_PATH", "LD_PRELOAD"]}


def test_recorded_environment_with_groups() -> None:
    outcome = run_one(EnvProbe(Redactor(b"k")), ReplayHost(DATA / "hosts" / "debian12-vm-docker-nccl-p2p-disable"),
                      ProbeOptions())
    data = outcome.data or {}
    assert data["vars"]["NCCL_P2P_DISABLE"] == "1"
    assert data["groups"] == {"nccl": ["NCCL_P2P_DISABLE"], "omp": ["OMP_NUM_THREADS"]}


def test_groups_list_names_and_values_stay_redacted() -> None:
    probe = EnvProbe(Redactor(b"k"))
    data = probe.parse(probe.redactor.environ({"TORCH_HUB_TOKEN": "abc", "OMP_NUM_THREADS": "4"}))
    assert data["groups"] == {"omp": ["OMP_NUM_THREADS"], "torch": ["TORCH_HUB_TOKEN"]}
    assert REDACTED_PATTERN.fullmatch(data["vars"]["TORCH_HUB_TOKEN"])


def test_categories_and_volatility() -> None:
    assert category_of(EnvProbe, "vars.NCCL_P2P_DISABLE") == "nccl_env"
    assert category_of(EnvProbe, "vars.OMP_NUM_THREADS") == "env_var_other"
    assert is_reading(EnvProbe, "groups.nccl")
    assert not is_reading(EnvProbe, "vars.OMP_NUM_THREADS")
