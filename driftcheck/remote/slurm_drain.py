"""Draining this Slurm node on drift, and resuming it only when driftcheck drained it and the drift is gone.

Slurm leaves every action to the health check program itself (slurm.conf(5) of Slurm 22.05, HealthCheckProgram:
"Any action to be taken must be explicitly performed by the program (e.g. execute `scontrol update
NodeName=foo State=drain Reason=tmp_file_system_full`)"). A drain driftcheck sets carries a reason starting
`driftcheck:`; a node drained for any other reason (a person, NHC, another check) is never resumed here.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from driftcheck.errors import HostError

REASON_PREFIX = "driftcheck:"
# A drain reason is shown by `sinfo -R` on one line: the first cause, cut to a readable length.
REASON_MAX_CHARS = 120
COMMAND_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class NodeState:
    """A node's state as sinfo prints it (`idle`, `drained`, `mixed`, `draining`, ...) and its reason."""

    node: str
    state: str
    reason: str

    @property
    def drained(self) -> bool:
        """Whether the node is drained or draining (no new jobs start on it)."""
        return "drain" in self.state

    @property
    def drained_by_driftcheck(self) -> bool:
        """Whether driftcheck set the drain (its reason prefix)."""
        return self.drained and self.reason.startswith(REASON_PREFIX)


def this_node() -> str:
    """This machine's node name as Slurm's default NodeName is written: the short host name."""
    return socket.gethostname().split(".")[0]


def drain_reason(cause: str) -> str:
    """`driftcheck: <cause>`, one line, at most REASON_MAX_CHARS characters."""
    reason = f"{REASON_PREFIX} {' '.join(cause.split())}"
    return reason if len(reason) <= REASON_MAX_CHARS else reason[:REASON_MAX_CHARS - 3] + "..."


def _run(argv: Sequence[str]) -> str:
    program = shutil.which(argv[0])
    if program is None:
        raise HostError(f"{argv[0]} not found: the Slurm health check needs Slurm's client tools on this node")
    try:
        done = subprocess.run([program, *argv[1:]], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        raise HostError(f"{' '.join(argv)} did not answer within {COMMAND_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        message = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise HostError(f"{' '.join(argv)} failed: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def node_state(node: str) -> NodeState:
    """The node's state and reason, from `sinfo --noheader --Node --nodes NODE --format '%T|%E'`."""
    out = _run(["sinfo", "--noheader", "--Node", "--nodes", node, "--format", "%T|%E"])
    line = next((row for row in out.splitlines() if row.strip()), None)
    if line is None:
        raise HostError(f"Slurm knows no node {node} (give its NodeName with --node)")
    state, _, reason = line.partition("|")
    reason = reason.strip()
    return NodeState(node, state.strip().lower(), "" if reason == "none" else reason)


def drain(node: str, reason: str) -> None:
    """`scontrol update nodename=NODE state=drain reason=REASON`."""
    _run(["scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}"])


def resume(node: str) -> None:
    """`scontrol update nodename=NODE state=resume`: the drain lifted."""
    _run(["scontrol", "update", f"nodename={node}", "state=resume"])
