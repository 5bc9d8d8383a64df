"""`driftcheck fleet`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from driftcheck.analysis.peers import PeerReport, peer_report
from driftcheck.analysis.peers_render import render_markdown, render_text
from driftcheck.analysis.signers import Signers, require_trusted, signers_for
from driftcheck.api.references import resolve_snapshot
from driftcheck.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_TROUBLE,
    SNAPSHOT_REF_HELP,
    add_format,
    add_label,
    add_no_store,
    add_probe_selection,
    add_python,
    add_quiet,
    add_require_trusted,
    add_ssh_login,
    flag_terms,
    positive_float,
    positive_int,
)
from driftcheck.errors import UsageError
from driftcheck.remote import slurm
from driftcheck.remote.fleet import (
    DEFAULT_CONCURRENCY,
    DEFAULT_HOST_TIMEOUT_S,
    FleetRequest,
    HostResult,
    snapshot_targets,
)
from driftcheck.remote.targets import fleet_hosts
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck fleet`, its handler and the check of its options."""
    p.description = ("Snapshot many hosts at once over SSH (or every node of a Slurm allocation with --slurm), keep "
                     "each snapshot, and print a peer report: for every fact not identical across the hosts, the "
                     "majority value and the outliers, ranked by how likely they move performance. A host that "
                     "fails is reported and the others are still compared. Exit 0 uniform, 1 outliers, 2 trouble "
                     "(a host failed, or bad input).")
    p.epilog = ("Hosts: [user@]host[:port], ~/.ssh/config aliases, and Slurm hostlist expressions such as gpu[01-16]. "
                "With --slurm, arguments after `--` go to srun (e.g. `driftcheck fleet --slurm -- -N 16 -p gpu`), "
                "and driftcheck must be installed on the nodes.")
    p.add_argument("hosts", nargs="*", metavar="HOST",
                   help="hosts or hostlist expressions (with --slurm: srun arguments, after --)")
    p.add_argument("--hosts-file", type=Path, metavar="FILE",
                   help="more hosts, one or more per line (hostlist expressions too); # starts a comment")
    p.add_argument("--slurm", action="store_true",
                   help="snapshot every node of the allocation through `srun --ntasks-per-node=1` instead of SSH")
    p.add_argument("--driftcheck", metavar="CMD",
                   help="with --slurm: how the nodes start driftcheck "
                        f"(default: {' '.join(slurm.driftcheck_command())})")
    add_python(p, "the interpreter whose packages matter on each host (default python3; with --slurm: "
                  "driftcheck's own on the node)")
    add_ssh_login(p, plural=True)
    p.add_argument("--concurrency", type=positive_int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"hosts snapshotted at once (default {DEFAULT_CONCURRENCY})")
    p.add_argument("--host-timeout", type=positive_float, default=DEFAULT_HOST_TIMEOUT_S, metavar="S",
                   help=f"give up on a host after this many seconds (default {DEFAULT_HOST_TIMEOUT_S:g})")
    add_probe_selection(p)
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


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None

    def report(result: HostResult, done: int, total: int) -> None:
        outcome = "ok" if result.snapshot else f"FAILED: {result.error}"
        sys.stderr.write(f"[{done}/{total}] {result.host}: {outcome} ({result.duration_s:.1f} s)\n")
        sys.stderr.flush()

    return report


def _validate(args: argparse.Namespace) -> None:
    if args.slurm:
        if args.hosts_file or args.identity or args.accept_new_host_key:
            raise UsageError("--slurm takes its nodes from srun: "
                             "no --hosts-file, --identity or --accept-new-host-key")
        if args.hosts and not args.hosts[0].startswith("-"):
            # srun options come first; a bare word here is a host, which srun would run as a command.
            raise UsageError(f"--slurm takes its nodes from srun, not {args.hosts[0]!r}; srun options go after "
                             "`--` (e.g. -- -N 4 -w gpu[01-04])")
    elif args.driftcheck:
        raise UsageError("--driftcheck goes with --slurm")
    if args.identity and not Path(args.identity).is_file():
        raise UsageError(f"--identity {args.identity}: no such file")


def _ssh_fleet(args: argparse.Namespace) -> tuple[dict[str, Snapshot], dict[str, str]]:
    with flag_terms():
        request = FleetRequest(tuple(fleet_hosts(args.hosts, args.hosts_file)), python=args.python,
                               identity=args.identity, accept_new_host_key=args.accept_new_host_key,
                               probes=tuple(args.probe or ()), skip=tuple(args.skip or ()), label=args.label,
                               concurrency=args.concurrency, host_timeout_s=args.host_timeout)
        results = snapshot_targets(request, _progress(not args.quiet and sys.stderr.isatty()))
    snapshots = {h: r.snapshot for h, r in results.items() if r.snapshot is not None}
    failures = {h: r.error or "no snapshot" for h, r in results.items() if r.snapshot is None}
    return snapshots, failures


def _slurm_fleet(args: argparse.Namespace) -> tuple[dict[str, Snapshot], dict[str, str]]:
    snapshot_args: list[str] = []
    for name in args.probe or []:
        snapshot_args += ["--probe", name]
    for name in args.skip or []:
        snapshot_args += ["--skip", name]
    if args.python:
        snapshot_args += ["--python", args.python]
    if args.label:
        snapshot_args += ["--label", args.label]
    command = args.driftcheck.split() if args.driftcheck else slurm.driftcheck_command()
    gathered = slurm.gather(args.hosts, command, snapshot_args, args.host_timeout,
                            require_trusted=args.require_trusted)
    return gathered.snapshots, gathered.failures


def _print(report: PeerReport, snapshots: dict[str, Snapshot], signers: Signers, fmt: str, fold: bool) -> None:
    if fmt == "json":
        document = report.to_json()
        document["snapshots"] = {host: snapshots[host].id for host in sorted(snapshots)}
        document["signers"] = signers.to_json()
        print(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False))
    elif fmt == "markdown":
        sys.stdout.write("".join(f"> **{line.removeprefix('! ')}**\n" for line in signers.lines())
                         + ("\n" if signers.lines() else "") + render_markdown(report))
    else:
        sys.stdout.write("".join(line + "\n" for line in signers.lines()) + render_text(report, fold=fold))


def _cmd_fleet(args: argparse.Namespace) -> int:
    store = Store()
    reference = resolve_snapshot(args.against, store) if args.against else None
    against = signers_for({"--against": reference}, roles={"--against": "--against"}) \
        if reference else Signers({})
    if args.require_trusted:
        require_trusted(against)
    snapshots, failures = _slurm_fleet(args) if args.slurm else _ssh_fleet(args)
    # Every host by name, the --against snapshot under its flag: who signed what the report compares.
    signers = Signers({**against.sides, **signers_for(snapshots, roles={h: h for h in snapshots}).sides})
    if not args.no_store:
        for snapshot in snapshots.values():
            store.add(snapshot)
    report = peer_report(snapshots, reference, args.against or "majority", failures)
    _print(report, snapshots, signers, args.format, fold=not args.all)
    if failures or not snapshots:
        return EXIT_TROUBLE
    return EXIT_OK if report.uniform else EXIT_DIFFERENT
