"""`driftcheck fleet`."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from driftcheck.analysis.fleet_bench_render import render_measured_markdown, render_measured_text
from driftcheck.analysis.peers_render import render_markdown, render_text
from driftcheck.api import BenchRequest
from driftcheck.api.catalog import BENCH_SUITES
from driftcheck.api.fleet import (
    DEFAULT_BENCH_CONCURRENCY,
    DEFAULT_BENCH_RUNS,
    DEFAULT_CONCURRENCY,
    DEFAULT_HOST_TIMEOUT_S,
    FleetProgress,
    FleetResult,
    HostResult,
    fleet,
    remote_driftcheck_command,
    slurm_driftcheck_command,
)
from driftcheck.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_TROUBLE,
    SNAPSHOT_REF_HELP,
    add_budget,
    add_format,
    add_label,
    add_no_store,
    add_probe_selection,
    add_python,
    add_quiet,
    add_require_trusted,
    add_runs,
    add_ssh_login,
    flag_terms,
    positive_float,
    positive_int,
)
from driftcheck.errors import UsageError
from driftcheck.snapshot.printable import printable


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck fleet`, its handler and the check of its options."""
    p.description = ("Snapshot many hosts at once over SSH (or every node of a Slurm allocation with --slurm), keep "
                     "each snapshot, and print a peer report: for every fact not identical across the hosts, the "
                     "majority value and the outliers, ranked by how likely they move performance. With --bench, "
                     "every host also runs the calibrated benchmark suite and is compared with the others' figures "
                     "(slow or fast only where the statistics decide). A host that fails is reported and the others "
                     "are still compared. Exit 0 uniform, 1 outliers (configuration or measured), 2 trouble (a host "
                     "failed, its bench failed, or bad input).")
    p.epilog = ("Hosts: [user@]host[:port], ~/.ssh/config aliases, and Slurm hostlist expressions such as gpu[01-16]. "
                "With --slurm, arguments after `--` go to srun (e.g. `driftcheck fleet --slurm -- -N 16 -p gpu`), "
                "and driftcheck must be installed on the nodes. --bench needs driftcheck and torch on every host: "
                "over SSH each host runs `PYTHON -m driftcheck snapshot --bench ...` (--driftcheck to change it).")
    p.add_argument("hosts", nargs="*", metavar="HOST",
                   help="hosts or hostlist expressions (with --slurm: srun arguments, after --)")
    p.add_argument("--hosts-file", type=Path, metavar="FILE",
                   help="more hosts, one or more per line (hostlist expressions too); # starts a comment")
    p.add_argument("--slurm", action="store_true",
                   help="snapshot every node of the allocation through `srun --ntasks-per-node=1` instead of SSH")
    p.add_argument("--driftcheck", metavar="CMD",
                   help="with --slurm: how the nodes start driftcheck "
                        f"(default: {' '.join(slurm_driftcheck_command())}); with --bench over SSH: how each host "
                        f"starts it to measure (default: {' '.join(remote_driftcheck_command('PYTHON'))}, PYTHON "
                        "from --python); split into words as a shell would (quote a path with spaces)")
    add_python(p, "the interpreter whose packages matter on each host (default python3; with --slurm: "
                  "driftcheck's own on the node)")
    add_ssh_login(p, plural=True)
    p.add_argument("--concurrency", type=positive_int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"hosts snapshotted at once (default {DEFAULT_CONCURRENCY})")
    p.add_argument("--host-timeout", type=positive_float, default=DEFAULT_HOST_TIMEOUT_S, metavar="S",
                   help=f"give up on a host after this many seconds (default {DEFAULT_HOST_TIMEOUT_S:g})")
    add_probe_selection(p)
    p.add_argument("--bench", action="store_true",
                   help="also run the calibrated benchmark suite on every host and name the hosts that measure "
                        "slower or faster than the rest of the fleet (with 3 hosts or more)")
    p.add_argument("--bench-suite", choices=BENCH_SUITES, metavar="SUITE",
                   help=f"with --bench: the suite ({', '.join(BENCH_SUITES)}; default quick)")
    # `--runs`, as every command that runs the benchmarks names them (one name per concept).
    add_runs(p, help=f"with --bench: independent runs on each host (default {DEFAULT_BENCH_RUNS}, the fewest that "
                     "measure a host's run-to-run spread)")
    p.add_argument("--bench-concurrency", type=positive_int, metavar="K",
                   help=f"with --bench over SSH: hosts measuring at once, apart from --concurrency (default "
                        f"{DEFAULT_BENCH_CONCURRENCY}: hosts that share hardware, such as VMs or containers on one "
                        "machine, would slow each other's benchmarks and be judged by it; raise it only for hosts "
                        "that share nothing). With --slurm every node measures at once, inside its own snapshot")
    add_budget(p)
    p.add_argument("--against", metavar="REF",
                   help=f"compare every host with this snapshot instead of the majority ({SNAPSHOT_REF_HELP})")
    add_format(p, ("text", "markdown", "json"))
    p.add_argument("--all", action="store_true",
                   help="list differences of no known effect one by one instead of folding them into one line")
    add_no_store(p, "do not keep the hosts' snapshots in the store")
    add_label(p, "a note kept with every snapshot")
    add_quiet(p)
    add_require_trusted(p, "the --against snapshot or (with --slurm) a node's snapshot")
    p.set_defaults(handler=_cmd_fleet, validate=_validate)


