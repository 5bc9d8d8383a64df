"""One run of a suite in this interpreter, for `driftcheck.baselines.repeated`: prints its data as JSON.

Usage (internal): `python -m driftcheck.baselines.one_run '{"suite": "quick", "device": "cpu",
"budget_s": null, "only": []}'`. A driftcheck error is one stderr line and exit 2; anything else
exits 1 with its traceback on stderr, for the parent to report.
"""

from __future__ import annotations

import json
import sys

from driftcheck.errors import DriftcheckError


def main(argv: list[str]) -> int:
    """Run the suite described by the JSON in argv[0]; print the result on stdout."""
    from driftcheck.baselines.deps import BenchDependencyError
    from driftcheck.baselines.repeated import DEPENDENCY_EXIT
    from driftcheck.baselines.runner import run_suite

    try:
        spec = json.loads(argv[0])
        data = run_suite(str(spec["suite"]), str(spec["device"]), spec.get("budget_s"), spec.get("only") or None)
    except BenchDependencyError as exc:
        sys.stderr.write(f"{exc}\n")
        return DEPENDENCY_EXIT
    except DriftcheckError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    sys.stdout.write(json.dumps(data, sort_keys=True, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
