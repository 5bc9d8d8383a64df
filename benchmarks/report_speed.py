"""How long `driftcheck report` takes to write report.md for a large snapshot, and how long it is, next
to `python -m torch.utils.collect_env`, the report users otherwise paste into an issue.

The snapshot: benchmarks/diff_speed.py's A (8 recorded H100s, 600 packages with 2,400 compiled files, 300
environment variables). Target: Markdown under 65,536 characters (GitHub's comment limit) in under 1 s.

The other way (issue 21): `driftcheck import` of a 1 MB issue body holding five tools' outputs (real pastes of
tests/data/reports: PyTorch's collect_env, an nvidia-smi table, a pip list, nvcc --version and ibv_devinfo, each
in its fence) and a long log nothing reads, as users paste them. Target: under 1 s.

    python benchmarks/report_speed.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from diff_speed import large_document  # noqa: E402

from driftcheck.reports.markdown import GITHUB_LIMIT  # noqa: E402
from driftcheck.reports.report import write_report  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402


def _time_report(snapshot: Snapshot, repeat: int) -> tuple[float, int, bool]:
    times, length, cut = [], 0, False
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            files = write_report(snapshot, Path(tmp) / "rep")
            times.append(time.perf_counter() - start)
            length, cut = files.length, files.cut
    return statistics.median(times), length, cut


# Five tools' outputs (real pastes) and the log pasted after them, which pads the body to 1 MB.
_OUTPUTS = ("torch_23.txt", "smi_01.txt", "pip/list_quoted_reply.txt", "nvcc/cuda_12_5_risc0_gcc.txt",
            "ib/devinfo_deepep_roce_cut.txt")
_LOG = "trtllm/version_0_11_traceback.txt"
BODY_BYTES = 1_000_000


def issue_body() -> str:
    """A 1 MB issue body: prose, the five outputs each in its fence, then a long traceback log."""
    reports = ROOT / "tests" / "data" / "reports"
    parts = ["Describe the bug: the server is slower than last week. Environment below.\n"]
    for name in _OUTPUTS:
        text = (reports / name).read_text("utf-8")
        text = (text.split("\n", 1)[1] if text.startswith("# source:") else text).replace("```", "")
        parts.append(f"\n<details><summary>{name}</summary>\n\n```text\n{text.strip()}\n```\n</details>\n")
    log = [line for line in (reports / _LOG).read_text("utf-8").splitlines()[2:] if "TensorRT-LLM" not in line]
    body = "".join(parts) + "\nThe log:\n```\n"
    filler = "\n".join(log) + "\n"
    body += filler * ((BODY_BYTES - len(body)) // len(filler) + 1)
    return body[:BODY_BYTES] + "\n```\n"


def _time_import(repeat: int) -> tuple[float, int, int]:
    from driftcheck.reports.importer import import_texts

    body = issue_body()
    times, sources = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        document = import_texts([("body.md", "body.md", body)]).document
        times.append(time.perf_counter() - start)
        sources = len(document["host"]["sources"])
    return statistics.median(times), len(body.encode("utf-8")), sources


def _time_collect_env() -> float | None:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "torch.utils.collect_env"], capture_output=True, check=False)
    return time.perf_counter() - start if done.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    document = large_document()
    snapshot = Snapshot(document, "large")
    seconds, length, cut = _time_report(snapshot, args.repeat)
    n_packages = len(document["probes"]["packages"]["data"]["packages"])
    n_gpus = len(document["probes"]["gpu"]["data"]["gpus"])
    print(f"snapshot: {n_gpus} GPUs, {n_packages} packages, "
          f"{len(document['probes']['kernels']['data']['files'])} compiled files")
    print(f"driftcheck report: {seconds:.3f} s (median of {args.repeat}), report.md {length:,} characters "
          f"(limit {GITHUB_LIMIT:,}; sections cut: {'yes' if cut else 'no'}) -> "
          f"{'OK' if seconds < 1 and length < GITHUB_LIMIT else 'MISSED'} against < 1 s and < {GITHUB_LIMIT:,}")
    took, size, sources = _time_import(args.repeat)
    print(f"driftcheck import of a {size:,}-byte issue body: {took:.3f} s (median of {args.repeat}), "
          f"{sources} sections read -> {took:.2f}x the 1 s target, {'OK' if took < 1 else 'MISSED'}")
    other = _time_collect_env()
    if other is None:
        print("python -m torch.utils.collect_env: not available in this interpreter (no torch)")
    else:
        print(f"python -m torch.utils.collect_env: {other:.3f} s -> report is {other / seconds:.1f}x faster "
              "(and carries the signed snapshot beside it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
