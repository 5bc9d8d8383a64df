"""The incidents of the corpus: each a real, environment-caused performance regression from a public thread.

Read by build.py. For every incident: where it was reported, the symptom as reported, the fact that changed,
the cause `explain` must put first (a DESIGN.md category and the change paths, any one of which must be among
the first explanation's evidence), how B differs from A, and the harmless changes mixed in, as in real life.
`modeled` says what the pair states that the thread does not (a minor version, the GPU model).
"""

from __future__ import annotations

from build import (
    BASE_PACKAGES,
    GPU0,
    Incident,
    P,
    Side,
    acs,
    bench,
    env_paths,
    gpu_path,
    herring_env,
    herring_idle_temp,
    herring_pkg,
    pkg_path,
    smi_header,
    smi_processes,
    smi_set,
)

from driftcheck.snapshot.paths import format_path

GPUS = ["GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa", "GPU-47daa2ad-a218-6286-252b-af45f0dfaf00",
        "GPU-167d8376-ee13-fca4-938a-a05167c43cdc", "GPU-afe9f2ed-9dd0-572c-3cd8-b42b58b3bc99",
        "GPU-2b6f61f9-8b00-3b57-d912-b62792120662", "GPU-980ea11b-91dc-db7b-72ac-0685abc43658",
        "GPU-4ef109e9-e925-4834-2b85-0771b4ef696c", "GPU-b0fe4996-1f7c-91f6-0ccd-08ae3b7e23c5"]
SYS = f"{P}.system.data"
NCCL_LIB = f"{P}.nccl.data.library.version"
TORCH = f"{P}.torch.data"

CERTIFI = herring_pkg("certifi", "2025.6.15")
URLLIB3 = herring_pkg("urllib3", "2.5.0")
REQUESTS = herring_pkg("requests", "2.32.4")
TYPING = herring_pkg("typing-extensions", "4.14.1")
FASTAPI = herring_pkg("fastapi", "0.115.13")
HOSTNAME = herring_env("HOSTNAME", "gpu-node-17.cluster.local")
PATH = herring_env("PATH", "/root/.local/bin:/opt/ml-env/bin:/usr/local/bin:/usr/bin:/bin")
IDLE_TEMP = herring_idle_temp(5)

REBOOT = {"/proc/sys/kernel/random/boot_id": "5b0d7c1e-3a4f-4c9b-8e2d-7f61a0c4d912\n"}
# Both sides under load (the capture is idle): a link generation read at idle is not drift.
BUSY = [smi_set("Idle", "Not Active", section="Clocks Event Reasons"), smi_set("Gpu", "97 %", section="Utilization"),
        smi_set("Graphics", "1980 MHz", section="Clocks"), smi_set("SM", "1980 MHz", section="Clocks")]


def nccl(version: str) -> Side:
    """The interpreter's nvidia-nccl-cu12 wheel at `version` (the nccl probe sees the same wheel)."""
    return Side(packages={"nvidia-nccl-cu12": version}, nccl_dist=f"nvidia_nccl_cu12-{version}.dist-info")


# An NCCL wheel is a package, NCCL, a binary, and a CUDA-stack version torch records: the vocabulary allows each.
NCCL_ACCEPT = ["nccl_env", "package_binary", "cuda_version"]


def nccl_evidence() -> list[str]:
    return [pkg_path("nvidia-nccl-cu12"), NCCL_LIB, f"{TORCH}.nccl_version", f"{TORCH}.cuda_wheels.nvidia-nccl-cu12"]


def base(*names: str) -> dict[str, str | None]:
    """The base versions of these packages (a B side that returns them to the base after A changed them)."""
    return {name: BASE_PACKAGES[name][0] for name in names}


def acs_evidence() -> list[str]:
    buses = ["19:00.0", "3b:00.0", "4c:00.0", "5d:00.0", "9b:00.0", "bb:00.0", "cb:00.0", "db:00.0"]
    return [format_path(["probes", "pcie", "data", "sysfs", f"0000:{bus}", "acs_ctl"]) for bus in buses]


IOMMU_DIRS = {"/sys/kernel/iommu_groups": [str(n) for n in range(142)],
              "/sys/class/iommu": ["ivhd0", "ivhd1", "ivhd2", "ivhd3"]}

TORCH_212 = {"torch": "2.1.2+cu121", "nvidia-cublas-cu12": "12.1.3.1", "nvidia-cudnn-cu12": "8.9.2.26",
             "nvidia-cuda-runtime-cu12": "12.1.105", "triton": "2.1.0"}
TORCH_220 = {"torch": "2.2.0+cu121", "nvidia-cublas-cu12": "12.1.3.1", "nvidia-cudnn-cu12": "8.9.2.26",
             "nvidia-cuda-runtime-cu12": "12.1.105", "triton": "2.2.0"}

