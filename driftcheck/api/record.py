"""`record`: run the probes and save everything they read, redacted, for `snapshot --replay` to build from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from driftcheck.hosts.targets import LOCAL, host_for
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.prober import Prober
from driftcheck.probes.record import RecordResult, ensure_empty_directory
from driftcheck.probes.runner import ProgressCallback


def record(directory: str | Path, *, probes: Sequence[str] = (), skip: Sequence[str] = (), target: str = LOCAL,
           python: str | None = None, identity: str | None = None, accept_new_host_key: bool = False,
           pids: Sequence[int] = (), processes: Sequence[str] = (),
           progress: ProgressCallback | None = None) -> RecordResult:
    """Probe the machine `target` names (`local`, or `[user@]host[:port]` over SSH with `identity` and
    `accept_new_host_key`) and save what the probes read, redacted as in a snapshot, to `directory`, which
    must be new or empty (checked before anything is opened). `probes`/`skip` choose probes by name;
    `pids`/`processes` (regexes) also describe running processes; `progress` receives the probes done."""
    directory = Path(directory)
    ensure_empty_directory(directory)
    options = ProbeOptions(pids=tuple(pids), process_patterns=tuple(processes))
    with host_for(target, python, identity=identity, accept_new_host_key=accept_new_host_key) as host:
        prober = Prober.for_user(host, options, sign=False, progress=progress)
        return prober.record(directory, prober.probes(probes or None, skip or None))
