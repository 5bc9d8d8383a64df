"""The benchmark suites: which workloads run on which device at which size, and running them.

Each benchmark reports its unit in its name (`gemm_fp32_1024_gflops`). Sizes are fixed per suite
and device, so two runs of a suite measure the same work: the quick CPU suite is sized for a 2-core
machine within 30 s, the quick GPU suite for one GPU within 15 s; `standard` and `full` add every
GPU, both copy directions, P2P pairs and all-reduce, with larger budgets.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from driftcheck.baselines.calibrate import CalibrationPolicy, Measurement, Timer, cuda_event_timer, measure, wall_timer
from driftcheck.baselines.clocks import device_state
from driftcheck.baselines.decode import DecoderShape, SyntheticDecoder
from driftcheck.baselines.deps import import_torch
from driftcheck.baselines.distributed import allreduce_measurements, bus_bandwidth_gbps
from driftcheck.baselines.load import OtherLoad, load_report, load_warning
from driftcheck.baselines.references import efficiency, reference_for
from driftcheck.baselines.stats import summarize
from driftcheck.errors import UsageError

SUITES = ("quick", "standard", "full")
DEVICES = ("auto", "cpu", "cuda")
# Total time budget of each suite, seconds; spread evenly over its benchmarks.
SUITE_BUDGET_S = {"cpu": {"quick": 22.0, "standard": 120.0, "full": 480.0},
                  "cuda": {"quick": 12.0, "standard": 150.0, "full": 540.0}}
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

    def run(self, policy: CalibrationPolicy) -> Measurement:
        if self.runner is not None:
            return self.runner(policy)
        if self.op is None:
            raise ValueError(f"benchmark {self.name} has nothing to run")
        return measure(self.op, self.timer, policy)


def _per_s(work: float, scale: float) -> Callable[[float], float]:
    return lambda seconds: work / seconds / scale


# --- workloads --------------------------------------------------------------------------------------

def _launch_cases(torch: Any, device: str, gpu: int | None, timer: Timer) -> list[Case]:
    x = torch.zeros(1, device=device)

    def eager() -> None:
        for _ in range(LAUNCH_OPS):
            x.add_(1.0)

    params = {"ops": LAUNCH_OPS, "op": "add_ on a 1-element tensor"}
    cases = [Case("launch_eager_us_per_op", "us", False, lambda s: s / LAUNCH_OPS * 1e6, eager, timer, gpu,
                  params=params)]
    if device == "cuda":
        graph = _capture(torch, eager)
        cases.append(Case("launch_graph_us_per_op", "us", False, lambda s: s / LAUNCH_OPS * 1e6, graph.replay,
                          timer, gpu, params=params))
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


def _copy_case(torch: Any, device: str, gpu: int | None, timer: Timer, size_bytes: int) -> Case:
    src = torch.ones(size_bytes // 4, device=device)
    dst = torch.empty_like(src)
    moved = 2.0 * size_bytes  # read + write
    return Case(f"device_copy_{size_bytes // MIB}mib_gbps", "GB/s", True, _per_s(moved, 1e9),
                lambda: dst.copy_(src), timer, gpu, peak_kind="memory_gbps" if device == "cuda" else None,
                params={"bytes": size_bytes, "counted": "read+write"})


def _host_link_cases(torch: Any, gpu: int, timer: Timer, size_bytes: int, pageable: bool) -> list[Case]:
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


def _p2p_cases(torch: Any, count: int, size_bytes: int) -> list[Case]:
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


# --- plans --------------------------------------------------------------------------------------------

CPU_DECODE = {"quick": DecoderShape(hidden=512, layers=4, heads=8, ffn=1408, vocab=4096, max_len=64, new_tokens=16),
              "standard": DecoderShape(hidden=1024, layers=8, heads=16, ffn=2816, vocab=8192, max_len=128,
                                       new_tokens=64),
              "full": DecoderShape(hidden=2048, layers=8, heads=16, ffn=5632, vocab=16384, max_len=256,
                                   new_tokens=64)}
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
        partial(_launch_cases, torch, "cpu", None, t),
        listed(gemm_case, 1024, "fp32"),
        listed(skinny_case, 4, 4096, "fp32"),
        listed(_copy_case, 64 * MIB),
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
    return [_copy_case(torch, dev, gpu, timer, 1024 * MIB)]


def gpu_plan(torch: Any, suite: str) -> list[Callable[[], list[Case]]]:
    """The GPU benchmarks of `suite`: GPU 0 alone for quick, every GPU and pair for standard and full."""
    count = torch.cuda.device_count()
    gpus = [0] if suite == "quick" else list(range(count))
    plan: list[Callable[[], list[Case]]] = []
    for gpu in gpus:
        dev = f"cuda:{gpu}"
        t = cuda_event_timer(torch, gpu)
        plan += [
            partial(_on_gpu, torch, gpu, partial(_launch_cases, torch, dev, gpu, t)),
            partial(_on_gpu, torch, gpu, partial(_gemms, torch, dev, gpu, t, ("bf16",) if suite == "quick"
                                                 else ("bf16", "fp16"))),
            partial(_on_gpu, torch, gpu, partial(_skinnies, torch, dev, gpu, t, (1,) if suite == "quick"
                                                 else (1, 4, 8))),
            partial(_on_gpu, torch, gpu, partial(_copies, torch, dev, gpu, t)),
            partial(_on_gpu, torch, gpu, partial(_host_link_cases, torch, gpu, t, 256 * MIB, suite != "quick")),
        ]
        if gpu == 0:
            plan.append(partial(_on_gpu, torch, gpu, partial(decode_cases, torch, dev, gpu, t, GPU_DECODE[suite],
                                                             "bf16")))
    if suite != "quick" and count > 1:
        plan.append(lambda: _p2p_cases(torch, count, 256 * MIB))
        plan.append(lambda: allreduce_cases(torch, count, [MIB, 64 * MIB, 256 * MIB], "nccl"))
    return plan


# --- running ------------------------------------------------------------------------------------------

def resolve_device(torch: Any, device: str) -> str:
    """`auto` → cuda when torch sees a GPU, else cpu; `cuda` without one is a UsageError."""
    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r}; choose from {', '.join(DEVICES)}")
    has_cuda = bool(torch.cuda.is_available())
    if device == "auto":
        return "cuda" if has_cuda else "cpu"
    if device == "cuda" and not has_cuda:
        raise UsageError("--device cuda: torch sees no CUDA device here (torch "
                         f"{torch.__version__}); use --device cpu")
    return device


def result_json(case: Case, measurement: Measurement, before: dict[str, Any], after: dict[str, Any],
                reference: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The entries (the case and its derived views) of `probes.bench.data.results` for one measurement."""
    values = [case.value_of(s) for s in measurement.samples_s]
    summary = summarize(values)
    common = {"params": case.params, "calibration": measurement.report, "clocks_before": before,
              "clocks_after": after, "gpu_index": case.gpu_index}
    entries = {case.name: {"unit": case.unit, "higher_is_better": case.higher_is_better, **summary.to_json(),
                           "samples": values, **common,
                           "efficiency": efficiency(reference, case.peak_kind, summary.median, case.peak_scale)}}
    for view in case.derived:
        derived_values = [view.convert(v) for v in values]
        entries[view.name] = {"unit": view.unit, "higher_is_better": view.higher_is_better,
                              **summarize(derived_values).to_json(), "samples": derived_values, **common,
                              "efficiency": None}
    return entries


