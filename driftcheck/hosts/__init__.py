"""Hosts: where a probe's I/O goes. Local, a recording of one, a replay of a recording, and SSH.

`SSHHost` lives in `driftcheck.hosts.ssh` and is imported from there (it pulls in paramiko).
`driftcheck.hosts.targets.host_for` builds any of them from what the user wrote (`local`, `replay:DIR`,
`[user@]host[:port]`): the one place a host is made from a target.
"""

from __future__ import annotations

from driftcheck.hosts.base import (
    Capabilities,
    CommandResult,
    GatherAll,
    Host,
    ScriptAnswer,
    ScriptCall,
    facts_script,
    parse_script_output,
)
from driftcheck.hosts.local import LocalHost
from driftcheck.hosts.recording import RECORDING_FORMAT, RecordingHost
from driftcheck.hosts.replay import ReplayHost

__all__ = ["RECORDING_FORMAT", "Capabilities", "CommandResult", "GatherAll", "Host", "LocalHost", "RecordingHost",
           "ReplayHost", "ScriptAnswer", "ScriptCall", "facts_script", "parse_script_output"]
