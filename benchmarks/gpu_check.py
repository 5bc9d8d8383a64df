"""Run every CUDA and NVML path of driftcheck once, and write the figures against the reference peaks.

    python benchmarks/gpu_check.py OUTDIR [--budget-s 3] [--force]

Items, in order: the NVML reader against `nvidia-smi -q -x` (the one comparison of
`driftcheck.probes.gpu_sources`), CUDA events, CUDA-graph launch, GEMM bf16 and fp16, device copy,
host<->device copies pinned and pageable, P2P copies (with >= 2 GPUs), NCCL all-reduce over the GPUs
present, the synthetic decode eager and graphed, and the wall time of `driftcheck bench --suite quick`.
Each item is `ok` (with its figures and, where one exists, its ratio to the reference peak and the
target), `skipped` (and why: no driver, no CUDA device, one GPU only) or `failed` (with the error).
Writes OUTDIR/gpu_check.json and OUTDIR/gpu_check.md; it takes a few minutes on a GPU machine and
seconds on a CPU-only one, where every GPU item is skipped with its reason.
Targets (issue "benchmarks that know their own resolution"): bf16 GEMM >= 80% of the measured class
of the model (H200: ~790 TFLOP/s), device copy >= 85% of the memory bandwidth, quick suite <= 15 s.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.baselines.calibrate import CalibrationPolicy, cuda_event_timer  # noqa: E402
from driftcheck.baselines.deps import BenchDependencyError, import_torch  # noqa: E402
from driftcheck.baselines.plans import GPU_DECODE  # noqa: E402
from driftcheck.baselines.references import reference_for  # noqa: E402
from driftcheck.baselines.runner import result_json  # noqa: E402
from driftcheck.baselines.workloads import (  # noqa: E402
    MIB,
    Case,
    allreduce_cases,
    copy_case,
    decode_cases,
    gemm_case,
    host_link_cases,
    launch_cases,
    p2p_cases,
)
from driftcheck.probes.gpu_sources import SourcesUnavailable, compare_sources  # noqa: E402

GEMM_TARGET = 0.80   # of the model's measured bf16 class
COPY_TARGET = 0.85   # of the memory bandwidth
QUICK_TARGET_S = 15.0
ITEMS = ("nvml_vs_nvidia_smi", "cuda_events", "cuda_graph_launch", "gemm_bf16", "gemm_fp16", "device_copy",
         "host_device_copies", "p2p", "nccl_allreduce", "decode_eager_and_graphed", "quick_suite_wall_time")


class Skip(Exception):
    """This item cannot run on this machine; the message says why."""


def _torch() -> Any:
    try:
        torch = import_torch()
    except BenchDependencyError as exc:
        raise Skip(str(exc)) from None
    if not torch.cuda.is_available():
        raise Skip(f"torch {torch.__version__} sees no CUDA device")
    return torch


def _measured(case: Case, budget_s: float, reference: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    entries = result_json(case, case.run(CalibrationPolicy(budget_s=budget_s)), {}, {}, reference)
    return {name: {key: entry.get(key) for key in ("unit", "median", "n", "cv", "ci_low", "ci_high", "efficiency")}
            for name, entry in entries.items()}


def nvml_vs_nvidia_smi(budget_s: float) -> dict[str, Any]:
    try:
        found = compare_sources()
    except SourcesUnavailable as exc:
        raise Skip(str(exc)) from None
    stable = [r for r in found["disagreements"] if not r["volatile"]]
    return {"figures": {k: found[k] for k in ("gpus", "gpus_smi", "driver_version", "nvml_s", "nvidia_smi_s",
                                             "stable_disagreements")},
            "disagreements": found["disagreements"], "passed": not stable and found["gpus"] == found["gpus_smi"]}


def cuda_events(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    timer = cuda_event_timer(torch, 0)
    x = torch.ones(64 * MIB // 4, device="cuda:0")
    seconds = timer(lambda: x.mul_(1.0), 10) / 10
    return {"figures": {"mul_64mib_ms": round(seconds * 1e3, 4)}, "passed": seconds > 0}


def cuda_graph_launch(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    with torch.inference_mode():
        cases = launch_cases(torch, "cuda:0", 0, cuda_event_timer(torch, 0))
        figures = {name: e for case in cases for name, e in _measured(case, budget_s, None).items()}
    graph, eager = figures["launch_graph_us_per_op"]["median"], figures["launch_eager_us_per_op"]["median"]
    return {"figures": figures, "graph_over_eager": round(graph / eager, 3), "passed": graph <= eager}


def _gemm(dtype: str, budget_s: float) -> dict[str, Any]:
    torch = _torch()
    reference = reference_for(torch.cuda.get_device_name(0))
    with torch.inference_mode():
        case = gemm_case(torch, "cuda:0", 0, cuda_event_timer(torch, 0), 8192, dtype)
        figures = _measured(case, budget_s, reference)
    tflops = figures[case.name]["median"]
    out: dict[str, Any] = {"figures": figures}
    measured_class = (reference or {}).get("measured_bf16_tflops")
    if dtype == "bf16" and measured_class:
        out["of_measured_class"] = round(tflops / float(measured_class), 3)
        out["target"] = f">= {GEMM_TARGET:.0%} of {measured_class} TFLOP/s"
        out["passed"] = out["of_measured_class"] >= GEMM_TARGET
    return out


def gemm_bf16(budget_s: float) -> dict[str, Any]:
    return _gemm("bf16", budget_s)


def gemm_fp16(budget_s: float) -> dict[str, Any]:
    return _gemm("fp16", budget_s)


def device_copy(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    reference = reference_for(torch.cuda.get_device_name(0))
    with torch.inference_mode():
        case = copy_case(torch, "cuda:0", 0, cuda_event_timer(torch, 0), 1024 * MIB)
        figures = _measured(case, budget_s, reference)
    out: dict[str, Any] = {"figures": figures}
    eff = figures[case.name]["efficiency"]
    if eff:
        out["target"] = f">= {COPY_TARGET:.0%} of {eff['peak']} GB/s"
        out["passed"] = eff["ratio"] >= COPY_TARGET
    return out


def host_device_copies(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    reference = reference_for(torch.cuda.get_device_name(0))
    figures: dict[str, Any] = {}
    with torch.inference_mode():
        for case in host_link_cases(torch, 0, cuda_event_timer(torch, 0), 256 * MIB, True):
            figures.update(_measured(case, budget_s / 4, reference))
    return {"figures": figures}


def p2p(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    count = torch.cuda.device_count()
    if count < 2:
        raise Skip(f"{count} GPU here; P2P needs two")
    reference = reference_for(torch.cuda.get_device_name(0))
    cases = p2p_cases(torch, count, 256 * MIB)
    if not cases:
        raise Skip(f"{count} GPUs, but no pair can access its peer (torch.cuda.can_device_access_peer)")
    figures: dict[str, Any] = {}
    with torch.inference_mode():
        for case in cases:
            figures.update(_measured(case, budget_s / len(cases), reference))
    return {"figures": figures}


def nccl_allreduce(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    count = torch.cuda.device_count()
    figures: dict[str, Any] = {}
    for case in allreduce_cases(torch, count, [MIB, 64 * MIB, 256 * MIB], "nccl"):
        figures.update(_measured(case, budget_s, None))
    return {"figures": figures, "world": count}


def decode_eager_and_graphed(budget_s: float) -> dict[str, Any]:
    torch = _torch()
    figures: dict[str, Any] = {}
    with torch.inference_mode():
        for case in decode_cases(torch, "cuda:0", 0, cuda_event_timer(torch, 0), GPU_DECODE["quick"], "bf16"):
            figures.update(_measured(case, budget_s / 2, None))
    eager, graphed = figures["decode_eager_tok_per_s"]["median"], figures["decode_graph_tok_per_s"]["median"]
    return {"figures": figures, "graph_over_eager": round(graphed / eager, 3), "passed": graphed >= eager}


def quick_suite_wall_time(budget_s: float) -> dict[str, Any]:
    _torch()
    argv = [sys.executable, "-m", "driftcheck", "bench", "--suite", "quick", "--device", "cuda", "--format", "json"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=180, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "bench failed")
    data = json.loads(done.stdout)
    return {"figures": {"wall_s": round(wall, 2), "suite_elapsed_s": data.get("elapsed_s"),
                        "results": len(data.get("results") or {})},
            "target": f"<= {QUICK_TARGET_S:.0f} s", "passed": wall <= QUICK_TARGET_S}


RUNNERS: dict[str, Callable[[float], dict[str, Any]]] = {
    "nvml_vs_nvidia_smi": nvml_vs_nvidia_smi, "cuda_events": cuda_events, "cuda_graph_launch": cuda_graph_launch,
    "gemm_bf16": gemm_bf16, "gemm_fp16": gemm_fp16, "device_copy": device_copy,
    "host_device_copies": host_device_copies, "p2p": p2p, "nccl_allreduce": nccl_allreduce,
    "decode_eager_and_graphed": decode_eager_and_graphed, "quick_suite_wall_time": quick_suite_wall_time}


def run_item(name: str, budget_s: float) -> dict[str, Any]:
    """One item's outcome: status ok/skipped/failed, seconds, and its figures or the reason."""
    started = time.perf_counter()
    try:
        out = {"status": "ok", **RUNNERS[name](budget_s)}
    except Skip as exc:
        out = {"status": "skipped", "reason": str(exc)}
    except Exception as exc:  # noqa: BLE001 - one failing path must not hide the others' figures
        out = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}",
               "traceback": traceback.format_exc(limit=4)}
    return {"item": name, "seconds": round(time.perf_counter() - started, 2), **out}


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _figures_text(item: dict[str, Any]) -> str:
    parts = []
    for name, value in (item.get("figures") or {}).items():
        if isinstance(value, dict) and "median" in value:
            text = f"{name} {_cell(value['median'])} {value.get('unit') or ''}".rstrip()
            eff = value.get("efficiency")
            if eff:
                text += f" ({eff['ratio'] * 100:.0f}% of {eff['model']} {eff['reference']} {eff['peak']:g})"
            parts.append(text)
        else:
            parts.append(f"{name} {_cell(value)}")
    for key in ("of_measured_class", "graph_over_eager"):
        if key in item:
            parts.append(f"{key} {item[key]}")
    return "; ".join(parts)


