"""All-reduce bus bandwidth across the local GPUs: torch.distributed, one process per device.

Rank 0 runs the calibration and broadcasts its decision (batch size, stop) after every sample, so
all ranks execute the same number of collectives. A sample is the slowest rank's time (a collective
is as fast as its last participant). The same code runs with the gloo backend on CPU processes,
which is how it is tested on machines without GPUs.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from driftcheck.baselines.calibrate import CalibrationPolicy, Calibrator, Measurement


def bus_bandwidth_gbps(size_bytes: int, seconds: float, world: int) -> float:
    """nccl-tests' bus bandwidth of an all-reduce: algbw · 2(n−1)/n, in GB/s (10^9 bytes)."""
    if seconds <= 0 or world < 1:
        raise ValueError("need a positive time and at least one rank")
    algbw = size_bytes / seconds / 1e9
    return algbw * 2.0 * (world - 1) / world


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _timed_allreduce(torch: Any, dist: Any, tensor: Any, inner: int, on_gpu: bool) -> float:
    dist.barrier()
    if on_gpu:
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            dist.all_reduce(tensor)
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end)) / 1000.0
    began = time.perf_counter()
    for _ in range(inner):
        dist.all_reduce(tensor)
    return time.perf_counter() - began


def _worker(rank: int, world: int, port: int, backend: str, sizes: list[int], policy: dict[str, Any],
            out_path: str) -> None:
    import torch
    import torch.distributed as dist

    on_gpu = backend == "nccl"
    if on_gpu:
        torch.cuda.set_device(rank)
    device = f"cuda:{rank}" if on_gpu else "cpu"
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    results: dict[str, Any] = {}
    try:
        for size in sizes:
            tensor = torch.ones(max(1, size // 4), dtype=torch.float32, device=device)
            calibrator = Calibrator(CalibrationPolicy(**policy))
            control = torch.zeros(2, dtype=torch.int64, device=device)
            slowest = torch.zeros(1, dtype=torch.float64, device=device)
            inner = 1
            while True:
                slowest.fill_(_timed_allreduce(torch, dist, tensor, inner, on_gpu))
                dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
                if rank == 0:
                    calibrator.record(float(slowest.item()) / inner)
                    control[0], control[1] = calibrator.inner, int(calibrator.finished)
                dist.broadcast(control, 0)
                inner = int(control[0].item())
                if int(control[1].item()):
                    break
            if rank == 0:
                results[str(size)] = {"samples_s": calibrator.samples_s, "report": calibrator.report()}
    finally:
        dist.destroy_process_group()
    if rank == 0:
        Path(out_path).write_text(json.dumps(results), "utf-8")


def allreduce_measurements(torch: Any, sizes: list[int], world: int, backend: str,
                           policy: CalibrationPolicy) -> dict[int, Measurement]:
    """Seconds per all-reduce of each size (bytes of float32), over `world` local processes."""
    with tempfile.TemporaryDirectory(prefix="driftcheck-allreduce-") as tmp:
        out_path = os.path.join(tmp, "rank0.json")
        torch.multiprocessing.spawn(_worker, args=(world, _free_port(), backend, sizes, asdict(policy), out_path),
                                    nprocs=world, join=True)
        raw = json.loads(Path(out_path).read_text("utf-8"))
    return {int(size): Measurement(entry["samples_s"], entry["report"]) for size, entry in raw.items()}
