"""What the commands share: the parser class, exit codes, the option factories, output files, progress.

Cheap to import on purpose: every command imports it, `driftcheck key show` included, so what only some
commands need (the API, the store, the probes) is imported inside the functions that use it.
An option that means the same thing in several commands is declared once here, under one name.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftcheck.errors import OptionError, UsageError

if TYPE_CHECKING:
    from driftcheck.api import ProbeOptions, ProbeOutcome
    from driftcheck.hosts import Host
    from driftcheck.snapshot.model import Snapshot

EXIT_OK, EXIT_DIFFERENT, EXIT_TROUBLE = 0, 1, 2

SNAPSHOT_REF_HELP = ("a snapshot file, a stored id (or unique prefix), @latest, @prev, @N (N-th newest, 0-based), "
                     "@boot (first of the current boot), @before-boot (newest before the last reboot), "
                     "baseline:NAME, or a run: run:ID, run:@latest, run:@prev (the snapshot before it; add "
                     ":after for the reading after it)")


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit code 2 (its default code, our message)."""

    def error(self, message: str) -> Any:
        self.exit(EXIT_TROUBLE, f"{self.prog}: error: {message} (see --help)\n")


STDOUT = Path("-")


def check_output_path(path: Path, force: bool) -> None:
    """Refuse, before any work, an output path that cannot be written or would replace a file unasked."""
    if path == STDOUT:
        return
    if path.is_dir():
        raise UsageError(f"{path} is a directory; give a file name")
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; pass --force to overwrite it")
    if not path.parent.is_dir():
        raise UsageError(f"{path}: directory {path.parent} does not exist")


# The largest count an option takes (`-n`, `--runs`, `--concurrency`): far above any real use, and below what
# SQLite and the C long of the interpreter hold, so a typo of twenty digits is a usage error, not a crash.
MAX_COUNT = 10**9
# The longest duration an option takes (`--interval`, `--host-timeout`, `--budget-s`): a year, as `--every`.
MAX_DURATION_S = 366 * 24 * 3600.0


def _whole_number(text: str, minimum: int) -> int:
    """`text` as a whole number from `minimum` to MAX_COUNT; ArgumentTypeError for anything else."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is more than {MAX_COUNT:,}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 and at most MAX_COUNT."""
    return _whole_number(text, 1)


def count(text: str) -> int:
    """An argparse type: a whole number of at least 0 (`--keep-last 0`) and at most MAX_COUNT."""
    return _whole_number(text, 0)