INCIDENTS: list[Incident] = [
    # ---- NCCL environment -------------------------------------------------------------------------
    Incident(
        slug="nccl-p2p-level-loc",
        summary="NCCL_P2P_LEVEL=LOC left in the environment forces P2P off: all-reduce runs through host memory",
        sources=["https://github.com/NVIDIA/nccl-tests/issues/228"],
        symptom="all_reduce_perf far below NVLink speed with 'NCCL_P2P_LEVEL set by environment to LOC'; "
                "with the variable unset and NCCL_P2P_DISABLE=0 the bus bandwidth reached 220 GB/s",
        changed="NCCL_P2P_LEVEL=LOC set in the environment", category="nccl_env",
        evidence=env_paths("NCCL_P2P_LEVEL"), b=Side(environ={"NCCL_P2P_LEVEL": "LOC"}),
        herrings=[CERTIFI, HOSTNAME], platform="8x A100-SXM4-80GB (NVSwitch) in the thread; H100 base here"),
    Incident(
        slug="nccl-nvls-disabled",
        summary="NCCL_NVLS_ENABLE=0 turns NVLink SHARP off on an 8x H100 node: all-reduce bus bandwidth drops",
        sources=["https://github.com/NVIDIA/nccl/issues/1221"],
        symptom="all_reduce_perf busbw 430 GB/s with NCCL_NVLS_ENABLE=1, 330 GB/s with NCCL_NVLS_ENABLE=0 "
                "(1-2 nodes of 8x H100, NCCL 2.19.3)",
        changed="NCCL_NVLS_ENABLE=0 set", category="nccl_env", evidence=env_paths("NCCL_NVLS_ENABLE"),
        b=Side(environ={"NCCL_NVLS_ENABLE": "0"}), herrings=[URLLIB3, IDLE_TEMP]),
    Incident(
        slug="nccl-algo-tree-forced",
        summary="NCCL_ALGO switched from Ring to Tree on 8x H100 RoCE nodes: lower all-reduce bus bandwidth",
        sources=["https://github.com/NVIDIA/nccl/issues/1368"],
        symptom="all_reduce_perf busbw 190 GB/s with NCCL_ALGO=Ring, 150 GB/s with NCCL_ALGO=Tree "
                "(5 nodes of 8x H100, 4x 400G RoCE)",
        changed="NCCL_ALGO Ring -> Tree", category="nccl_env", evidence=env_paths("NCCL_ALGO"),
        a=Side(environ={"NCCL_ALGO": "Ring"}), b=Side(environ={"NCCL_ALGO": "Tree"}), herrings=[REQUESTS, PATH]),
    Incident(
        slug="nccl-pxn-enabled",
        summary="PXN re-enabled (NCCL_PXN_DISABLE=1 dropped): ReduceScatter bandwidth collapses on 2x8 GPUs",
        sources=["https://github.com/NVIDIA/nccl/issues/1114"],
        symptom="ReduceScatter bandwidth 'extremely bad' with PXN enabled and normal with it disabled "
                "(2 servers x 8 GPUs, NCCL 2.19.3; the curves were posted as images)",
        changed="NCCL_PXN_DISABLE=1 removed from the environment", category="nccl_env",
        evidence=env_paths("NCCL_PXN_DISABLE"), a=Side(environ={"NCCL_PXN_DISABLE": "1"}),
        b=Side(environ={"NCCL_PXN_DISABLE": None}), herrings=[TYPING, HOSTNAME]),
    Incident(
        slug="nccl-ib-disabled",
        summary="NCCL_IB_DISABLE=1 makes NCCL fall back to sockets between nodes",
        sources=["https://github.com/NVIDIA/nccl-tests/issues/188"],
        symptom="with NCCL_IB_DISABLE=1 nccl-tests runs, but far below the ~20 GB/s the InfiniBand links give",
        changed="NCCL_IB_DISABLE=1 set", category="nccl_env", evidence=env_paths("NCCL_IB_DISABLE"),
        b=Side(environ={"NCCL_IB_DISABLE": "1"}), herrings=[FASTAPI, IDLE_TEMP]),
    Incident(
        slug="nccl-nvls-cumem-forced-off",
        summary="A serving engine forced NCCL_NVLS_ENABLE=0 and NCCL_CUMEM_ENABLE=0: all-reduce 2.7x slower",
        sources=["https://github.com/lightseekorg/tokenspeed/pull/1127"],
        symptom="one 112 MiB all-reduce 506 us with NCCL defaults, 1350 us with NVLS and cuMem forced off; "
                "prefill TTFT 6497 ms -> 8057 ms (GB200, world 16)",
        changed="NCCL_NVLS_ENABLE=0 and NCCL_CUMEM_ENABLE=0 set", category="nccl_env",
        evidence=[*env_paths("NCCL_NVLS_ENABLE"), *env_paths("NCCL_CUMEM_ENABLE")],
        b=Side(environ={"NCCL_NVLS_ENABLE": "0", "NCCL_CUMEM_ENABLE": "0"}), herrings=[CERTIFI, PATH],
        platform="GB200 in the thread; H100 base here"),
    Incident(
        slug="hard-nvls-off-vs-cudnn",
        summary="NVLS turned off beside an unrelated cuDNN wheel upgrade; only the all-reduce benchmark fell",
        sources=["https://github.com/sgl-project/sglang/pull/3502", "https://github.com/sgl-project/sglang/pull/631"],
        symptom="TP all-reduce latency 844 us with NVLS enabled, 1023 us with it disabled (8x H100, TP 4/8); "
                "sglang had disabled NCCL NVLS by default",
        changed="NCCL_NVLS_ENABLE=0 set (and nvidia-cudnn-cu12 9.7.1.26 -> 9.8.0.87, unused by LLM decode)",
        category="nccl_env", evidence=env_paths("NCCL_NVLS_ENABLE"),
        a=Side(bench=bench()),
        b=Side(environ={"NCCL_NVLS_ENABLE": "0"}, packages={"nvidia-cudnn-cu12": "9.8.0.87"},
               bench=bench(allreduce_256mib_8gpu_busbw_gbps=0.81)),
        herrings=[URLLIB3], hard="two plausible changes; the bench says all-reduce fell and GEMM did not",
        modeled="the cuDNN upgrade and the bench figures are added to make the case hard"),
    # ---- NCCL library -----------------------------------------------------------------------------
    Incident(
        slug="nccl-2.16-tenfold",
        summary="NCCL 2.14.3 -> 2.16.2: collectives about 10x slower on 8x A40 with NVLink bridges",
        sources=["https://github.com/NVIDIA/nccl/issues/770"],
        symptom="reduce_scatter/all_gather/all_reduce_perf ~10x slower than with 2.14.3 or 2.15.5; "
                "Horovod training slowed down too",
        changed="NCCL 2.14.3 -> 2.16.2", category="package_version", also_accept=NCCL_ACCEPT,
        evidence=nccl_evidence(), a=nccl("2.14.3"), b=nccl("2.16.2"), herrings=[CERTIFI, HOSTNAME],
        platform="8x A40 in the thread; H100 base here",
        modeled="the thread built NCCL from source; here the interpreter's nvidia-nccl-cu12 wheel changes"),
    Incident(
        slug="nccl-2.22-to-2.24",
        summary="NCCL 2.22 -> 2.24 upgrade: collective kernels spill to local memory and get slower",
        sources=["https://github.com/NVIDIA/nccl/issues/1997"],
        symptom="all_reduce_perf (ring, fp32 sum) slower after upgrading 2.22 -> 2.24/2.29, with many more "
                "local-memory instructions (H200, driver 590.44.01)",
        changed="nvidia-nccl-cu12 2.22.3 -> 2.24.3", category="package_version",
        also_accept=NCCL_ACCEPT, evidence=nccl_evidence(), a=nccl("2.22.3"), b=nccl("2.24.3"),
        herrings=[CERTIFI, URLLIB3, IDLE_TEMP], modeled="patch releases 2.22.3/2.24.3 (the thread says 2.22/2.24)"),
    Incident(
        slug="hard-nccl-2.19-nvlstree-vs-torch",
        summary="torch 2.1.2 -> 2.2.0 brings NCCL 2.19.3, whose NVLSTree all-reduce is 2.7x slower",
        sources=["https://github.com/pytorch/pytorch/issues/117748"],
        symptom="nccl-tests 4 GB all-reduce busbw 104.20 GB/s with NCCL 2.19.3, 279.78 GB/s with the fix "
                "(8 AWS P5 nodes, 8x H100 each)",
        changed="nvidia-nccl-cu12 2.18.1 -> 2.19.3, with torch 2.1.2 -> 2.2.0", category="package_version",
        also_accept=NCCL_ACCEPT, evidence=nccl_evidence(),
        a=Side(packages={**TORCH_212, "nvidia-nccl-cu12": "2.18.1"}, nccl_dist="nvidia_nccl_cu12-2.18.1.dist-info",
               bench=bench()),
        b=Side(packages={**TORCH_220, "nvidia-nccl-cu12": "2.19.3"}, nccl_dist="nvidia_nccl_cu12-2.19.3.dist-info",
               bench=bench(allreduce_256mib_8gpu_busbw_gbps=0.37)),
        herrings=[REQUESTS], hard="torch and NCCL both changed; all-reduce fell, GEMM and decode did not"),
    Incident(
        slug="nccl-2.21-group-launch",
        summary="NCCL 2.18.3 -> 2.21.5: grouped all-reduce + all-gather loop 2.4x slower on 8 GPUs",
        sources=["https://github.com/NVIDIA/nccl/issues/1566"],
        symptom="10000 grouped all-reduce+all-gather iterations: 17.1 s with NCCL 2.18.3, 41.0 s with 2.21.5",
        changed="NCCL 2.18.3 -> 2.21.5", category="package_version", also_accept=NCCL_ACCEPT,
        evidence=nccl_evidence(), a=nccl("2.18.3"), b=nccl("2.21.5"), herrings=[TYPING, PATH]),
    Incident(
        slug="nccl-2.8-training",
        summary="NCCL 2.7.8 -> 2.8.4: multi-node training about 20% slower on DGX A100",
        sources=["https://github.com/NVIDIA/nccl/issues/513"],
        symptom="overall training speed about 20% slower (8 nodes x 8 A100) with 2.8.4, 2.9.8 and 2.9.9 "
                "than with 2.7.8",
        changed="NCCL 2.7.8 -> 2.8.4", category="package_version", also_accept=NCCL_ACCEPT,
        evidence=nccl_evidence(), a=nccl("2.7.8"), b=nccl("2.8.4"), herrings=[FASTAPI, IDLE_TEMP],
        modeled="the NCCL of that time came with the container; here it is the interpreter's wheel"),
    Incident(
        slug="nccl-2.8.3-pcie-3090",
        summary="NCCL 2.7.8 -> 2.8.3 on a single 8x RTX 3090 node: all-reduce 5-10% slower",
        sources=["https://github.com/NVIDIA/nccl/issues/721"],
        symptom="nccl-tests all_reduce_perf (16-20 MB) around 10% slower with 2.8.3 than with 2.7.8 "
                "(the maintainer read just over 5% in the trace)",
        changed="NCCL 2.7.8 -> 2.8.3", category="package_version", also_accept=NCCL_ACCEPT,
        evidence=nccl_evidence(), a=nccl("2.7.8"), b=nccl("2.8.3"), herrings=[CERTIFI, HOSTNAME],
        platform="8x RTX 3090 in the thread; H100 base here"),
    # ---- CUDA math libraries and torch ---------------------------------------------------------------
    Incident(
        slug="hard-cublas-bmm-vs-nccl",
        summary="cuBLAS 12.1.0.26 -> 12.1.3.1: single-batch bmm up to 14x slower; NCCL moved too",
        sources=["https://github.com/pytorch/pytorch/issues/114911"],
        symptom="torch.bmm of shape 1x1x65536: 14.82 us with CUDA 11.8 libraries, 207.38 us with cuBLAS 12.1 "
                "(A100); larger shapes unaffected",
        changed="nvidia-cublas-cu12 12.1.0.26 -> 12.1.3.1 (and nvidia-nccl-cu12 2.18.1 -> 2.18.3)",
        category="package_version", also_accept=["package_binary", "cuda_version"],
        evidence=[pkg_path("nvidia-cublas-cu12"), f"{TORCH}.cuda_wheels.nvidia-cublas-cu12"],
        a=Side(packages={"nvidia-cublas-cu12": "12.1.0.26", "nvidia-nccl-cu12": "2.18.1"},
               nccl_dist="nvidia_nccl_cu12-2.18.1.dist-info", bench=bench()),
        b=Side(packages={"nvidia-cublas-cu12": "12.1.3.1", "nvidia-nccl-cu12": "2.18.3"},
               nccl_dist="nvidia_nccl_cu12-2.18.3.dist-info",
               bench=bench(skinny_gemm_bf16_b1_h8192_gbps=0.62, decode_graph_tok_per_s=0.88)),
        herrings=[TYPING], hard="cuBLAS and NCCL both changed; the skinny GEMM fell, all-reduce did not",
        modeled="the NCCL patch bump and the bench figures are added to make the case hard"),
    Incident(
        slug="cudnn-conv-heuristics",
        summary="torch 2.3.1 -> 2.5.1 brings cuDNN 9.1: conv2d 8x slower through a heuristic regression",
        sources=["https://github.com/pytorch/pytorch/issues/146096"],
        symptom="a conv2d 8x slower on torch 2.5.1 than on 2.3.1; with cudnn.benchmark=True both take ~0.3 s "
                "(2.3.1 default heuristics ~0.65 s)",
        changed="nvidia-cudnn-cu12 8.9.2.26 -> 9.1.0.70 with torch 2.3.1 -> 2.5.1", category="package_version",
        also_accept=["package_binary", "cuda_version"],
        evidence=[pkg_path("nvidia-cudnn-cu12"), f"{TORCH}.cudnn_version", f"{TORCH}.cuda_wheels.nvidia-cudnn-cu12",
                  pkg_path("torch"), f"{TORCH}.version"],
        a=Side(packages={"torch": "2.3.1+cu121", "nvidia-cudnn-cu12": "8.9.2.26", "nvidia-cublas-cu12": "12.1.3.1",
                         "triton": "2.3.1", "nvidia-nccl-cu12": "2.20.5"},
               nccl_dist="nvidia_nccl_cu12-2.20.5.dist-info"),
        b=Side(packages={"torch": "2.5.1+cu121", "nvidia-cudnn-cu12": "9.1.0.70", "nvidia-cublas-cu12": "12.1.3.1",
                         "triton": "3.1.0", "nvidia-nccl-cu12": "2.21.5"},
               nccl_dist="nvidia_nccl_cu12-2.21.5.dist-info"),
        herrings=[URLLIB3, HOSTNAME]),
    Incident(
        slug="torch-2.7-turing",
        summary="vLLM's move from torch 2.6.0+cu124 to 2.7.0+cu128 made inference much slower on Turing GPUs",
        sources=["https://github.com/vllm-project/vllm/issues/17741"],
        symptom="huge performance drop across one vLLM commit whose only change is torch 2.6.0+cu124 -> "
                "2.7.0+cu128; main rebuilt on torch 2.6.0 performs as before",
        changed="torch 2.6.0+cu124 -> 2.7.0+cu128 (with its CUDA 12.8 wheels)", category="package_version",
        also_accept=["package_binary", "cuda_version"],
        evidence=[pkg_path("torch"), f"{TORCH}.version"],
        a=Side(packages={"torch": "2.6.0+cu124", "torchvision": "0.21.0+cu124", "torchaudio": "2.6.0+cu124",
                         "triton": "3.2.0", "nvidia-cublas-cu12": "12.4.5.8", "nvidia-cudnn-cu12": "9.1.0.70",
                         "nvidia-cuda-runtime-cu12": "12.4.127", "nvidia-nccl-cu12": "2.21.5"},
               nccl_dist="nvidia_nccl_cu12-2.21.5.dist-info"),
        b=Side(packages=base("torch", "torchvision", "torchaudio", "triton", "nvidia-cublas-cu12", "nvidia-cudnn-cu12",
                             "nvidia-cuda-runtime-cu12", "nvidia-nccl-cu12"),
               nccl_dist="nvidia_nccl_cu12-2.26.2.dist-info"), herrings=[CERTIFI, IDLE_TEMP],
        platform="Turing GPUs in the thread; H100 base here"),
    Incident(
        slug="torch-2.3-triton-fp8-moe",
        summary="torch 2.3.0 with Triton 2.3.0: FP8 MoE inter-token latency 12 ms -> 40 ms on H100",
        sources=["https://github.com/vllm-project/vllm/issues/4509"],
        symptom="Mixtral 8x7B FP8 at 6 QPS: ITL from 12 ms to over 40 ms since the torch 2.3.0 update; "
                "torch 2.3.1 with triton 2.3.1 fixed it",
        changed="triton 2.2.0 -> 2.3.0 with torch 2.2.1 -> 2.3.0", category="package_version",
        also_accept=["package_binary"],
        evidence=[pkg_path("triton"), pkg_path("torch"), f"{TORCH}.version"],
        a=Side(packages={"torch": "2.2.1+cu121", "triton": "2.2.0", "nvidia-cublas-cu12": "12.1.3.1",
                         "nvidia-cudnn-cu12": "8.9.2.26", "nvidia-nccl-cu12": "2.19.3"},
               nccl_dist="nvidia_nccl_cu12-2.19.3.dist-info"),
        b=Side(packages={"torch": "2.3.0+cu121", "triton": "2.3.0", "nvidia-cublas-cu12": "12.1.3.1",
                         "nvidia-cudnn-cu12": "8.9.2.26", "nvidia-nccl-cu12": "2.20.5"},
               nccl_dist="nvidia_nccl_cu12-2.20.5.dist-info"),
        herrings=[REQUESTS, PATH]),
    Incident(
        slug="torch-container-llama4",
        summary="A newer sglang container changed the PyTorch version: Llama 4 on 8x H100 14% slower",
        sources=["https://github.com/sgl-project/sglang/issues/14665"],
        symptom="Llama 4 throughput down 14.23% on a DGX H100 between two nightly containers (more at "
                "concurrency 128); downgrading FlashInfer made no difference, the PyTorch version had changed",
        changed="torch 2.8.0+cu128 -> 2.9.1+cu128", category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("torch"), f"{TORCH}.version"],
        a=Side(packages={"torch": "2.8.0+cu128", "triton": "3.4.0", "torchvision": "0.23.0+cu128",
                         "torchaudio": "2.8.0+cu128"}),
        b=Side(packages={"torch": "2.9.1+cu128", "triton": "3.5.1", "torchvision": "0.24.1+cu128",
                         "torchaudio": "2.9.1+cu128"}),
        herrings=[TYPING, HOSTNAME], modeled="the thread names the containers, not the torch versions"),
    Incident(
        slug="xformers-0.0.26-attention",
        summary="xformers 0.0.25.post1 -> 0.0.26: memory_efficient_attention training considerably slower",
        sources=["https://github.com/facebookresearch/xformers/issues/1176"],
        symptom="the same cutlass memory_efficient_attention loop runs considerably slower under 0.0.26 than "
                "under 0.0.25.post1 (L40, driver 550.76, CUDA 12.4)",
        changed="xformers 0.0.25.post1 -> 0.0.26", category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("xformers")], a=Side(packages={"xformers": "0.0.25.post1"}),
        b=Side(packages={"xformers": "0.0.26"}), herrings=[FASTAPI, PATH], platform="L40 in the thread"),
    # ---- kernels of the serving stack ------------------------------------------------------------------
    Incident(
        slug="flashinfer-0.6.13-prefill",
        summary="FlashInfer 0.6.12 -> 0.6.13 wheels alone cost 8-11% long-context prefill throughput",
        sources=["https://github.com/flashinfer-ai/flashinfer/issues/3935", "https://github.com/vllm-project/vllm/issues/48396"],
        symptom="long-context prefill ~0% slower at 4K, -8% at 64K, -11% at 131K; swapping only the "
                "flashinfer-python/-cubin/-jit-cache wheels reproduces it both ways (decode unaffected)",
        changed="flashinfer-python, flashinfer-cubin, flashinfer-jit-cache 0.6.12 -> 0.6.13",
        category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("flashinfer-python"), pkg_path("flashinfer-cubin"), pkg_path("flashinfer-jit-cache")],
        a=Side(packages=dict.fromkeys(("flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"), "0.6.12")),
        b=Side(packages=dict.fromkeys(("flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"), "0.6.13")),
        herrings=[CERTIFI, IDLE_TEMP], platform="RTX 5090 (SM120) in the thread; H100 base here"),
    Incident(
        slug="flashinfer-0.6.12-gptoss",
        summary="FlashInfer 0.6.8.post1 -> 0.6.12 on the same vLLM commit: GPT-OSS serving regression",
        sources=["https://github.com/vllm-project/vllm/issues/44808"],
        symptom="throughput, TTFT and p99 ITL all worse with FlashInfer 0.6.11/0.6.12 than with 0.6.8.post1 "
                "on the same vLLM commit, and recover when only FlashInfer is reverted",
        changed="flashinfer-python 0.6.8.post1 -> 0.6.12", category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("flashinfer-python")], a=Side(packages={"flashinfer-python": "0.6.8.post1"}),
        b=Side(packages={"flashinfer-python": "0.6.12"}), herrings=[URLLIB3, HOSTNAME]),
    Incident(
        slug="flashinfer-0.6-fa3-decode",
        summary="FlashInfer 0.6 upgrade: the 'auto' decode backend picks fa3 on Hopper and sglang slows down",
        sources=["https://github.com/sgl-project/sglang/pull/18364", "https://github.com/sgl-project/sglang/pull/15551"],
        symptom="after flashinfer was upgraded to 0.6.1, the default decode attention backend chose fa3 instead "
                "of fa2 on Hopper GPUs, the likely root cause of reported performance regressions",
        changed="flashinfer-python 0.5.3 -> 0.6.1", category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("flashinfer-python")], a=Side(packages={"flashinfer-python": "0.5.3"}),
        b=Side(packages={"flashinfer-python": "0.6.1"}), herrings=[REQUESTS, IDLE_TEMP],
        modeled="the version before the upgrade (0.5.3) is not named in the threads"),
    Incident(
        slug="triton-3.6-fused-moe",
        summary="Triton 3.4 -> 3.6 alone halves a fused-MoE model's output throughput",
        sources=["https://github.com/vllm-project/vllm/issues/43153"],
        symptom="output 707 tok/s with triton 3.4 (vLLM 0.18), 386 tok/s with only triton changed to 3.6; "
                "TPOT 43.7 ms -> 80.6 ms",
        changed="triton 3.4.0 -> 3.6.0", category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("triton")], a=Side(packages={"triton": "3.4.0"}), b=Side(packages={"triton": "3.6.0"}),
        herrings=[TYPING, PATH], platform="AMD MI355X in the thread; the change is the Triton wheel, H100 base here"),
    Incident(
        slug="vllm-0.17-gptoss",
        summary="vLLM 0.16.0 -> 0.17.0: gpt-oss-120b output throughput 16% lower at high concurrency",
        sources=["https://github.com/vllm-project/vllm/issues/40838"],
        symptom="output 16055 tok/s on v0.16.0, 13306 tok/s on v0.17.0 at concurrency 300; TPOT median "
                "18.67 ms -> 22.40 ms (H200, TP 4)",
        changed="vllm 0.16.0 -> 0.17.0", category="package_version", also_accept=["package_binary"],
        evidence=[pkg_path("vllm")], a=Side(packages={"vllm": "0.16.0"}), b=Side(packages={"vllm": "0.17.0"}),
        herrings=[CERTIFI, HOSTNAME]),
    Incident(
        slug="hard-vllm-0.4.1-vs-persistence",
        summary="vLLM 0.4.0 -> 0.4.1 lost 12% throughput; a reboot also left persistence mode off, bench unchanged",
        sources=["https://github.com/vllm-project/vllm/issues/4210"],
        symptom="throughput 20.13 requests/s (10308 tokens/s) before, 17.67 requests/s (9048 tokens/s) after",
        changed="vllm 0.4.0 -> 0.4.1 (and persistence mode off on all GPUs after a reboot)",
        category="package_version", also_accept=["package_binary"], evidence=[pkg_path("vllm")],
        a=Side(packages={"vllm": "0.4.0"}, bench=bench()),
        b=Side(packages={"vllm": "0.4.1"}, files=REBOOT, smi=[smi_set("Persistence Mode", "Disabled")],
               bench=bench()),
        herrings=[FASTAPI], hard="two plausible changes; nothing in the micro-benchmarks moved, so software first",
        modeled="the reboot with persistence off and the unchanged bench are added to make the case hard"),
    # ---- driver and kernel modules -----------------------------------------------------------------------
    Incident(
        slug="driver-536-wsl",
        summary="NVIDIA driver upgraded to 536 under WSL2: vLLM benchmark 28% slower",
        sources=["https://github.com/vllm-project/vllm/issues/2057"],
        symptom="throughput 1.03 requests/s before the driver upgrade, 0.74 requests/s after (total time "
                "775 s -> 1080 s); rolling back to 531.79 recovered most of it",
        changed="driver 531.79 -> 536.23", category="driver_version", also_accept=["cuda_version"],
        evidence=[f"{P}.gpu.data.driver_version"],
        a=Side(smi=[smi_header("Driver Version", "531.79"), smi_header("CUDA Version", "12.1")],
               modules={"nvidia": None, "nvidia_uvm": None, "nvidia_modeset": None, "nvidia_drm": None,
                        "nv_peer_mem": None, "mlx5_core": None, "mlx5_ib": None, "ib_core": None,
                        "ib_uverbs": None, "rdma_cm": None}),
        b=Side(smi=[smi_header("Driver Version", "536.23"), smi_header("CUDA Version", "12.2")]),
        herrings=[REQUESTS, IDLE_TEMP], modeled="the thread says '536'; 536.23 is that branch's release",
        platform="WSL2 (no Linux kernel modules); H100 capture as the GPU side"),
    Incident(
        slug="driver-580-blackwell-gguf",
        summary="nvidia-driver 570 -> 580.105.08: vLLM GGUF inference 23x slower on an RTX 5090",
        sources=["https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1001"],
        symptom="Gemma 3 12B GGUF: 115 tok/s on nvidia-570-open, 5 tok/s on 580.105.08 (also with torch cu130)",
        changed="driver 570.172.08 -> 580.105.08 (CUDA 12.8 -> 13.0)", category="driver_version",
        also_accept=["cuda_version"],
        evidence=[f"{P}.gpu.data.driver_version", f"{SYS}.modules.nvidia.version"],
        a=Side(smi=[smi_header("Driver Version", "570.172.08"), smi_header("CUDA Version", "12.8")],
               modules={"nvidia": "570.172.08", "nvidia_uvm": "570.172.08", "nvidia_modeset": "570.172.08",
                        "nvidia_drm": "570.172.08"}),
        b=Side(smi=[smi_header("Driver Version", "580.105.08"), smi_header("CUDA Version", "13.0")],
               modules={"nvidia": "580.105.08", "nvidia_uvm": "580.105.08", "nvidia_modeset": "580.105.08",
                        "nvidia_drm": "580.105.08"}, files=REBOOT),
        herrings=[URLLIB3, PATH], modeled="the 570 minor version (the thread says nvidia-570-open)",
        platform="RTX 5090 in the thread; H100 capture as the GPU side"),
    Incident(
        slug="peermem-swap-dgx-os",
        summary="DGX OS upgrade swapped nv_peer_mem for nvidia_peermem; NCCL <= 2.22.3 then disables GPUDirect RDMA",
        sources=["https://github.com/NVIDIA/nccl/issues/1676"],
        symptom="2-node NCCL all_reduce (1 GB) ~180 GB/s before, ~10 GB/s after; logs say 'GPU Direct RDMA "
                "Disabled for HCA'",
        changed="nv_peer_mem unloaded, nvidia_peermem loaded (with a kernel update and reboot)",
        category="kernel_os", also_accept=["p2p_topology"],
        evidence=[f"{SYS}.modules.nv_peer_mem", f"{SYS}.modules.nvidia_peermem"],
        a=nccl("2.22.3"),
        b=Side(packages={"nvidia-nccl-cu12": "2.22.3"}, nccl_dist="nvidia_nccl_cu12-2.22.3.dist-info",
               modules={"nv_peer_mem": None, "nvidia_peermem": "535.161.08"},
               files={**REBOOT, "/proc/sys/kernel/osrelease": "6.1.0-28-amd64\n"}),
        herrings=[CERTIFI, HOSTNAME], modeled="the kernel versions (the thread names DGX OS 25.01)"),
    Incident(
        slug="peermem-not-loaded",
        summary="nv_peer_mem not loaded on one node: inter-node NCCL traffic loses GPUDirect RDMA",
        sources=["https://github.com/NVIDIA/nccl-tests/issues/152"],
        symptom="poor inter-node NCCL performance; the receiving node's channels show no GDRDMA, and "
                "nv_peer_mem turned out not to be loaded there",
        changed="nv_peer_mem module not loaded", category="kernel_os", also_accept=["p2p_topology"],
        evidence=[f"{SYS}.modules.nv_peer_mem"],
        b=Side(modules={"nv_peer_mem": None}, files=REBOOT), herrings=[TYPING, IDLE_TEMP]),
    # ---- GPU state ---------------------------------------------------------------------------------------
    Incident(
        slug="mig-enabled-h100",
        summary="MIG enabled on an H100: a model served on 20 GB slices loses most of its speed",
        sources=["https://github.com/ollama/ollama/issues/4814"],
        symptom="llama3.1:70b on an H100 split into 20 GB MIG slices: 'massive performance loss' compared "
                "with the no-MIG setup (only one slice used)",
        changed="MIG mode Disabled -> Enabled on GPU 0", category="mig_ecc_persistence",
        evidence=[gpu_path("mig.mode_current")],
        b=Side(smi=[smi_set("Current", "Enabled", gpus=[0], section="MIG Mode"),
                    smi_set("Pending", "Enabled", gpus=[0], section="MIG Mode")]),
        herrings=[CERTIFI, PATH]),
    Incident(
        slug="power-cap-one-gpu",
        summary="One GPU of four capped at half the power limit of the others",
        sources=["https://github.com/l4rz/reverse-engineering-dell-idrac-to-get-rid-of-gpu-throttling/issues/3"],
        symptom="one V100 of four capped to 150 W while the other three run at 300 W (SW Power Cap active)",
        changed="power limit of GPU 3 700 W -> 350 W", category="gpu_clock_power",
        evidence=[gpu_path("power.limit_w", GPUS[3]), gpu_path("power.enforced_limit_w", GPUS[3])],
        b=Side(smi=[smi_set("Current Power Limit", "350.00 W", gpus=[3]),
                    smi_set("Requested Power Limit", "350.00 W", gpus=[3])]),
        herrings=[URLLIB3, HOSTNAME], platform="V100 in the thread; H100 base here (same half-limit ratio)"),
    Incident(
        slug="pcie-gen2-under-load",
        summary="A GPU's PCIe link stuck at Gen2 x16 through hours of production training",
        sources=["https://github.com/local-inference-lab/rtx6kpro/pull/88"],
        symptom="GPU e3:00.0 at Gen2 x16 for three and a half hours of training: roughly 8 GB/s instead of "
                "64 GB/s, 100% utilisation and no error logged",
        changed="PCIe generation of GPU 5 under load 5 -> 2", category="pcie_link",
        evidence=[gpu_path("link.gen_current", GPUS[5], "pcie")], a=Side(smi=BUSY),
        b=Side(smi=[*BUSY, smi_set("Current", "2", gpus=[5], section="PCIe Generation")]),
        herrings=[REQUESTS, PATH], platform="RTX PRO 6000 Blackwell in the thread; H100 base here"),
    Incident(
        slug="pcie-gen-degraded-h2d",
        summary="PCIe link degraded from 4.0 to 2.0: host-to-device copies at a fraction of the bus speed",
        sources=["https://github.com/Tiiny-AI/PowerInfer/issues/237"],
        symptom="peak H2D copy 10-15 GB/s on an RTX 3090 whose link shows PCIe 2.0 instead of 4.0",
        changed="PCIe generation of GPU 0 under load 5 -> 2", category="pcie_link",
        evidence=[gpu_path("link.gen_current", GPU0, "pcie")], a=Side(smi=BUSY),
        b=Side(smi=[*BUSY, smi_set("Current", "2", gpus=[0], section="PCIe Generation")]),
        herrings=[FASTAPI, HOSTNAME], platform="RTX 3090 (PCIe 4.0) in the thread; H100 (PCIe 5.0) base here"),
    Incident(
        slug="persistence-off-after-reboot",
        summary="Persistence mode off: every CUDA start re-initialises all GPUs, seconds per GPU",
        sources=["https://github.com/arrayfire/arrayfire/issues/2467",
                 "https://stackoverflow.com/questions/45360006"],
        symptom="the first execution takes time proportional to the number of GPUs; the driver documentation "
                "quoted in the thread puts it at seconds per CUDA job without persistence",
        changed="persistence mode Enabled -> Disabled on all 8 GPUs after a reboot", category="mig_ecc_persistence",
        evidence=[gpu_path("persistence_mode", uuid) for uuid in GPUS],
        b=Side(smi=[smi_set("Persistence Mode", "Disabled")], files=REBOOT), herrings=[CERTIFI, IDLE_TEMP]),
    # ---- host: CPU, memory, container, IOMMU, PCIe ACS ---------------------------------------------------
    Incident(
        slug="cgroup-cpu-quota-throttling",
        summary="A 6-CPU pod limit on a 172-core host: CFS throttling stalls the engine loop",
        sources=["https://github.com/vllm-project/vllm/pull/49461"],
        symptom="inter-token latency from 7-9 ms to 68-93 ms with the GPU 7-12% SM active, throttling ratio ~1.00 "
                "for minutes (Kubernetes cpu limit 6 on a 172-core node)",
        changed="cgroup CPU quota none -> 6 CPUs", category="container_limits",
        evidence=[f"{SYS}.cgroup.cpu_quota_cores"],
        b=Side(files={"/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "600000\n"}), herrings=[TYPING, HOSTNAME]),
    Incident(
        slug="numa-balancing-on",
        summary="Automatic NUMA balancing enabled: task_numa_work adds 16+ ms to the EP dispatch path",
        sources=["https://github.com/deepseek-ai/DeepEP/issues/624"],
        symptom="task_numa_work ran 139 times in 60 s (up to 16-31 ms each) inside an SGLang scheduler, "
                "directly on internode_dispatch (Linux 5.15)",
        changed="kernel.numa_balancing 0 -> 1", category="numa", evidence=[f"{SYS}.numa.balancing"],
        b=Side(files={"/proc/sys/kernel/numa_balancing": "1\n"}), herrings=[URLLIB3, PATH]),
    Incident(
        slug="iommu-on-amd",
        summary="AMD IOMMU on: multi-GPU tests hang or crawl until amd_iommu=off",
        sources=["https://github.com/NVIDIA/nccl-tests/issues/115"],
        symptom="multi-GPU nccl-tests hang; with amd_iommu=off they run (average ~6 GB/s, NPS4 +1 GB/s)",
        changed="amd_iommu=on on the kernel command line", category="kernel_os",
        evidence=[f"{SYS}.cmdline.amd_iommu", f"{SYS}.iommu.cmdline.amd_iommu"],
        b=Side(files={"/proc/cmdline": "mitigations=auto,no_guest_host,no_guest_guest amd_iommu=on\n", **REBOOT},
               dirs=IOMMU_DIRS),
        herrings=[REQUESTS, IDLE_TEMP]),
    Incident(
        slug="iommu-enabled-in-bios",
        summary="IOMMU enabled in the BIOS of an A100 PCIe server: P2P traffic breaks until it is disabled",
        sources=["https://github.com/NVIDIA/nccl/issues/841"],
        symptom="nccl-tests needed NCCL_P2P_DISABLE=1; with IOMMU disabled (and NPS4) P2P works and all_reduce "
                "averages 8-21 GB/s",
        changed="IOMMU enabled: IOMMU units and groups appear", category="kernel_os",
        evidence=[f"{SYS}.iommu.groups", f"{SYS}.iommu.units"],
        b=Side(dirs=IOMMU_DIRS, files=REBOOT), herrings=[FASTAPI, PATH],
        modeled="units and groups as an AMD EPYC host lists them"),
    Incident(
        slug="acs-enabled-p2p",
        summary="PCIe ACS enabled on the GPUs' switch ports: peer traffic detours through the root complex",
        sources=["https://github.com/NVIDIA/nccl/issues/1086"],
        symptom="GPU pairs behind one PCIe switch slower than pairs across NUMA nodes; disabling ACS in the BIOS "
                "solved it",
        changed="ACS Control 0x0000 -> 0x005d on the GPUs' upstream ports", category="p2p_topology",
        evidence=acs_evidence(), a=Side(patch=[acs(False)]), b=Side(patch=[acs(True)]), herrings=[CERTIFI, HOSTNAME],
        platform="A800 / RTX 4090 PCIe boxes in the thread; H100 base here"),
    Incident(
        slug="hard-acs-vs-cublas",
        summary="ACS left on in a VM beside a cuBLAS wheel upgrade; only the communication benchmark fell",
        sources=["https://github.com/NVIDIA/nccl/issues/949"],
        symptom="inter-node all_reduce_perf at ~56% of line rate on A100 VMs; after applying the ACS settings "
                "48 GB/s (~384 Gbps, the rate of 2x HDR)",
        changed="ACS Control enabled (and nvidia-cublas-cu12 12.8.3.14 -> 12.8.4.1)", category="p2p_topology",
        evidence=acs_evidence(), a=Side(patch=[acs(False)], bench=bench()),
        b=Side(patch=[acs(True)], packages={"nvidia-cublas-cu12": "12.8.4.1"},
               bench=bench(allreduce_256mib_8gpu_busbw_gbps=0.56)),
        herrings=[URLLIB3], hard="ACS and cuBLAS both changed; all-reduce fell, GEMM did not",
        modeled="the cuBLAS upgrade and the bench figures are added to make the case hard"),
    Incident(
        slug="cpu-governor-powersave",
        summary="CPU frequency governor performance -> powersave: host-bound benchmarks shift",
        sources=["https://github.com/trackreco/mkFit/issues/232"],
        symptom="multithreaded benchmark timings shifted when the scaling governor was set to powersave "
                "(performance raises the minimum clock; powersave may ramp down during quiet intervals)",
        changed="scaling governor performance -> powersave on all CPUs", category="cpu_governor",
        evidence=[f"{SYS}.cpufreq.governors.performance", f"{SYS}.cpufreq.governors.powersave"],
        b=Side(recording="debian12-vm-docker-cpufreq-powersave"), herrings=[TYPING, IDLE_TEMP]),
    Incident(
        slug="omp-num-threads-unset",
        summary="OMP_NUM_THREADS=1 dropped: CPU-side inference oversubscribes the cores",
        sources=["https://github.com/pytorch/pytorch/issues/16717"],
        symptom="ResNet-50 inference on an 8-core CPU 2800% slower without OMP_NUM_THREADS=1 than with it",
        changed="OMP_NUM_THREADS 1 -> unset", category="env_var_other", evidence=env_paths("OMP_NUM_THREADS"),
        a=Side(environ={"OMP_NUM_THREADS": "1"}), b=Side(environ={"OMP_NUM_THREADS": None}),
        herrings=[CERTIFI, PATH]),
    Incident(
        slug="cuda-visible-devices-order",
        summary="CUDA_VISIBLE_DEVICES changed to a device set that crosses PCIe switches: scaling efficiency drops",
        sources=["https://github.com/tensorflow/tensorflow/issues/39207"],
        symptom="same job, same hardware, only CUDA_VISIBLE_DEVICES changing: NCCL all-reduce scaling efficiency "
                "differs by device set on a PIX/NODE PCIe box (the results were posted as graphs)",
        changed="CUDA_VISIBLE_DEVICES 0,1,2,3 -> 0,4,1,5", category="env_var_other",
        evidence=env_paths("CUDA_VISIBLE_DEVICES"), a=Side(environ={"CUDA_VISIBLE_DEVICES": "0,1,2,3"}),
        b=Side(environ={"CUDA_VISIBLE_DEVICES": "0,4,1,5"}), herrings=[REQUESTS, HOSTNAME],
        platform="8x 1080 Ti PCIe box in the thread; H100 base here"),
    # ---- other work on the GPUs, heat -----------------------------------------------------------------------
    Incident(
        slug="gpus-shared-with-another-job",
        summary="Another job landed on the same GPUs of a cluster node: iterations 3x, then 30x slower",
        sources=["https://github.com/cBio/cbio-cluster/issues/342"],
        symptom="a 4-node job's iterations went from ~32 s to ~101 s, later to 1000+ s, while other work "
                "used its GPUs",
        changed="a foreign compute process on GPUs 0-3", category="gpu_contention",
        evidence=[gpu_path("processes.48213", uuid) for uuid in GPUS[:4]],
        b=Side(smi=[smi_processes([0, 1, 2, 3], "/usr/bin/python3", 30412, 48213)]), herrings=[CERTIFI, PATH]),
    Incident(
        slug="second-process-same-gpu",
        summary="A second copy of the model started on the same GPU: both run at half speed",
        sources=["https://github.com/tensorflow/tensorflow/issues/11022"],
        symptom="one process finishes the data in 170-174 s; with a second identical process on the same GPU "
                "both take 320-340 s, though one used under 50% of the GPU",
        changed="another compute process on GPU 0", category="gpu_contention",
        evidence=[gpu_path("processes.52117")],
        b=Side(smi=[smi_processes([0], "python", 1043, 52117)]), herrings=[URLLIB3, HOSTNAME]),
    Incident(
        slug="gpu-overheating-thermal-slowdown",
        summary="An overheated GPU throttles its clocks and training slows down over time",
        sources=["https://github.com/tensorflow/tensorflow/issues/40042"],
        symptom="training got slower and slower over time; the GPU had overheated, and with better cooling "
                "there was no degradation over 100,000 steps",
        changed="GPU 0 at 88 C under load with software and hardware thermal slowdown active", category="thermal",
        evidence=[gpu_path("clock_event_reasons"), gpu_path("temperature.gpu_c")],
        a=Side(smi=[*BUSY, smi_set("GPU Current Temp", "61 C")]),
        b=Side(smi=[*BUSY, smi_set("GPU Current Temp", "88 C", gpus=[0]),
                    smi_set("SW Thermal Slowdown", "Active", gpus=[0]),
                    smi_set("HW Thermal Slowdown", "Active", gpus=[0]),
                    smi_set("Graphics", "1365 MHz", gpus=[0], section="Clocks"),
                    smi_set("SM", "1365 MHz", gpus=[0], section="Clocks")]),
        herrings=[TYPING, PATH], platform="a desktop GPU in the thread; H100 base here"),
]
