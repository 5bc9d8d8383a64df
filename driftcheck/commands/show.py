"""`driftcheck show`.

The YAML writer and the full renderer (which knows every probe) are imported by the formats that use them:
the one-screen summary is the common case, and they would double its start-up.
"""

from __future__ import annotations

import argparse
import sys

from driftcheck import api
from driftcheck.commands.common import EXIT_OK, SNAPSHOT_REF_HELP, add_format, use_colour
from driftcheck.reports.summary import summary_text
from driftcheck.snapshot.canonical import pretty_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck show` and its handler."""
    p.description = ("Print a snapshot: by default a one-screen summary (host, OS, CPU, Python, torch build, the "
                     "packages that decide speed, GPUs with clocks, power, PCIe and topology, performance "
                     "variables, system knobs, probe outcomes); --full prints every fact. Colour only on a terminal.")
    p.add_argument("snapshot", help=SNAPSHOT_REF_HELP + "; or a pasted report file, imported on the fly")
    p.add_argument("--full", action="store_true", help="every fact of every probe, not the summary")
    add_format(p, ("text", "json", "yaml"))
    p.set_defaults(handler=_cmd_show)


def _cmd_show(args: argparse.Namespace) -> int:
    shown = api.show(args.snapshot)
    if args.format == "json":
        sys.stdout.write(pretty_json(shown.to_json()))
    elif args.format == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(shown.to_json(), sort_keys=True, allow_unicode=True))
    else:
        # Who signed it, in the user's terms (you / a trusted name / an unknown key), as `verify` says it.
        signer = shown.signer.who()
        if args.full:
            from driftcheck.analysis.render import snapshot_text

            sys.stdout.write(snapshot_text(shown.snapshot, signer))
        else:
            sys.stdout.write(summary_text(shown.snapshot, signer, colour=use_colour()))
    return EXIT_OK
