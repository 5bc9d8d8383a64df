"""The benchmark plans: which workloads run on which device at which size, per suite.

Sizes are fixed per suite and device, so two runs of a suite measure the same work: the quick CPU
suite is sized for a 2-core machine within 30 s, the quick GPU suite for one GPU within 15 s;
`standard` and `full` add every GPU, both copy directions, P2P pairs and all-reduce, with larger budgets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from driftcheck.baselines.calibrate import Timer, cuda_event_timer, wall_timer
from driftcheck.baselines.decode import DecoderShape
from driftcheck.baselines.workloads import (
    MIB,
    Case,
    allreduce_cases,
    copy_case,
    decode_cases,
    gemm_case,
    host_link_cases,
    launch_cases,
    p2p_cases,
    skinny_case,
)

# Total time budget of each suite, seconds; spread evenly over its benchmarks.
SUITE_BUDGET_S = {"cpu": {"quick": 22.0, "standard": 120.0, "full": 480.0},
                  "cuda": {"quick": 12.0, "standard": 150.0, "full": 540.0}}


# Batch-1 decoding reads every weight once per token, so it is bound by memory bandwidth and speeds up
# with threads. The CPU shapes hold more weights than a server's last-level cache (105 MiB on the
# reference VM; the quick shape reads ~270 MB per token) in matrices large enough for the BLAS to
# split across threads. The earlier quick shape (hidden 512, 59 MB) stayed in cache in matrices too
# small to split, and got faster with OMP_NUM_THREADS=1 (see benchmarks/decode_threads.py).
CPU_DECODE = {"quick": DecoderShape(hidden=1536, layers=2, heads=12, ffn=4096, vocab=8192, max_len=32, new_tokens=4),
              "standard": DecoderShape(hidden=2048, layers=4, heads=16, ffn=5632, vocab=16384, max_len=64,
                                       new_tokens=8),
              "full": DecoderShape(hidden=2048, layers=6, heads=16, ffn=5632, vocab=16384, max_len=128,
                                   new_tokens=16)}
GPU_DECODE = {"quick": DecoderShape(hidden=4096, layers=4, heads=32, ffn=11008, vocab=32000, max_len=256,
                                    new_tokens=64),
              "standard": DecoderShape(hidden=4096, layers=16, heads=32, ffn=11008, vocab=32000, max_len=512,
                                       new_tokens=128),
              "full": DecoderShape(hidden=4096, layers=32, heads=32, ffn=11008, vocab=32000, max_len=1024,
                                   new_tokens=256)}


def cpu_plan(torch: Any, suite: str) -> list[Callable[[], list[Case]]]:
    """The CPU benchmarks of `suite`, each built only when its turn comes (to keep memory low)."""
    t = wall_timer
    def listed(build: Callable[..., Case], *args: Any) -> Callable[[], list[Case]]:
        return lambda: [build(torch, "cpu", None, t, *args)]

    plan: list[Callable[[], list[Case]]] = [
        partial(launch_cases, torch, "cpu", None, t),
        listed(gemm_case, 1024, "fp32"),
        listed(skinny_case, 4, 4096, "fp32"),
        listed(copy_case, 64 * MIB),
        partial(decode_cases, torch, "cpu", None, t, CPU_DECODE[suite], "fp32"),
    ]
    if suite != "quick":
        plan += [listed(gemm_case, 2048, "fp32"), listed(skinny_case, 1, 4096, "fp32"),
                 listed(skinny_case, 8, 4096, "fp32")]
    return plan


def _on_gpu(torch: Any, gpu: int, build: Callable[[], list[Case]]) -> list[Case]:
    with torch.cuda.device(gpu):
        return build()


def _gemms(torch: Any, dev: str, gpu: int, timer: Timer, dtypes: Sequence[str]) -> list[Case]:
    return [gemm_case(torch, dev, gpu, timer, 8192, dtype) for dtype in dtypes]


def _skinnies(torch: Any, dev: str, gpu: int, timer: Timer, batches: Sequence[int]) -> list[Case]:
    return [skinny_case(torch, dev, gpu, timer, batch, 8192, "bf16") for batch in batches]


def _copies(torch: Any, dev: str, gpu: int, timer: Timer) -> list[Case]:
    return [copy_case(torch, dev, gpu, timer, 1024 * MIB)]


def gpu_plan(torch: Any, suite: str) -> list[Callable[[], list[Case]]]:
    """The GPU benchmarks of `suite`: GPU 0 alone for quick, every GPU and pair for standard and full."""
    count = torch.cuda.device_count()
    gpus = [0] if suite == "quick" else list(range(count))
    plan: list[Callable[[], list[Case]]] = []
    for gpu in gpus:
        dev = f"cuda:{gpu}"
        t = cuda_event_timer(torch, gpu)
        plan += [
            partial(_on_gpu, torch, gpu, partial(launch_cases, torch, dev, gpu, t)),
            partial(_on_gpu, torch, gpu, partial(_gemms, torch, dev, gpu, t, ("bf16",) if suite == "quick"
                                                 else ("bf16", "fp16"))),
            partial(_on_gpu, torch, gpu, partial(_skinnies, torch, dev, gpu, t, (1,) if suite == "quick"
                                                 else (1, 4, 8))),
            partial(_on_gpu, torch, gpu, partial(_copies, torch, dev, gpu, t)),
            partial(_on_gpu, torch, gpu, partial(host_link_cases, torch, gpu, t, 256 * MIB, suite != "quick")),
        ]
        if gpu == 0:
            plan.append(partial(_on_gpu, torch, gpu, partial(decode_cases, torch, dev, gpu, t, GPU_DECODE[suite],
                                                             "bf16")))
    if suite != "quick" and count > 1:
        plan.append(lambda: p2p_cases(torch, count, 256 * MIB))
        plan.append(lambda: allreduce_cases(torch, count, [MIB, 64 * MIB, 256 * MIB], "nccl"))
    return plan


