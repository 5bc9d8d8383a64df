"""The dynamic loader's cache as `ldconfig -p` lists it: which system libraries a process would load.

The kernels probe (the CUDA, NCCL and driver libraries it hashes) and the nccl probe (the libnccl the loader
finds) both read it. A snapshot runs it once (`Probe.shared_commands`, answered by
`driftcheck.hosts.shared.SharedCommandsHost`): it took three runs, ~7 ms each, one of them before the target
interpreter's run could start.
"""

from __future__ import annotations

from driftcheck.errors import CommandTimeout, ConnectionLost
from driftcheck.hosts import CommandResult, Host

# ldconfig lives in /sbin, which a non-root PATH often lacks: the second is tried when the first cannot run.
LDCONFIG_ARGVS: tuple[tuple[str, ...], ...] = (("ldconfig", "-p"), ("/sbin/ldconfig", "-p"))


def loader_cache(host: Host) -> CommandResult | None:
    """`ldconfig -p` as `host` answers it; None where no ldconfig could be run (absent, timed out)."""
    for argv in LDCONFIG_ARGVS:
        try:
            return host.run(list(argv), timeout_s=10.0)
        except (OSError, CommandTimeout, ConnectionLost):
            continue
    return None
