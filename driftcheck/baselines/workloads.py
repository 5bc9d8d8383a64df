"""The benchmark workloads: each builds a `Case` (an operation and how its time becomes a figure).

Each benchmark reports its unit in its name (`gemm_fp32_1024_gflops`). A workload only builds the
operation and its tensors; which workloads run at which size is a plan (`driftcheck.baselines.plans`),
and running them under a budget is the runner's (`driftcheck.baselines.runner`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from driftcheck.baselines.calibrate import CalibrationPolicy, Measurement, Timer, cuda_event_timer, measure, wall_timer
from driftcheck.baselines.decode import DecoderShape, SyntheticDecoder
from driftcheck.baselines.distributed import allreduce_measurements, bus_bandwidth_gbps

LAUNCH_OPS = 32
MIB = 1 << 20


@dataclass
class Derived:
    """A second view of the same samples (ms/token beside tokens/s)."""

    name: str
    unit: str
    higher_is_better: bool
    convert: Callable[[float], float]


@dataclass
class Case:
    """One benchmark ready to run: the operation, and how a time per operation becomes its unit."""

    name: str
    unit: str
    higher_is_better: bool
    value_of: Callable[[float], float]
    op: Callable[[], object] | None = None
    timer: Timer = wall_timer
    gpu_index: int | None = None
    peak_kind: str | None = None
    peak_scale: float = 1.0  # multiplies the value into the peak's unit
    params: dict[str, Any] = field(default_factory=dict)
    derived: tuple[Derived, ...] = ()
    # Measures itself (all-reduce runs in other processes); else `measure(op, timer, policy)`.
    runner: Callable[[CalibrationPolicy], Measurement] | None = None
    # Runs on one CPU thread whatever the thread settings (ops too small to split): the single-thread
    # control can normalise it (driftcheck.baselines.control).
    single_thread: bool = False

    def run(self, policy: CalibrationPolicy) -> Measurement:
        if self.runner is not None:
            return self.runner(policy)
        if self.op is None:
            raise ValueError(f"benchmark {self.name} has nothing to run")
        return measure(self.op, self.timer, policy)


def _per_s(work: float, scale: float) -> Callable[[float], float]:
    return lambda seconds: work / seconds / scale


def launch_cases(torch: Any, device: str, gpu: int | None, timer: Timer) -> list[Case]:
    x = torch.zeros(1, device=device)

    def eager() -> None:
        for _ in range(LAUNCH_OPS):
            x.add_(1.0)

    params = {"ops": LAUNCH_OPS, "op": "add_ on a 1-element tensor"}
    # A 1-element add never reaches an intra-op parallel region: one thread on any setting.
    cases = [Case("launch_eager_us_per_op", "us", False, lambda s: s / LAUNCH_OPS * 1e6, eager, timer, gpu,
                  params=params, single_thread=True)]
    if device == "cuda":
        graph = _capture(torch, eager)
        cases.append(Case("launch_graph_us_per_op", "us", False, lambda s: s / LAUNCH_OPS * 1e6, graph.replay,
                          timer, gpu, params=params, single_thread=True))
    return cases


def _capture(torch: Any, fn: Callable[[], object]) -> Any:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def gemm_case(torch: Any, device: str, gpu: int | None, timer: Timer, n: int, dtype_name: str,
              work_factor: float = 1.0) -> Case:
    """n×n×n matmul in GFLOP/s (CPU) or TFLOP/s (GPU). `work_factor` > 1 lengthens the inner dimension
    while reporting the nominal work: a controlled slowdown for sensitivity checks."""
    dtype = getattr(torch, {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}[dtype_name])
    k = max(1, round(n * work_factor))
    a = torch.randn(n, k, device=device).to(dtype)
    b = torch.randn(k, n, device=device).to(dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    flops = 2.0 * n * n * n
    on_gpu = device == "cuda"
    unit, scale = ("tflops", 1e12) if on_gpu else ("gflops", 1e9)
    return Case(f"gemm_{dtype_name}_{n}_{unit}", unit.replace("flops", "flop/s").upper().replace("/S", "/s"),
                True, _per_s(flops, scale), lambda: torch.matmul(a, b, out=out), timer, gpu,
                peak_kind="bf16_tflops" if on_gpu and dtype_name == "bf16" else None,
                params={"m": n, "n": n, "k": n, "dtype": dtype_name})


def skinny_case(torch: Any, device: str, gpu: int | None, timer: Timer, batch: int, hidden: int,
                dtype_name: str, work_factor: float = 1.0) -> Case:
    """Decode-shaped (batch × hidden) @ (hidden × hidden): memory-bound, reported as weight GB/s."""
    dtype = getattr(torch, {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}[dtype_name])
    k = max(1, round(hidden * work_factor))
    x = torch.randn(batch, k, device=device).to(dtype)
    w = torch.randn(k, hidden, device=device).to(dtype)
    out = torch.empty(batch, hidden, device=device, dtype=dtype)
    weight_bytes = float(hidden * hidden * w.element_size())
    return Case(f"skinny_gemm_{dtype_name}_b{batch}_h{hidden}_gbps", "GB/s", True, _per_s(weight_bytes, 1e9),
                lambda: torch.matmul(x, w, out=out), timer, gpu, peak_kind="memory_gbps" if device == "cuda" else None,
                params={"batch": batch, "hidden": hidden, "dtype": dtype_name})


def copy_case(torch: Any, device: str, gpu: int | None, timer: Timer, size_bytes: int) -> Case:
    src = torch.ones(size_bytes // 4, device=device)
    dst = torch.empty_like(src)
    moved = 2.0 * size_bytes  # read + write
    return Case(f"device_copy_{size_bytes // MIB}mib_gbps", "GB/s", True, _per_s(moved, 1e9),
                lambda: dst.copy_(src), timer, gpu, peak_kind="memory_gbps" if device == "cuda" else None,
                params={"bytes": size_bytes, "counted": "read+write"})


def host_link_cases(torch: Any, gpu: int, timer: Timer, size_bytes: int, pageable: bool) -> list[Case]:
    cases = []
    for kind in ("pinned", "pageable") if pageable else ("pinned",):
        host = torch.ones(size_bytes // 4)
        if kind == "pinned":
            host = host.pin_memory()
        dev = torch.empty(size_bytes // 4, device=f"cuda:{gpu}")
        h2d = partial(dev.copy_, host, non_blocking=True)
        d2h = partial(host.copy_, dev, non_blocking=True)
        for direction, op in (("h2d", h2d), ("d2h", d2h)):
            cases.append(Case(f"{direction}_{kind}_gpu{gpu}_gbps", "GB/s", True, _per_s(size_bytes, 1e9), op, timer,
                              gpu, peak_kind="pcie_gbps", params={"bytes": size_bytes, "memory": kind}))
    return cases


def p2p_cases(torch: Any, count: int, size_bytes: int) -> list[Case]:
    cases = []
    for src in range(count):
        for dst in range(count):
            if src == dst or not torch.cuda.can_device_access_peer(src, dst):
                continue
            a = torch.ones(size_bytes // 4, device=f"cuda:{src}")
            b = torch.empty(size_bytes // 4, device=f"cuda:{dst}")
            cases.append(Case(f"p2p_gpu{src}_to_gpu{dst}_gbps", "GB/s", True, _per_s(size_bytes, 1e9),
                              partial(b.copy_, a, non_blocking=True), cuda_event_timer(torch, src), src,
                              peak_kind="nvlink_gbps", params={"bytes": size_bytes, "src": src, "dst": dst}))
    return cases


def allreduce_cases(torch: Any, world: int, sizes: Sequence[int], backend: str) -> list[Case]:
    """All-reduce bus bandwidth at each size over `world` local processes (nccl on GPUs, gloo on CPU)."""
    cache: dict[int, Measurement] = {}
    pending = list(sizes)

    def runner_for(size: int) -> Callable[[CalibrationPolicy], Measurement]:
        def run(policy: CalibrationPolicy) -> Measurement:
            # One set of processes measures every size: starting them costs more than a small all-reduce.
            if size not in cache:
                # Each size gets the budget of one benchmark; the later sizes then cost nothing.
                cache.update(allreduce_measurements(torch, pending, world, backend, policy))
            return cache[size]
        return run

    ranks = "gpu" if backend == "nccl" else "proc"
    return [Case(f"allreduce_{size // MIB}mib_{world}{ranks}_busbw_gbps", "GB/s", True,
                 partial(_busbw_of, size, world), gpu_index=0 if backend == "nccl" else None,
                 params={"bytes": size, "world": world, "backend": backend}, runner=runner_for(size))
            for size in sizes]


def _busbw_of(size: int, world: int, seconds: float) -> float:
    return bus_bandwidth_gbps(size, seconds, world)


def decode_cases(torch: Any, device: str, gpu: int | None, timer: Timer, shape: DecoderShape,
                 dtype_name: str) -> list[Case]:
    """Synthetic decode tokens/s (and ms/token), eager, and replaying a CUDA graph on GPUs."""
    dtype = getattr(torch, {"fp32": "float32", "bf16": "bfloat16"}[dtype_name])
    model = SyntheticDecoder(torch, shape, device, dtype)
    params = {**shape.__dict__, "dtype": dtype_name, "batch": 1}
    ms_per_token = (Derived("decode_{mode}_ms_per_token", "ms", False, lambda tok_s: 1000.0 / tok_s),)

    def case(mode: str, op: Callable[[], object]) -> Case:
        derived = tuple(Derived(d.name.format(mode=mode), d.unit, d.higher_is_better, d.convert)
                        for d in ms_per_token)
        return Case(f"decode_{mode}_tok_per_s", "tok/s", True, _per_s(shape.new_tokens, 1.0), op, timer, gpu,
                    params=params, derived=derived)

    cases = [case("eager", model.generate)]
    if device == "cuda":
        model.capture()
        cases.append(case("graph", model.generate_graphed))
    return cases


