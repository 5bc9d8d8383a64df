"""`driftcheck schedule`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from driftcheck.api.schedule import Outcome, ScheduleStatus, schedule_install, schedule_remove, schedule_status
from driftcheck.commands.common import EXIT_OK, Parser, add_bench_suite, add_format, add_python, flag_terms


def _where(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", action="store_true", help="the user's units / crontab (the default when not root)")
    p.add_argument("--root", type=Path, metavar="DIR",
                   help="write systemd units under DIR instead of / (as `systemctl --root`): for machine images")
    p.add_argument("--cron-dir", type=Path, metavar="DIR",
                   help="where the cron fallback writes its file when root runs this (default /etc/cron.d)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck schedule install|status|remove`, one handler per action."""
    p.description = ("Install a systemd service + timer pair that takes a snapshot every DURATION (label "
                     "`scheduled`) and, with --at-boot, one after every boot (label `boot`, after "
                     "nvidia-persistenced when it exists), so a 'before' always exists. System-wide as root, the "
                     "user's units otherwise. Where systemd does not run (containers) and no --root is given, a "
                     "cron entry instead.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions.required = True
    inst = actions.add_parser("install", help="write and enable the units (or the cron entry)")
    inst.add_argument("--at-boot", action="store_true", help="also take a snapshot after every boot")
    inst.add_argument("--every", default="1d", metavar="DURATION",
                      help="how often to take a scheduled snapshot: 1d (default), 6h, 30min, 1w, 1h30min")
    add_python(inst, "the interpreter whose packages matter (your ML venv's)")
    add_bench_suite(inst, "also run this calibrated benchmark suite in each scheduled snapshot")
    inst.add_argument("--textfile-dir", type=Path, metavar="DIR",
                      help="after each snapshot, refresh DIR/driftcheck.prom (`driftcheck export prometheus`) for "
                           "node_exporter's textfile collector")
    _where(inst)
    inst.set_defaults(handler=_cmd_install)
    status = actions.add_parser("status", help="what is installed, and when it last took a snapshot")
    add_format(status)
    _where(status)
    status.set_defaults(handler=_cmd_status)
    rm = actions.add_parser("remove", help="take away exactly what install wrote")
    _where(rm)
    rm.set_defaults(handler=_cmd_remove)


def _status_text(status: ScheduleStatus) -> str:
    found, last = status.installed, status.last
    target = found.target
    where = f"under {target.root}" if target.root else ("user" if target.user else "system-wide")
    if not found.files:
        return f"no driftcheck schedule installed ({target.kind}, {where})\n"
    lines = [f"installed: {target.kind}, {where}"]
    settings = found.settings
    if settings:
        lines.append(f"  every {settings.every}" + (", and after every boot" if settings.at_boot else "")
                     + (f"; --python {settings.python}" if settings.python else "")
                     + (f"; --bench {settings.bench}" if settings.bench else "")
                     + (f"; --textfile-dir {settings.textfile_dir}" if settings.textfile_dir else ""))
    lines += [f"  file {path}" for path in found.files] + [f"  link {path}" for path in found.links]
    for label, when in last.items():
        lines.append(f"  last `{label}` snapshot: {when[:19].replace('T', ' ') + ' UTC' if when else 'none yet'}")
    return "\n".join(lines) + "\n"


def _report(outcome: Outcome, verb: str) -> None:
    for note in outcome.notes:
        sys.stderr.write(f"driftcheck: {note}\n")
    for path in outcome.written:
        sys.stdout.write(f"wrote {path}\n")
    for path in outcome.removed:
        sys.stdout.write(f"removed {path}\n")
    if not outcome.written and not outcome.removed:
        sys.stdout.write(f"nothing to {verb}: no driftcheck schedule installed\n")


def _where_of(args: argparse.Namespace) -> dict[str, Any]:
    """Where the schedule goes, as the face's keyword arguments."""
    return {"user": args.user, "root": args.root, "cron_dir": args.cron_dir}


def _cmd_install(args: argparse.Namespace) -> int:
    with flag_terms():
        outcome = schedule_install(every=args.every, at_boot=args.at_boot, python=args.python, bench=args.bench,
                                   textfile_dir=args.textfile_dir, **_where_of(args))
    _report(outcome, "install")
    return EXIT_OK


def _cmd_remove(args: argparse.Namespace) -> int:
    _report(schedule_remove(**_where_of(args)), "remove")
    return EXIT_OK


def _cmd_status(args: argparse.Namespace) -> int:
    status = schedule_status(**_where_of(args))
    if args.format == "json":
        print(json.dumps(status.to_json(), indent=2, sort_keys=True))
    else:
        sys.stdout.write(_status_text(status))
    return EXIT_OK
