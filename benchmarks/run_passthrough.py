"""`driftcheck run`'s pass-through: a command that prints a large benchmark log, alone and under `run`.

Prints both wall times (the whole `driftcheck run` includes its two cheap snapshots, so the command's own
duration from its run record is shown too), the ratio of the command's duration under run to alone, and the
ratio of the whole run to the command alone (issue 35's target: within 1.5x for 100 MiB). The first run is in a
fresh store (it makes the keys, and hashes every kernel library the snapshot reads); a second run in the same
store is what a user pays on every run after that, and is printed beside it.
Run from the repository root: `python benchmarks/run_passthrough.py [--mib 100]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = "step {i}: loss 2.3145 lr 3.0e-4 throughput 1234.5 tok/s elapsed 0.0231 s " + "x" * 40 + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mib", type=int, default=100, help="MiB of log the command prints")
    args = parser.parse_args()
    lines = args.mib * 1024 * 1024 // len(LINE.format(i=0))
    code = (f"import sys\nw = sys.stdout.write\nfor i in range({lines}): w({LINE!r}.format(i=i))\n"
            "print('Output token throughput (tok/s): 94.1')")
    command = [sys.executable, "-c", code]
    home = tempfile.mkdtemp(prefix="driftcheck-passthrough-")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DRIFTCHECK_HOME": home}
    with open(os.devnull, "wb") as sink:
        started = time.perf_counter()
        subprocess.run(command, stdout=sink, check=True)
        alone = time.perf_counter() - started
        wholes = []
        for _ in range(2):  # a fresh store, then the same store again
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "driftcheck", "run", "-q", "--", *command], stdout=sink,
                           check=True, env=env)
            wholes.append(time.perf_counter() - started)
    listed = subprocess.run([sys.executable, "-m", "driftcheck", "runs", "--format", "json"], capture_output=True,
                            text=True, check=True, env=env)
    records = json.loads(listed.stdout)  # newest first
    first, second = float(records[1]["duration_s"]), float(records[0]["duration_s"])
    record = records[0]
    print(f"log printed:               {args.mib} MiB ({lines} lines)")
    print(f"command alone:             {alone:.2f} s")
    for name, recorded, whole in (("fresh store", first, wholes[0]), ("warm store", second, wholes[1])):
        print(f"{name}:")
        print(f"  command under run:       {recorded:.2f} s as recorded ({whole:.2f} s for the whole run, "
              "snapshots incl.)")
        print(f"  ratio (under run / alone): {recorded / alone:.2f}")
        print(f"  ratio (whole run / alone): {whole / alone:.2f}  (target <= 1.5)")
    print(f"figures read:              {sorted(m.get('name') for m in record.get('metrics', []))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
