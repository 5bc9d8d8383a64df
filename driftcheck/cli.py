"""The `driftcheck` command line. Thin: it parses, calls the library, prints, and maps errors to exit codes.

Exit codes follow diff(1): 0 nothing relevant differs (or all is well), 1 differences (or a failed
verification), 2 trouble (bad input, unreadable snapshot, missing library or host).

Each command lives in its own module under `driftcheck.commands`, named in `COMMANDS` with its one-line
summary (as pip's `commands_dict`). Only the module of the command being run is imported: `driftcheck
--help` lists every command from the summaries here, and `driftcheck key show` does not pay for the
diff engine, the probes or the benchmarks. A new command is one module there and one line in `COMMANDS`.

A command module provides `add_arguments(parser)`: it sets the parser's description, declares the options
(with the factories of `driftcheck.commands.common`) and sets `handler=` (per sub-action where the command
has several) and, where options constrain each other, one `validate=`, run before the handler.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NamedTuple

from driftcheck.commands.common import Parser
from driftcheck.errors import DriftcheckError
from driftcheck.snapshot.printable import printable
from driftcheck.snapshot.version import VERSION_LINE


class CommandInfo(NamedTuple):
    """Where a command lives and what `driftcheck --help` says of it."""

    module: str
    summary: str


COMMANDS: dict[str, CommandInfo] = {
    "snapshot": CommandInfo("driftcheck.commands.snapshot",
                            "probe this machine (or one over SSH) and keep a signed snapshot"),
    "show": CommandInfo("driftcheck.commands.show", "print a snapshot (a one-screen summary; --full for every fact)"),
    "verify": CommandInfo("driftcheck.commands.verify", "check a snapshot's signature, and who signed it"),
    "key": CommandInfo("driftcheck.commands.key", "print your public signing key and its fingerprint"),
    "log": CommandInfo("driftcheck.commands.log", "list stored snapshots, newest first"),
    "diff": CommandInfo("driftcheck.commands.diff", "compare two snapshots"),
    "explain": CommandInfo("driftcheck.commands.explain",
                           "rank the differences most likely to explain a performance shift"),
    "check": CommandInfo("driftcheck.commands.check",
                         "pre-benchmark gate: fresh snapshot vs baseline, exit 1 on drift"),
    "baseline": CommandInfo("driftcheck.commands.baseline", "name snapshots as baselines (baseline:NAME)"),
    "bench": CommandInfo("driftcheck.commands.bench",
                         "run the calibrated baseline benchmarks, or measure a serving stack"),
    "import": CommandInfo("driftcheck.commands.importing",
                          "build a snapshot from pasted environment reports and nvidia-smi outputs"),
    "record": CommandInfo("driftcheck.commands.record",
                          "save the probes' raw inputs on this machine, redacted, for replay"),
    "gc": CommandInfo("driftcheck.commands.gc", "remove old snapshots from the store (never a pinned one)"),
    "schedule": CommandInfo("driftcheck.commands.schedule",
                            "take snapshots at every boot and on a schedule (systemd or cron)"),
    "report": CommandInfo("driftcheck.commands.report",
                          "write a bug-report attachment: report.md and the signed snapshot"),
    "fleet": CommandInfo("driftcheck.commands.fleet", "snapshot many hosts (SSH or Slurm) and name the odd ones out"),
    "run": CommandInfo("driftcheck.commands.run",
                       "run a benchmark command and keep its figures with the machine state"),
    "runs": CommandInfo("driftcheck.commands.runs",
                        "list recorded runs with their figures, or chart them in an HTML page"),
    "try": CommandInfo("driftcheck.commands.try_", "run a command under variants, interleaved: which is faster?"),
    "bisect": CommandInfo("driftcheck.commands.bisect", "find which of B's environment changes cause its shift"),
    "export": CommandInfo("driftcheck.commands.export",
                          "this machine's state and drift as Prometheus metrics or Kubernetes node labels"),
    "slurm-health": CommandInfo("driftcheck.commands.slurm_health",
                                "Slurm health check: drain this node on drift, resume it when the drift is gone"),
    "restore": CommandInfo("driftcheck.commands.restore",
                           "rebuild a snapshot's Python environment in a new venv, verified against it"),
}


class CommandListFormatter(argparse.HelpFormatter):
    """argparse's help layout, with the command names measured at the indentation they are printed at: argparse
    measures them one level out, so a name of 11 characters or more (`slurm-health`) would be pushed onto a line
    of its own, away from its summary."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if action.help is argparse.SUPPRESS or not isinstance(action, argparse._SubParsersAction):
            return
        indent = self._current_indent + self._indent_increment
        for command in action._get_subactions():
            self._action_max_length = max(self._action_max_length,
                                          len(self._format_action_invocation(command)) + indent)


