"""Snapshots of every node of a Slurm allocation, through `srun --ntasks-per-node=1`.

Each task runs `driftcheck snapshot -o -` on its node (driftcheck installed there, as on a shared
filesystem or image) and prints its signed snapshot on stdout. `srun --label` prefixes every line
with the task number, so the interleaved output splits back into one document per task; each is
parsed and its signature verified before it counts. An intact signature says nothing of whose it is:
each node's signer is named (`signers`), and with `require_trusted` a node signed by a key the user does
not trust is a failure of that node.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from driftcheck.errors import DriftcheckError, HostError, SnapshotError
from driftcheck.hosts.process_tree import stop_tree
from driftcheck.snapshot.model import Snapshot, parse_snapshot
from driftcheck.snapshot.signing import verify_document
from driftcheck.snapshot.trust import Signer, TrustStore

_LABELLED = re.compile(r"^\s*(\d+): ?(.*)$")
# Beyond the snapshot itself: what srun needs to allocate and start the step.
SRUN_GRACE_S = 60.0
# How long srun may take to cancel its step once told to.
_SRUN_CANCEL_S = 30.0


@dataclass
class SlurmGather:
    """Verified snapshots by node name, who signed each, and the tasks that gave none, with why."""

    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    signers: dict[str, Signer] = field(default_factory=dict)
    srun_returncode: int = 0


def driftcheck_command() -> list[str]:
    """How the nodes start driftcheck by default: this interpreter's, as found on a shared filesystem."""
    return [sys.executable, "-m", "driftcheck"]


def srun_argv(srun_args: Sequence[str], node_command: Sequence[str], snapshot_args: Sequence[str]) -> list[str]:
    """`srun --ntasks-per-node=1 --label [SRUN ARGS] <driftcheck> snapshot -o - --no-store -q [ARGS]`."""
    srun = shutil.which("srun")
    if srun is None:
        raise HostError("srun not found: --slurm needs the Slurm client tools on this machine")
    return [srun, "--ntasks-per-node=1", "--label", *srun_args, *node_command, "snapshot", "-o", "-", "--no-store",
            "--quiet", *snapshot_args]


def split_labelled(stream: str) -> dict[int, str]:
    """The text each task printed, from `srun --label` output (`N: line`); unlabelled lines are dropped."""
    tasks: dict[int, list[str]] = {}
    for line in stream.splitlines():
        match = _LABELLED.match(line)
        if match:
            tasks.setdefault(int(match[1]), []).append(match[2])
    return {task: "\n".join(lines) + "\n" for task, lines in sorted(tasks.items())}


def verified_snapshot(text: str, source: str) -> Snapshot:
    """The snapshot a task printed, parsed and with an intact signature; SnapshotError otherwise."""
    snapshot = parse_snapshot(text, source)
    verdict = verify_document(snapshot.document)
    if not verdict.intact:
        raise SnapshotError(source, f"signature check failed: {verdict.message}")
    return snapshot


def gather(srun_args: Sequence[str], node_command: Sequence[str], snapshot_args: Sequence[str],
           timeout_s: float, trust: TrustStore | None = None, require_trusted: bool = False) -> SlurmGather:
    """Run the snapshot once per node and collect what came back: verified snapshots, their signers (by
    `trust`, default the user's) and failures; with `require_trusted` an untrusted signer is a failure."""
    trust = trust or TrustStore()
    argv = srun_argv(srun_args, node_command, snapshot_args)
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, errors="replace", start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout_s + SRUN_GRACE_S)
    except subprocess.TimeoutExpired:
        # srun cancels its step on SIGINT (twice within a second: at once); then it is safe to reap. Its pipes
        # are read meanwhile, so a full one does not keep it from ending.
        stop_tree(process, grace_s=_SRUN_CANCEL_S, signals=(signal.SIGINT, signal.SIGINT),
                  wait=lambda timeout: process.communicate(timeout=timeout))
        raise HostError(f"srun ran past {timeout_s + SRUN_GRACE_S:g} s and was stopped") from None
    result = SlurmGather(srun_returncode=process.returncode)
    errors = split_labelled(stderr)
    outputs = split_labelled(stdout)
    for task in sorted(set(outputs) | set(errors)):
        text = outputs.get(task, "")
        try:
            if not text.strip():
                raise SnapshotError(f"task {task}", "printed no snapshot")
            snapshot = verified_snapshot(text, f"slurm task {task}")
        except DriftcheckError as exc:
            last = [line for line in errors.get(task, "").splitlines() if line.strip()]
            result.failures[f"task {task}"] = last[-1] if last else str(exc)
            continue
        name = snapshot.host_name
        if name in result.snapshots or name in result.failures:
            name = f"{name} (task {task})"
        signer = trust.signer_of(snapshot.document)
        if require_trusted and not signer.trusted:
            result.failures[name] = f"{signer.text()}, which you do not trust (--require-trusted)"
            continue
        result.signers[name] = signer
        result.snapshots[name] = snapshot
    if not result.snapshots and not result.failures:
        last = [line for line in stderr.splitlines() if line.strip()]
        raise HostError(f"srun exited {process.returncode} without any task output"
                        + (f": {last[-1]}" if last else ""))
    return result
