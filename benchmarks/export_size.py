"""What `driftcheck export prometheus` adds to a node's scrape: the textfile of an 8-GPU snapshot, its size and
series count, next to what the node_exporter that carries it already exports on its own.

The snapshot: benchmarks/diff_speed.py's A (8 recorded H100s, 600 packages, 300 environment variables), with a
check verdict (drift, two cause categories) as `--against` adds. The comparison: a real node_exporter (Debian's
`prometheus-node-exporter`) started on loopback with its default collectors, scraped once; its series are what a
fleet already stores per node and per scrape. Prints bytes, series, the time to build and write the textfile, and
the ratio of our series to node_exporter's own. (Issue 34's note asks for the textfile's size and series count.)

    python benchmarks/export_size.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from diff_speed import large_document  # noqa: E402

from driftcheck.reports.drift_verdict import DriftVerdict  # noqa: E402
from driftcheck.reports.env_digest import family_digests  # noqa: E402
from driftcheck.reports.prometheus import all_metrics, exposition, write_textfile  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402


def series_in(text: str) -> int:
    """Samples in a text exposition: every line that is neither a comment nor blank."""
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


def node_exporter_series() -> int | None:
    """Series a real node_exporter with its default collectors exports here (None when it is not installed)."""
    binary = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if binary is None:
        return None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([binary, f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
                    return series_in(reply.read().decode("utf-8", "replace"))
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    return None
                time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    snapshot = Snapshot(large_document(), "large")
    verdict = DriftVerdict("baseline:golden", True, time.time(), {"gpu": 2, "env": 1},
                           "GPU power limit changed 700 -> 500 W")
    times, size, series = [], 0, 0
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            families = all_metrics(snapshot, verdict, family_digests(snapshot, b"k" * 32))
            path = write_textfile(Path(tmp), families)
            times.append(time.perf_counter() - start)
            text = path.read_text("utf-8")
            size, series = len(text.encode("utf-8")), series_in(text)
            assert exposition(families).decode("utf-8") == text
    gpus = len(snapshot.probe_data("gpu").get("gpus") or {})
    print(f"driftcheck.prom of {gpus} GPUs' snapshot with a check: {size:,} bytes, {series} series, "
          f"built and written in {statistics.median(times) * 1000:.1f} ms (median of {args.repeat})")
    theirs = node_exporter_series()
    if theirs is None:
        print("node_exporter: not installed here, no comparison")
        return 0
    print(f"node_exporter's own scrape here (default collectors): {theirs} series; "
          f"driftcheck adds {series / theirs:.2f}x of that ({series / (series + theirs):.0%} of the node's scrape)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