def _finite(text: str) -> float:
    """`text` as a finite float; ArgumentTypeError for anything else (nan and inf included)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a finite number")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number of seconds (or other amount) above 0, finite, at most MAX_DURATION_S."""
    value = _finite(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{_shown(text)} must be positive")
    if value > MAX_DURATION_S:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is more than a year ({MAX_DURATION_S:.0f} s)")
    return value


def fraction(text: str) -> float:
    """An argparse type: a finite number from 0 to 1 (a confidence); nan, inf and 5 are refused."""
    value = _finite(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not between 0 and 1")
    return value


def _shown(text: str) -> str:
    """`text` as an error shows it: quoted, cut to a readable length (a 5,000-digit value stays one line)."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text)} characters)"


def write_new_file(path: Path, text: str, force: bool) -> None:
    """Write `text` to `path` through a temporary file, refusing to replace an existing file unless `force`."""
    check_output_path(path, force)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, "utf-8")
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def progress_printer(enabled: bool) -> Callable[[str, ProbeOutcome, int, int], None] | None:
    if not enabled:
        return None

    def report(name: str, outcome: ProbeOutcome, done: int, total: int) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r\033[Kprobing [{done}/{total}] {name}: {outcome.status} "
                         f"({outcome.duration_s:.2f} s){end}")
        sys.stderr.flush()

    return report


def run_progress() -> Callable[[str], None] | None:
    """A line printer for benchmark runs on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def report(line: str) -> None:
        # Over a "probing [k/n] ..." line that a probe's progress left without its newline.
        sys.stderr.write(f"\r\033[Kbench: {line}\n")
        sys.stderr.flush()

    return report


def hash_progress_printer() -> Callable[[int, int, int, int], None]:
    def report(done: int, total: int, done_bytes: int, total_bytes: int) -> None:
        sys.stderr.write(f"\r\033[Khashing compiled files [{done}/{total}] "
                         f"{done_bytes / 2**20:.0f}/{total_bytes / 2**20:.0f} MiB")
        sys.stderr.flush()

    return report

def use_colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


# --- Option factories: one declaration per concept, one name across the commands. ---

# A parser or a group of one (a mutually exclusive group declares a conflict once, where the options are).
Options = argparse._ActionsContainer

def add_format(p: Options, choices: Sequence[str] = ("text", "json"), default: str = "text",
               help: str | None = None) -> None:
    """`--format`: the output format."""
    p.add_argument("--format", choices=tuple(choices), default=default,
                   help=help or f"output format (default {default})")


def add_require_trusted(p: Options, what: str = "A or B") -> None:
    """`--require-trusted`: a snapshot signed by no key the user trusts is an error, before any comparison."""
    p.add_argument("--require-trusted", action="store_true",
                   help=f"refuse (exit 2) when {what} is unsigned, altered or signed by a key you do not trust "
                        "(`driftcheck key trusted` lists yours); without it such a side is named first")


def add_label(p: Options, help: str = "a note kept with the snapshot (e.g. 'before reboot')") -> None:
    """`--label TEXT`."""
    p.add_argument("--label", help=help)


def add_python(p: Options,
               help: str = "the interpreter whose packages matter; default: ours, or python3 on a --host") -> None:
    """`--python PATH`: the interpreter whose packages matter."""
    p.add_argument("--python", metavar="PATH", help=help)


def add_probe_selection(p: Options, verb: str = "take only this probe", skip: bool = True) -> None:
    """`--probe NAME` (repeatable), and `--skip NAME` unless `skip` is False."""
    from driftcheck.api.catalog import probe_names  # the probe classes, only for the commands that probe

    p.add_argument("--probe", action="append", metavar="NAME",
                   help=f"{verb} (repeatable); known: {', '.join(probe_names())}")
    if skip:
        p.add_argument("--skip", action="append", metavar="NAME", help="leave this probe out (repeatable)")


def add_bench_suite(p: Options, help: str) -> None:
    """`--bench SUITE`: one of the calibrated benchmark suites."""
    from driftcheck.api.catalog import BENCH_SUITES

    p.add_argument("--bench", choices=BENCH_SUITES, metavar="SUITE", help=f"{help} ({', '.join(BENCH_SUITES)})")


def add_runs(p: Options, default: int | None = None,
             help: str = "independent benchmark runs, each in its own process (3 or more measure the between-run "
                         "spread that verdicts need)") -> None:
    """`--runs N`: independent benchmark runs, whatever command starts them."""
    p.add_argument("--runs", type=positive_int, default=default, metavar="N", help=help)


def add_budget(p: Options, help: str | None = None) -> None:
    """`--budget-s S`: the benchmark suite's time budget (hidden where it is only for tests and smoke runs)."""
    p.add_argument("--budget-s", type=positive_float, metavar="S", help=help or argparse.SUPPRESS)


def add_limit(p: Options, help: str) -> None:
    """`-n/--limit N`: show at most N entries (the only meaning of `-n` in driftcheck)."""
    p.add_argument("-n", "--limit", type=positive_int, default=None, metavar="N", help=help)


def add_output(p: Options, help: str, metavar: str = "FILE",
               force_help: str = "overwrite the --output file if it exists") -> None:
    """`-o/--output` and `--force`, which lets it replace an existing file."""
    p.add_argument("-o", "--output", type=Path, metavar=metavar, help=help)
    p.add_argument("--force", action="store_true", help=force_help)


def add_no_store(p: Options, help: str = "do not keep it in the local store (needs -o)") -> None:
    """`--no-store`."""
    p.add_argument("--no-store", action="store_true", help=help)


def add_quiet(p: Options, help: str = "no progress on stderr") -> None:
    """`-q/--quiet`."""
    p.add_argument("--quiet", "-q", action="store_true", help=help)


def add_process_arguments(p: Options) -> None:
    """`--pid` and `--process`: also describe these running processes."""
    p.add_argument("--pid", action="append", type=int, default=[], metavar="PID",
                   help="also describe this running process (e.g. the SGLang/vLLM server); repeatable")
    p.add_argument("--process", action="append", default=[], metavar="PATTERN",
                   help="also describe running processes whose command line matches this regex; repeatable")


def add_server_argument(p: Options, against_reference: bool = False) -> None:
    """`--server URL` and `--server-log FILE`: also take the `server` probe, the running engine's own report of
    its settings, and the settings its log says it started with. `against_reference`: a check, which asks the
    server and reads the log its reference did unless told another (its help says so)."""
    p.add_argument("--server", metavar="URL",
                   help="also record what the SGLang / vLLM / OpenAI-compatible server at URL reports about "
                        "itself (version, every server argument, served models)"
                        + ("; default: the server the reference asked" if against_reference else ""))
    p.add_argument("--server-log", metavar="FILE",
                   help="also record the settings an SGLang or vLLM server's log says it started with (its "
                        "`server_args=` / `non-default args:` line, the last start in the file), read on the "
                        "probed machine; alone, for a server that runs no more"
                        + ("; default: the log the reference read" if against_reference else ""))


def add_ssh_login(p: Options, plural: bool = False) -> None:
    """`--identity` and `--accept-new-host-key`: how to log in over SSH."""
    p.add_argument("--identity", metavar="FILE",
                   help=("the private key to log in with (besides ssh-agent and ~/.ssh/config)"
                         if plural else "with --host: the private key to log in with "
                                        "(besides ssh-agent and ~/.ssh/config)"))
    p.add_argument("--accept-new-host-key", action="store_true",
                   help=("trust host keys seen for the first time and record them in known_hosts"
                         if plural else "with --host: trust a host key seen for the first time and record it in "
                                        "known_hosts (like StrictHostKeyChecking=accept-new); a changed key is "
                                        "always refused"))


def add_host(p: Options) -> None:
    """`--host`, `--identity` and `--accept-new-host-key`: take the snapshot of a machine over SSH."""
    p.add_argument("--host", metavar="[USER@]HOST[:PORT]",
                   help="probe this machine over SSH instead of this one (~/.ssh/config aliases work); nothing "
                        "is installed there: its --python runs driftcheck's stdlib-only readers")
    add_ssh_login(p)


def validate_host(args: argparse.Namespace) -> None:
    """Refuse `--identity`/`--accept-new-host-key` without `--host`, and an identity file that is not there."""
    if not getattr(args, "host", None):
        if getattr(args, "identity", None) or getattr(args, "accept_new_host_key", False):
            raise UsageError("--identity and --accept-new-host-key go with --host")
    elif args.identity and not os.path.isfile(args.identity):
        raise UsageError(f"--identity {args.identity}: no such file")


# The flag that sets each library option (an OptionError's field name), where it is not `--` + the name.
FLAG_OF_OPTION = {"pids": "--pid", "processes": "--process", "target": "--host", "bench_runs": "--runs",
                  "budget_s": "--budget-s", "bench_max_runs": "--max-runs"}


@contextlib.contextmanager
def flag_terms(**flags: str) -> Iterator[None]:
    """Re-word a library OptionError (`python=/x: ...`) in the command's flags (`--python /x: ...`);
    `flags` maps an option to this command's flag where it differs from FLAG_OF_OPTION."""
    try:
        yield
    except OptionError as exc:
        flag = flags.get(exc.option) or FLAG_OF_OPTION.get(exc.option) or "--" + exc.option.replace("_", "-")
        shown = f"{flag} {exc.value}" if exc.value is not None else flag
        raise UsageError(f"{shown}: {exc.reason}") from None


def probe_options(args: argparse.Namespace) -> ProbeOptions:
    """The probe options of --pid/--process (and --deep, --server where the command has them), checked."""
    from driftcheck.api import ProbeOptions

    with flag_terms():
        return ProbeOptions(deep=bool(getattr(args, "deep", False)), pids=tuple(args.pid),
                            process_patterns=tuple(args.process), server_url=getattr(args, "server", None),
                            server_log=getattr(args, "server_log", None))


@contextlib.contextmanager
def remote_host(args: argparse.Namespace) -> Iterator[Host | None]:
    """The --host machine over SSH (connected, closed after), or None when the command describes this one."""
    host_arg = getattr(args, "host", None)
    if host_arg is None:  # `--host ""` is an error of its own (the factory says so), never this machine
        yield None
        return
    from driftcheck.hosts.targets import host_for  # paramiko is loaded only for a remote host

    with flag_terms():
        host = host_for(host_arg, args.python, identity=args.identity, accept_new_host_key=args.accept_new_host_key)
    with host:
        yield host


def validate_keep(args: argparse.Namespace) -> None:
    """Refuse, before any work, a `-o`/`--no-store` combination `keep` could not honour."""
    if args.no_store and not args.output:
        raise UsageError("--no-store keeps the snapshot nowhere; add -o FILE")
    if args.output:
        check_output_path(args.output, args.force)


def keep(snapshot: Snapshot, args: argparse.Namespace) -> str:
    """Write the snapshot to `-o` and the store as asked; returns where it went, for the message."""
    from driftcheck import api
    from driftcheck.snapshot.canonical import pretty_json

    places = []
    if args.output == STDOUT:
        sys.stdout.write(pretty_json(snapshot.document))
        sys.stdout.flush()
        places.append("stdout")
    elif args.output:
        write_new_file(args.output, pretty_json(snapshot.document), args.force)
        places.append(str(args.output))
    if not args.no_store:
        api.keep_snapshot(snapshot)
        places.insert(0, "store")
    return " and ".join(places)
