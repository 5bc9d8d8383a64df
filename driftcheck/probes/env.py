"""`env` probe: the process environment, with secrets replaced by keyed digests."""

from __future__ import annotations

import re
from typing import Any

from driftcheck.host import Host
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.redact import Redactor

# Set by the shell or terminal, different in every session, and never a cause of a performance shift.
SHELL_NOISE = ("PWD", "OLDPWD", "SHLVL", "_", "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "TMUX", "TMUX_PANE",
               "TERM_SESSION_ID", "WINDOWID", "XDG_SESSION_ID", "STY", "WINDOW", "COLUMNS", "LINES",
               "PS1", "LS_COLORS", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")


class EnvProbe(Probe):
    """Built with the user's redactor: an unredacted environment never leaves `gather`."""

    name = "env"
    description = "process environment (credentials replaced by keyed digests)"
    timeout_s = 5.0
    needs_redactor = True
    default_category = "env_var_other"
    categories = ((r"^vars\.NCCL_", "nccl_env"),)
    volatile = tuple(rf"^vars\.{re.escape(name)}$" for name in SHELL_NOISE)

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        environ = host.environ()
        # Redact at gather time: the raw material itself may be recorded to disk or cross a process.
        return self.redactor.environ(environ)

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise ValueError("environment is not a mapping")
        return {"vars": {str(k): str(v) for k, v in sorted(raw.items())}}