def markdown(report: dict[str, Any]) -> str:
    """The Markdown table of the report: one row per item, figures against the reference peaks."""
    lines = [f"# driftcheck GPU check ({report['device']})", "",
             f"{report['host']['python']} · torch {report['torch'] or 'not importable'} · "
             f"{report['started_at']} · {report['seconds']:.0f} s", "",
             "| item | status | figures (vs reference peak) | target | s |", "|---|---|---|---|---|"]
    for item in report["items"]:
        if item["status"] == "ok":
            figures = _figures_text(item)
            target = item.get("target", "")
            if "passed" in item:
                target = f"{target} {'met' if item['passed'] else 'MISSED'}".strip()
        else:
            figures, target = item.get("reason", ""), ""
        lines.append(f"| {item['item']} | {item['status']} | {figures.replace('|', '/')} | {target} | "
                     f"{item['seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="directory for gpu_check.json and gpu_check.md (created)")
    parser.add_argument("--budget-s", type=float, default=3.0, help="measurement budget of each item")
    parser.add_argument("--force", action="store_true", help="overwrite the files of an earlier check")
    args = parser.parse_args(argv)
    targets = [args.outdir / "gpu_check.json", args.outdir / "gpu_check.md"]
    if args.outdir.exists() and not args.outdir.is_dir():
        parser.error(f"{args.outdir} is not a directory")
    if any(t.exists() for t in targets) and not args.force:
        parser.error(f"{args.outdir} already holds a GPU check; pass --force to overwrite it")
    args.outdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        torch = import_torch()
        torch_version, device = str(torch.__version__), (torch.cuda.get_device_name(0)
                                                         if torch.cuda.is_available() else "no CUDA device")
    except BenchDependencyError:
        torch_version, device = None, "torch not importable"
    report: dict[str, Any] = {"started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": device,
                              "torch": torch_version, "host": {"python": platform.python_version(),
                                                               "machine": platform.machine()},
                              "items": []}
    for name in ITEMS:
        item = run_item(name, args.budget_s)
        report["items"].append(item)
        print(f"{name}: {item['status']} ({item['seconds']:.1f} s)"
              + (f" - {item['reason']}" if item.get("reason") else ""), file=sys.stderr, flush=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    targets[0].write_text(json.dumps(report, indent=2, sort_keys=True, default=str) + "\n", "utf-8")
    targets[1].write_text(markdown(report), "utf-8")
    print(f"wrote {targets[0]} and {targets[1]} in {report['seconds']:.0f} s")
    return 1 if any(item["status"] == "failed" for item in report["items"]) else 0


if __name__ == "__main__":
    sys.exit(main())
