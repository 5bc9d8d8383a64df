"""One run of a suite in this interpreter, for `driftcheck.baselines.repeated`: replies with its data.

Started through the child protocol (`driftcheck.hosts.child`) with the request
`{"suite": "quick", "device": "cpu", "budget_s": null, "only": []}`; an error comes back by its type
name, message and exit code, for the parent to raise as it would have here.
"""

from __future__ import annotations

import sys
from typing import Any

from driftcheck.baselines.record import BenchRecord
from driftcheck.hosts.child import serve


def run(spec: dict[str, Any]) -> BenchRecord:
    """Run the suite `spec` describes; its data."""
    from driftcheck.baselines.runner import run_suite

    return run_suite(str(spec["suite"]), str(spec["device"]), spec.get("budget_s"), spec.get("only") or None)


if __name__ == "__main__":
    sys.exit(serve(run, sort_keys=True, as_text=True))
