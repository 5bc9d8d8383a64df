"""The one place a Host is built from what the user wrote: a target string, like a URL names its scheme.

    local                     this machine (`python`: the interpreter whose packages matter)
    replay:DIR                a recording made by `driftcheck record`
    [user@]host[:port]        a machine over SSH (~/.ssh/config aliases work; `python` runs there)

A new kind of host (e.g. `docker://NAME`) is one branch here plus its class. An empty target is an
error, never a silent "this machine". The host comes back unconnected; `with host_for(...) as host:`
connects it (a no-op for local and replay hosts) and closes it after.
"""

from __future__ import annotations

import os
from pathlib import Path

from driftcheck.errors import OptionError
from driftcheck.hosts.base import Host
from driftcheck.hosts.local import LocalHost
from driftcheck.hosts.replay import ReplayHost

LOCAL = "local"
REPLAY_PREFIX = "replay:"
TARGET_SYNTAX = "local, replay:DIR or [user@]host[:port]"


def local_host(python: str | None = None) -> LocalHost:
    """This machine, with `python` (checked to be an executable file) as the interpreter whose packages matter."""
    if python and not (Path(python).is_file() and os.access(python, os.X_OK)):
        raise OptionError("python", python, "no executable interpreter there")
    return LocalHost(python)


def replay_host(directory: str | Path, python: str | None = None) -> ReplayHost:
    """The recording in `directory`; a `python` is refused, the recording holds its interpreter's facts."""
    if python:
        raise OptionError("python", python, "a recording holds its interpreter's facts; give no interpreter")
    if not str(directory):
        raise OptionError("target", repr(REPLAY_PREFIX), "name the recording's directory: replay:DIR")
    return ReplayHost(directory)


def ssh_host(target: str, python: str | None = None, identity: str | None = None,
             accept_new_host_key: bool = False) -> Host:
    """The machine `[user@]host[:port]` over SSH, not yet connected (paramiko is loaded only here)."""
    if identity and not os.path.isfile(identity):
        raise OptionError("identity", identity, "no such file")
    from driftcheck.hosts.ssh import SSHHost

    return SSHHost(target, python=python, identity=identity, accept_new_host_key=accept_new_host_key)


def host_for(target: str, python: str | None = None, *, identity: str | None = None,
             accept_new_host_key: bool = False) -> Host:
    """The Host `target` names (`local`, `replay:DIR`, `[user@]host[:port]`), unconnected.

    `python` is the interpreter whose packages matter on it; `identity` and `accept_new_host_key` are
    for SSH only. An empty or malformed target is an OptionError (a UsageError)."""
    text = target.strip()
    if not text:
        raise OptionError("target", repr(target), f"empty; name a machine: {TARGET_SYNTAX}")
    if (identity or accept_new_host_key) and (text == LOCAL or text.startswith(REPLAY_PREFIX)):
        raise OptionError("identity", identity, f"an SSH login goes with an SSH target, not {text!r}")
    if text == LOCAL:
        return local_host(python)
    if text.startswith(REPLAY_PREFIX):
        return replay_host(text[len(REPLAY_PREFIX):], python)
    return ssh_host(text, python, identity, accept_new_host_key)