def _progress(enabled: bool, what: str = "", taken: str = "ok") -> FleetProgress | None:
    """A line on stderr per host as it ends (`[what done/total] host: taken (S s)`), when `enabled`."""
    if not enabled:
        return None

    def report(result: HostResult, done: int, total: int) -> None:
        outcome = taken if result.snapshot else f"FAILED: {printable(str(result.error))}"
        # A host name from a hosts file or a Slurm node's report, a reason from the far side: shown, never obeyed.
        sys.stderr.write(f"[{what}{done}/{total}] {printable(result.host)}: {outcome} ({result.duration_s:.1f} s)\n")
        sys.stderr.flush()

    return report


def _bench_progress(enabled: bool) -> FleetProgress | None:
    """The line per host as its benchmark run ends (`[bench done/total] host: measured (S s)`)."""
    return _progress(enabled, "bench ", "measured")


def _validate(args: argparse.Namespace) -> None:
    if args.slurm:
        if args.hosts_file or args.identity or args.accept_new_host_key:
            raise UsageError("--slurm takes its nodes from srun: "
                             "no --hosts-file, --identity or --accept-new-host-key")
        if args.hosts and not args.hosts[0].startswith("-"):
            # srun options come first; a bare word here is a host, which srun would run as a command.
            raise UsageError(f"--slurm takes its nodes from srun, not {args.hosts[0]!r}; srun options go after "
                             "`--` (e.g. -- -N 4 -w gpu[01-04])")
    elif args.driftcheck and not args.bench:
        raise UsageError("--driftcheck goes with --slurm or --bench")
    given = [flag for flag, value in (("--bench-suite", args.bench_suite), ("--runs", args.runs),
                                      ("--bench-concurrency", args.bench_concurrency),
                                      ("--budget-s", args.budget_s)) if value is not None]
    if given and not args.bench:
        raise UsageError(f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with --bench")
    if args.slurm and args.bench_concurrency is not None:
        raise UsageError("--bench-concurrency is for SSH hosts; with --slurm every node measures on its own node")
    if args.driftcheck is not None:
        _driftcheck_words(args.driftcheck)
    if args.identity and not Path(args.identity).is_file():
        raise UsageError(f"--identity {args.identity}: no such file")


def _driftcheck_words(command: str) -> list[str]:
    """`--driftcheck CMD` as words, split as a shell would: a quoted path with spaces is one word."""
    try:
        words = shlex.split(command)
    except ValueError as exc:  # an unbalanced quote
        raise UsageError(f"--driftcheck {command}: {str(exc).lower()}") from None
    if not words:
        raise UsageError("--driftcheck: give the command that starts driftcheck")
    return words


def _print(result: FleetResult, fmt: str, fold: bool) -> None:
    signers = result.signers
    if fmt == "json":
        print(json.dumps(result.to_json(), indent=2, sort_keys=True, ensure_ascii=False))
    elif fmt == "markdown":
        sys.stdout.write("".join(f"> **{line.removeprefix('! ')}**\n" for line in signers.lines())
                         + ("\n" if signers.lines() else "") + render_markdown(result.report)
                         + (render_measured_markdown(result.bench) if result.bench else ""))
    else:
        sys.stdout.write("".join(line + "\n" for line in signers.lines()) + render_text(result.report, fold=fold)
                         + (render_measured_text(result.bench) if result.bench else ""))


def _bench_request(args: argparse.Namespace) -> BenchRequest | None:
    if not args.bench:
        return None
    suite = {"suite": args.bench_suite} if args.bench_suite else {}  # else the request's own default suite
    return BenchRequest(**suite, runs=args.runs or DEFAULT_BENCH_RUNS, budget_s=args.budget_s)


def _cmd_fleet(args: argparse.Namespace) -> int:
    with flag_terms():
        result = fleet(args.hosts, hosts_file=args.hosts_file, slurm=args.slurm,
                       driftcheck_command=_driftcheck_words(args.driftcheck) if args.driftcheck is not None else None,
                       python=args.python,
                       identity=args.identity, accept_new_host_key=args.accept_new_host_key,
                       probes=args.probe or (), skip=args.skip or (), against=args.against, label=args.label,
                       concurrency=args.concurrency, host_timeout_s=args.host_timeout, keep=not args.no_store,
                       require_trusted=args.require_trusted,
                       progress=_progress(not args.quiet and sys.stderr.isatty()), bench=_bench_request(args),
                       bench_concurrency=args.bench_concurrency or DEFAULT_BENCH_CONCURRENCY,
                       bench_progress=_bench_progress(not args.quiet and sys.stderr.isatty()))
    _print(result, args.format, fold=not args.all)
    if result.trouble:
        return EXIT_TROUBLE
    return EXIT_OK if result.uniform else EXIT_DIFFERENT
