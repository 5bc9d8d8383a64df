"""Are the inputs that were quadratic now linear? The time of each at 1 MB and at 10 MB (issue 31).

The cases, as the issue measured them on main before the fix:
- redaction of one long token-like value (`Redactor.text`, every snapshot, record, paste and error message
  passes it): a long alphanumeric run, a long `a=a=a=...`, a long `-a-a-a...`, a long `user:pw@` run;
- `import` of a pasted report holding one long line (a real collect-env output, tests/data/reports/vllm_10.txt,
  with the long line after it) and one holding a long run of blank lines;
- `diff` + `explain` of two snapshots whose one changed value is a long string (the fix text it lands in was
  read by shlex a character at a time).

Each case runs once at each size in this process (a second pass at 10 MB would only repeat the first), and
the ratio 10 MB / 1 MB is printed: about 10 is linear, about 100 quadratic. DRIFTCHECK_HOME points at a
temporary directory, so the user's redaction secret is never read.

    python benchmarks/hostile_scaling.py [--sizes 1000000,10000000] [--only redact,import,diff]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.analysis.diff import diff_snapshots  # noqa: E402
from driftcheck.analysis.explain import explain  # noqa: E402
from driftcheck.probes.redact import Redactor  # noqa: E402
from driftcheck.reports.importer import import_texts  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402

REPORT = ROOT / "tests" / "data" / "reports" / "vllm_10.txt"


def _redaction_cases(size: int) -> dict[str, Callable[[], object]]:
    redactor = Redactor(b"k" * 32)
    values = {"alphanumeric run": "a" * size, "a=a=a=...": "a=" * (size // 2), "-a-a-a...": "-a" * (size // 2),
              "user:pw@ run": "a:b@" * (size // 4), "quoted key values": 'password: "\\' * (size // 12)}
    return {f"redact {name}": (lambda v=value: redactor.text(v)) for name, value in values.items()}


def _import_cases(size: int) -> dict[str, Callable[[], object]]:
    report = REPORT.read_text("utf-8")
    long_line = report + "\n" + "x" * size + "\n"
    blank_lines = report.replace("\n", "\n" + "\n" * (size // 25), 1)  # 40,000 blank lines per MB, near the top
    return {"import one long line": lambda: import_texts([("paste", "paste", long_line)]),
            f"import {size // 25} blank lines": lambda: import_texts([("paste", "paste", blank_lines)])}


def _diff_documents(size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    base: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "pairs" / "base.json").read_text("utf-8"))
    base.pop("signature", None)
    a = copy.deepcopy(base)
    a["probes"]["env"]["data"]["vars"]["LONG_VALUE"] = "v" * size
    b = copy.deepcopy(a)
    b["probes"]["env"]["data"]["vars"]["LONG_VALUE"] = "w" * size
    return a, b


def _diff_cases(size: int) -> dict[str, Callable[[], object]]:
    a, b = _diff_documents(size)

    def run() -> object:
        report = explain(diff_snapshots(Snapshot(a, source="a"), Snapshot(b, source="b")))
        return json.dumps([e.fix for e in report.explanations])

    return {"diff + explain, one long value": run}


CASES: dict[str, Callable[[int], dict[str, Callable[[], object]]]] = {
    "redact": _redaction_cases, "import": _import_cases, "diff": _diff_cases}


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="value sizes in bytes (default 1 MB, 10 MB)")
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as home:
        os.environ["DRIFTCHECK_HOME"] = home
        times: dict[str, dict[int, float]] = {}
        for family in args.only.split(","):
            for size in sizes:
                for name, run in CASES[family](size).items():
                    times.setdefault(name.replace(str(size // 25), "N/25"), {})[size] = _timed(run)
    header = "".join(f"{size / 1e6:>10g} MB" for size in sizes)
    print(f"{'case':<40}{header}   ratio last/first")
    for name, by_size in times.items():
        cells = "".join(f"{by_size[size]:>11.2f}s" for size in sizes)
        ratio = by_size[sizes[-1]] / max(by_size[sizes[0]], 1e-9)
        print(f"{name:<40}{cells}   {ratio:>6.1f}")


if __name__ == "__main__":
    main()
