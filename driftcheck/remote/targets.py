"""The hosts of a fleet: from arguments, a hosts file, and Slurm hostlist expressions (`gpu[01-16]`).

Hostlist expressions are expanded by python-hostlist, the parser Slurm users already rely on (ranges,
zero padding, several brackets, comma lists), rather than by a home-made one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import hostlist

from driftcheck.errors import OptionError, UsageError
from driftcheck.snapshot.inputs import InputError, read_input

# A hosts file of 10,000 hosts with long names is well under 1 MiB; more is not a hosts file.
MAX_HOSTS_FILE_BYTES = 16 * 1024 * 1024


def expand(expression: str) -> list[str]:
    """`gpu[01-03]` → gpu01, gpu02, gpu03; `root@gpu[1,3]:2222` keeps the user and port on each host."""
    try:
        return list(hostlist.expand_hostlist(expression.strip()))
    except hostlist.BadHostlist as exc:
        raise UsageError(f"{expression!r} is not a host list: {exc}") from None


def read_hosts_file(path: Path) -> list[str]:
    """The host expressions in `path`: one or more per line (space or comma separated), `#` comments."""
    try:
        text = read_input(path, "a hosts file", MAX_HOSTS_FILE_BYTES).decode("utf-8")
    except InputError as exc:
        raise OptionError("hosts_file", str(path), str(exc)) from None
    except UnicodeDecodeError as exc:
        raise OptionError("hosts_file", str(path), f"not UTF-8 text (byte {exc.start}); a hosts file is host "
                                                   "names, one or more a line") from None
    if "\0" in text:
        raise OptionError("hosts_file", str(path), "holds NUL bytes: a binary file, not a hosts file")
    found: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        found.extend(line.split())
    return found


def fleet_hosts(arguments: Iterable[str], hosts_file: Path | None = None) -> list[str]:
    """Every host named, expanded, in the order given, each once; UsageError when there is none."""
    expressions = list(arguments) + (read_hosts_file(hosts_file) if hosts_file else [])
    hosts: list[str] = []
    for expression in expressions:
        hosts.extend(expand(expression))
    unique = list(dict.fromkeys(h for h in hosts if h))
    if not unique:
        raise UsageError("no hosts: name hostlist expressions (gpu[01-16] works) or a hosts file")
    return unique