ProgressFn = Callable[[str, dict[str, Any]], None]


def run_suite(suite: str = "quick", device: str = "auto", budget_s: float | None = None,
              only: Sequence[str] | None = None, progress: ProgressFn | None = None) -> dict[str, Any]:
    """Run a suite; returns the `bench` probe's data (see docs/data-shapes.md).

    `budget_s` replaces the suite's total time budget (small values make a fast smoke run); `only`
    keeps the benchmarks whose name contains one of its strings.
    """
    if suite not in SUITES:
        raise UsageError(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
    if budget_s is not None and budget_s <= 0:
        raise UsageError("--budget-s must be positive")
    torch = import_torch()
    resolved = resolve_device(torch, device)
    started = time.monotonic()
    meter = OtherLoad()
    plan = gpu_plan(torch, suite) if resolved == "cuda" else cpu_plan(torch, suite)
    total_budget = budget_s if budget_s is not None else SUITE_BUDGET_S[resolved][suite]
    device_name = torch.cuda.get_device_name(0) if resolved == "cuda" else "cpu"
    reference = reference_for(device_name) if resolved == "cuda" else None
    results: dict[str, Any] = {}
    skipped: list[str] = []
    remaining_groups = len(plan)
    with torch.inference_mode():
        for build in plan:
            cases = [c for c in build() if not only or any(s in c.name for s in only)]
            remaining_groups -= 1
            left = total_budget - (time.monotonic() - started)
            for index, case in enumerate(cases):
                share = max(left, 0.0) / (remaining_groups + 1) / (len(cases) - index)
                if share <= 0.0:
                    skipped += [case.name, *(view.name for view in case.derived)]
                    continue
                policy = CalibrationPolicy(budget_s=share)
                before = device_state(resolved, case.gpu_index)
                case_started = time.monotonic()
                measurement = case.run(policy)
                after = device_state(resolved, case.gpu_index)
                entries = result_json(case, measurement, before, after, reference)
                results.update(entries)
                left -= time.monotonic() - case_started
                if progress:
                    for name, entry in entries.items():
                        progress(name, entry)
    machine_load = load_report(meter)
    warning = load_warning(machine_load)
    return {"suite": suite, "device": resolved, "device_name": device_name,
            "torch_version": str(torch.__version__), "threads": int(torch.get_num_threads()),
            "budget_s": total_budget, "elapsed_s": round(time.monotonic() - started, 3),
            "reference": reference, "skipped": skipped, "machine_load": machine_load,
            "warnings": [warning] if warning else [], "results": results}
