"""`driftcheck slurm-health`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from driftcheck.api.slurm_health import (
    DEFAULT_DEADLINE_S,
    DRAINED,
    KEPT,
    SLURM_LIMIT_S,
    SlurmHealth,
    SlurmHealthRequest,
    slurm_health,
)
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, add_format, positive_float


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck slurm-health`."""
    p.description = ("A health check for Slurm's HealthCheckProgram (or NHC): check this node against its baseline "
                     f"within the deadline (Slurm kills the program after {SLURM_LIMIT_S:g} s); on drift drain the "
                     "node with `scontrol update nodename=NODE state=drain reason=\"driftcheck: <first cause>\"`. A "
                     "node is resumed only when driftcheck drained it (its reason prefix) and the drift is gone; a "
                     "node drained by anyone else is left alone. No baseline, a passed deadline or a Slurm command "
                     "that fails touches nothing and exits 2 with the reason. Exit 0 healthy, 1 drift, 2 trouble.")
    p.add_argument("--against", metavar="REF",
                   help="the baseline name or snapshot reference (default: baseline `default`, else the newest "
                        "snapshot of this machine)")
    p.add_argument("--policy", type=Path, metavar="FILE", help="YAML policy for the check: ignore, tolerances, must")
    p.add_argument("--node", metavar="NAME", help="this node's Slurm NodeName (default: the short host name)")
    p.add_argument("--deadline", type=positive_float, default=DEFAULT_DEADLINE_S, metavar="SECONDS",
                   help=f"how long the check may take (default {DEFAULT_DEADLINE_S:g}; under {SLURM_LIMIT_S:g})")
    add_format(p)
    p.set_defaults(handler=_cmd_slurm_health)


def _text(outcome: SlurmHealth) -> str:
    verdict = outcome.verdict
    found = f"DRIFT ({verdict.first_cause})" if verdict.drift else "ok"
    action = f"{outcome.action}: {outcome.reason}" if outcome.action in (DRAINED, KEPT) else outcome.action
    return (f"{outcome.node}: check against {verdict.reference}: {found}\n"
            f"{outcome.node}: {action} (in {outcome.elapsed_s:.1f} s)\n")


def _cmd_slurm_health(args: argparse.Namespace) -> int:
    outcome = slurm_health(SlurmHealthRequest(against=args.against, policy=args.policy, node=args.node,
                                              deadline_s=args.deadline))
    if args.format == "json":
        print(json.dumps(outcome.to_json(), indent=2, sort_keys=True))
    else:
        sys.stdout.write(_text(outcome))
    return EXIT_DIFFERENT if outcome.verdict.drift else EXIT_OK
