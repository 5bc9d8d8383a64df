"""What a snapshot over SSH costs against the same snapshot taken locally, and what a fleet costs.

Starts a real sshd on 127.0.0.1 (temporary host key, a generated client key, a free port; needs
root, as in the tests), then measures on this machine:
  1. a local snapshot (what a user runs on the box itself) and the same probes over SSH through
     loopback, warm (hash cache filled by a first run of each), with the SSH round trips counted;
     targets: remote at most 2x local, at most 10 round trips;
  2. `fleet` over 1 host alias and over 32 aliases of the same sshd, concurrency 32;
     target: 32 aliases in under 3x the time of one.
Loopback has no network latency, and every "remote" host is this same machine: 32 aliases share
its CPUs, so the fleet figure measures driftcheck's fan-out plus 32 times the remote work on the
same cores. Timings are disturbed by whatever else runs here; repeat on a quiet machine.

    python benchmarks/remote_speed.py [--repeat N] [--probe NAME ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from driftcheck.hosts import LocalHost  # noqa: E402
from driftcheck.hosts.targets import host_for  # noqa: E402
from driftcheck.probes import builtin_probes, select_probes  # noqa: E402
from driftcheck.probes.prober import Prober  # noqa: E402
from driftcheck.probes.redact import Redactor  # noqa: E402
from driftcheck.remote.fleet import snapshot_fleet  # noqa: E402
from driftcheck.snapshot.keys import load_signing_key  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402
from tests.remote.sshd import SSHD, Sshd, client_home, keygen, start_sshd  # noqa: E402

FLEET_SIZE = 32


def _probes(only: list[str] | None) -> list[Any]:
    return select_probes(builtin_probes(Redactor(b"benchmark")), only, None)


def _local(only: list[str] | None) -> tuple[float, Snapshot]:
    started = time.perf_counter()
    snapshot = Prober(LocalHost(), Redactor(b"benchmark"), load_signing_key()).snapshot(_probes(only))
    return time.perf_counter() - started, snapshot


def _remote(alias: str, only: list[str] | None, python: str) -> tuple[float, int, Snapshot]:
    started = time.perf_counter()
    with host_for(alias, python) as host:
        snapshot = Prober(host, Redactor(b"benchmark"), load_signing_key()).snapshot(_probes(only))
        trips = getattr(host, "round_trips", 0)
    return time.perf_counter() - started, trips, snapshot


def _fleet(aliases: list[str], only: list[str] | None, python: str) -> tuple[float, int]:
    started = time.perf_counter()
    results = snapshot_fleet(aliases, lambda alias: _remote(alias, only, python)[2], concurrency=FLEET_SIZE)
    return time.perf_counter() - started, sum(1 for r in results.values() if r.snapshot is None)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each measurement (median kept)")
    parser.add_argument("--probe", action="append", help="only these probes (default: the default set)")
    parser.add_argument("--fleet-probe", action="append",
                        help="probes for the fleet measurement (default: same as --probe)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not Path(SSHD).is_file():
        print(f"no sshd at {SSHD}: install openssh-server to run this benchmark")
        return 0
    work = Path(tempfile.mkdtemp(prefix="driftcheck-remote-speed-"))
    os.environ["DRIFTCHECK_HOME"] = str(work / "home")
    os.environ.pop("SSH_AUTH_SOCK", None)
    key = keygen(work / "client_key")
    server: Sshd = start_sshd(work / "sshd", key)
    try:
        aliases = [f"host{i:02d}" for i in range(1, FLEET_SIZE + 1)]
        os.environ["HOME"] = str(client_home(work / "client", key, {alias: server for alias in aliases}))
        python = sys.executable
        # Warm-up: fills the hash cache (shared by both, it is the same machine) and the page cache.
        _local(args.probe)
        _remote(aliases[0], args.probe, python)
        local = [_local(args.probe)[0] for _ in range(args.repeat)]
        remote_runs = [_remote(aliases[0], args.probe, python) for _ in range(args.repeat)]
        remote = [t for t, _, _ in remote_runs]
        trips = max(n for _, n, _ in remote_runs)
        fleet_probes = args.fleet_probe or args.probe
        one = [_fleet(aliases[:1], fleet_probes, python)[0] for _ in range(args.repeat)]
        many_runs = [_fleet(aliases, fleet_probes, python) for _ in range(args.repeat)]
        many = [t for t, _ in many_runs]
        failed = max(f for _, f in many_runs)
    finally:
        server.stop()
    figures = {
        "local_s": round(_median(local), 3), "remote_s": round(_median(remote), 3),
        "remote_over_local": round(_median(remote) / _median(local), 2), "round_trips": trips,
        "fleet_1_s": round(_median(one), 3), f"fleet_{FLEET_SIZE}_s": round(_median(many), 3),
        f"fleet_{FLEET_SIZE}_over_1": round(_median(many) / _median(one), 2), "fleet_failures": failed,
        "cpus": os.cpu_count(), "probes": args.probe or "default", "fleet_probes": fleet_probes or "default",
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"snapshot, local:           {figures['local_s']:.2f} s (median of {args.repeat})")
    print(f"snapshot, over SSH:        {figures['remote_s']:.2f} s in {trips} round trips")
    print(f"  remote / local:          {figures['remote_over_local']:.2f}x   (target <= 2x, <= 10 round trips)")
    print(f"fleet, 1 host:             {figures['fleet_1_s']:.2f} s")
    print(f"fleet, {FLEET_SIZE} aliases:        {figures[f'fleet_{FLEET_SIZE}_s']:.2f} s ({failed} failed)")
    print(f"  {FLEET_SIZE} / 1:                  {figures[f'fleet_{FLEET_SIZE}_over_1']:.2f}x   (target < 3x)")
    print(f"note: every alias is this machine ({os.cpu_count()} CPUs, shared with other work), so the fleet "
          f"runs {FLEET_SIZE} hosts' probing on the same cores; timings are disturbed by other load here.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
