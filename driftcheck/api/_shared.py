"""What the verbs of the face share: requests frozen as given, a host object taken as it is, the options a host sees."""

from __future__ import annotations

import os
import stat

from driftcheck.errors import OptionError
from driftcheck.hosts import Host
from driftcheck.hosts.targets import LOCAL
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.record import replay_options


def frozen_tuple(request: object, name: str) -> None:
    """Store a sequence field of a frozen request as a tuple, so a list given by the caller cannot change it."""
    value = getattr(request, name)
    if value is not None:
        object.__setattr__(request, name, tuple(value))

def given_host(host: Host, target: str, python: str | None) -> Host:
    """`host`, refusing a target or interpreter beside it: a host object carries both."""
    if target != LOCAL or python:
        raise OptionError("host", host.name, "a host object carries its target and interpreter; "
                                             "give no target or python with it")
    return host


def options_for(host: Host, options: ProbeOptions) -> ProbeOptions:
    """`options` as they apply to `host`: a recording is replayed with the options it was taken with."""
    if not host.capabilities.recorded:
        return options
    if options.server_url:
        raise OptionError("server", repr(options.server_url), "a recording holds no server answers")
    if options.server_log:
        raise OptionError("server_log", options.server_log, "a recording holds no server log; read it on its machine")
    return replay_options(host, options.pids, options.process_patterns)


def checked_local_log(path: str | None) -> str | None:
    """`path`, a server log on this machine, made absolute; refused, before anything is probed, when it is not
    there or cannot be read (an OptionError naming `server_log`). A log on another host is the probe's to read.

    Absolute because the snapshot keeps the path and `check` reads it again later, from wherever it is run:
    a relative one would name another file there, or none, and the server look changed."""
    if path is None:
        return None
    if not os.path.isfile(path):
        raise OptionError("server_log", path, _not_a_file(path))
    if not os.access(path, os.R_OK):
        raise OptionError("server_log", path, "not readable by this user")
    return os.path.abspath(path)


def _not_a_file(path: str) -> str:
    """Why `path`, not a regular file, cannot be the server log, and what to give instead."""
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "a directory, not a file"
    if stat.S_ISFIFO(os.stat(path).st_mode):
        # `--server-log <(a command)`: read once here, and a later check could not read it again.
        return "a pipe, not a file; save the log to a file and give that"
    return "not a file"