def build_parser(*commands: str) -> argparse.ArgumentParser:
    """The argument parser: every command listed with its summary; the options only of `commands`.

    Only the modules of `commands` are imported; `build_parser(*COMMANDS)` builds the whole parser.
    """
    parser = Parser(prog="driftcheck",
                    formatter_class=CommandListFormatter,
                    description="Record the state of a GPU benchmark/inference machine in signed snapshots, "
                                "and compare two of them to see what changed.",
                    epilog="Exit codes: 0 no relevant difference / all well, 1 differences or a failed "
                           "verification, 2 trouble. Files live under $DRIFTCHECK_HOME when it is set.")
    parser.add_argument("--version", action="version", version=VERSION_LINE)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name, info in COMMANDS.items():
        command_parser = sub.add_parser(name, help=info.summary, description=info.summary)
        if name in commands:
            importlib.import_module(info.module).add_arguments(command_parser)
    return parser


def _command_word(argv: Sequence[str]) -> str | None:
    """The command named in `argv`: the first word that is no option (the top level has no option values)."""
    return next((word for word in argv if not word.startswith("-")), None)


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed command line, its command's module imported (most of a command's imports happen here)."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(_command_word(words) or "").parse_args(words)
    if getattr(args, "handler", None) is None:  # the command word was not where `_command_word` looked
        args = build_parser(args.command).parse_args(words)
    return args


def shown_message(message: str) -> str:
    """An error message as it is printed: control characters escaped on every line, and redacted (a message
    may quote a URL with its password, or a command line with its token)."""
    message = "\n".join(printable(line) for line in message.split("\n"))
    # Imported here: the redactor loads the probes, which a command that ends well never pays for.
    from driftcheck.probes.redact import Redactor
    from driftcheck.snapshot.keys import existing_redaction_secret

    # An error creates nothing: without the user's secret (or with a home that cannot hold one), a one-time
    # key still hides the secret, only its digest will not match the stored ones.
    return Redactor(existing_redaction_secret() or os.urandom(32)).text(message)


def main(argv: Sequence[str] | None = None, parsed: argparse.Namespace | None = None) -> int:
    """Run the command line (or the `parsed` one); returns the exit code (the console script exits with it)."""
    args = parsed if parsed is not None else parse(argv)
    try:
        validate = getattr(args, "validate", None)
        if validate is not None:
            validate(args)
        return int(args.handler(args))
    except DriftcheckError as exc:
        sys.stderr.write(f"driftcheck: error: {shown_message(str(exc))}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("driftcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        # `driftcheck check | head`: the reader left before the end. Exit as a process killed by SIGPIPE
        # does (128 + 13), never 0: a gate's verdict must not turn into "all well" because of a pager.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        # The system refused a path or a resource the user named (a name over 255 bytes, no permission, a full
        # disk): trouble with the input, said in one line, as every other.
        where = f"{exc.filename}: " if exc.filename is not None else ""
        sys.stderr.write(f"driftcheck: error: {shown_message(where + (exc.strerror or str(exc)))}\n")
        return 2
    except Exception as exc:  # a bug of ours: never a traceback, and never exit 1, which reads as "drift found"
        if os.environ.get("DRIFTCHECK_DEBUG"):
            import traceback  # only here: its import (linecache, tokenize) is a tenth of `--version`'s start

            traceback.print_exc()
        message = shown_message(" ".join(str(exc).split())[:300])  # one line, whatever the exception holds
        what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        sys.stderr.write(f"driftcheck: internal error: {what} "
                         "(set DRIFTCHECK_DEBUG=1 for the traceback; please report it)\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
