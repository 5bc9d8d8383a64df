"""`driftcheck export prometheus|nfd`."""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from driftcheck.api.export import (
    LOOPBACK,
    ExportRequest,
    MachineState,
    PrometheusServer,
    export_nfd,
    export_prometheus,
)
from driftcheck.commands.common import EXIT_DIFFERENT, EXIT_OK, Parser, positive_float
from driftcheck.errors import UsageError

DEFAULT_EVERY_S = 300.0


def _address(text: str) -> tuple[str, int]:
    """An argparse type: `ADDR:PORT` or `PORT` (loopback then); `[::1]:PORT` for IPv6."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else LOOPBACK
    if not host:
        host = LOOPBACK
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: give ADDR:PORT or PORT, a port from 0 to 65535")
    return host, int(port)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--against", metavar="REF",
                   help="check against this baseline name or snapshot reference (default: baseline `default`, "
                        "else the newest snapshot of this machine; with neither, the snapshot's facts alone)")
    p.add_argument("--policy", type=Path, metavar="FILE", help="YAML policy for the check: ignore, tolerances, must")
    p.add_argument("--no-check", action="store_true", help="export the snapshot's facts without a check")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck export prometheus|nfd`."""
    p.description = ("Export a fresh snapshot of this machine and its check against the baseline where operators "
                     "look: Prometheus (node_exporter's textfile collector, or a scrape endpoint) and Kubernetes "
                     "node labels (node-feature-discovery's local source). Exit 0 no drift, 1 drift, 2 trouble.")
    actions = p.add_subparsers(dest="action", metavar="FORMAT", parser_class=Parser)
    actions.required = True
    prom = actions.add_parser("prometheus", help="metrics in the Prometheus text format (driftcheck_*)")
    where = prom.add_mutually_exclusive_group(required=True)
    where.add_argument("--textfile-dir", type=Path, metavar="DIR",
                       help="write DIR/driftcheck.prom atomically (node_exporter's --collector.textfile.directory)")
    where.add_argument("--listen", type=_address, metavar="ADDR:PORT",
                       help=f"serve /metrics on ADDR:PORT (a bare PORT listens on {LOOPBACK}) until interrupted")
    prom.add_argument("--every", type=positive_float, default=DEFAULT_EVERY_S, metavar="SECONDS",
                      help=f"with --listen: check again every SECONDS (default {DEFAULT_EVERY_S:g})")
    _common(prom)
    prom.set_defaults(handler=_cmd_prometheus)
    nfd = actions.add_parser("nfd", help="a feature file for node-feature-discovery (Kubernetes node labels)")
    nfd.add_argument("--features-dir", type=Path, metavar="DIR", required=True,
                     help="NFD's features.d (usually /etc/kubernetes/node-feature-discovery/features.d)")
    _common(nfd)
    nfd.set_defaults(handler=_cmd_nfd)


def _request(args: argparse.Namespace) -> ExportRequest:
    if args.no_check and (args.against or args.policy):
        raise UsageError("--no-check exports without a check: give no --against or --policy with it")
    return ExportRequest(against=args.against, policy=args.policy, check=not args.no_check)


def _verdict_line(state: MachineState) -> tuple[str, int]:
    if state.verdict is None:
        return (state.note or "no check") + "\n", EXIT_OK
    verdict = state.verdict
    if not verdict.drift:
        return f"check against {verdict.reference}: ok\n", EXIT_OK
    return f"check against {verdict.reference}: DRIFT ({verdict.first_cause})\n", EXIT_DIFFERENT


def _cmd_prometheus(args: argparse.Namespace) -> int:
    request = _request(args)
    if args.textfile_dir is not None:
        written = export_prometheus(args.textfile_dir, request)
        line, code = _verdict_line(written.state)
        sys.stdout.write(f"wrote {written.path} ({written.size_bytes} bytes, {written.series} series)\n{line}")
        return code
    host, port = args.listen
    server = PrometheusServer(host, port, request)
    try:
        sys.stdout.write(f"serving http://{host}:{server.port}/metrics; {_verdict_line(server.state)[0]}")
        sys.stdout.flush()
        server.serve(args.every, threading.Event())
    finally:
        server.close()
    return EXIT_OK


def _cmd_nfd(args: argparse.Namespace) -> int:
    written = export_nfd(args.features_dir, _request(args))
    line, code = _verdict_line(written.state)
    labels = "".join(f"  {name}={value}\n" for name, value in written.features.items())
    sys.stdout.write(f"wrote {written.path}\n{labels}{line}")
    return code
