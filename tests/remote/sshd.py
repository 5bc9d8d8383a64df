"""Real OpenSSH servers on 127.0.0.1 for the tests: temporary host keys, a generated client key, a free port.

Each `Sshd` is one `sshd -D -e -f CONFIG` process that this module started and stops. Root login with
the generated key only (no passwords, no PAM). `client_home` builds a HOME for the client side with
~/.ssh/config aliases, a known_hosts file (or none) and the key, so that SSHHost resolves everything
the way it would for a user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.servers import free_port

SSHD = "/usr/sbin/sshd"
SSHD_MISSING = f"OpenSSH server not installed ({SSHD}); .ci/run installs openssh-server"
needs_sshd = pytest.mark.skipif(not Path(SSHD).is_file(), reason=SSHD_MISSING)


def keygen(path: Path, kind: str = "ed25519") -> Path:
    """A new unencrypted key pair at `path` (and `path`.pub)."""
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "driftcheck-test", "-f", str(path)],
                   check=True, timeout=30, capture_output=True)
    return path


@dataclass
class Sshd:
    """One running sshd and what a client needs to reach it."""

    directory: Path
    port: int
    host_key: Path
    process: subprocess.Popen[bytes] | None = None
    set_env: dict[str, str] = field(default_factory=dict)

    @property
    def host_public_key(self) -> str:
        """`type base64` of the host key, as a known_hosts line carries it."""
        return " ".join(Path(f"{self.host_key}.pub").read_text().split()[:2])

    def known_hosts_line(self, host: str = "127.0.0.1") -> str:
        return f"[{host}]:{self.port} {self.host_public_key}\n"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_sshd(directory: Path, authorized_key: Path, set_env: dict[str, str] | None = None,
               host_key: Path | None = None, extra: str = "") -> Sshd:
    """Start sshd on a free port of 127.0.0.1, trusting `authorized_key`.pub for root; wait until it listens."""
    directory.mkdir(parents=True, exist_ok=True)
    host_key = host_key or keygen(directory / "ssh_host_ed25519_key")
    shutil.copy(f"{authorized_key}.pub", directory / "authorized_keys")
    port = free_port()
    lines = [f"Port {port}", "ListenAddress 127.0.0.1", f"HostKey {host_key}", f"PidFile {directory}/sshd.pid",
             f"AuthorizedKeysFile {directory}/authorized_keys", "PermitRootLogin yes", "PubkeyAuthentication yes",
             "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
             "MaxStartups 100:30:200", "MaxSessions 100", "LogLevel ERROR"]
    lines += [f"SetEnv {name}={value}" for name, value in (set_env or {}).items()]
    config = directory / "sshd_config"
    config.write_text("\n".join(lines) + "\n" + extra)
    # sshd's privilege separation directory; a container may lack it.
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    log = open(directory / "sshd.log", "wb")  # noqa: SIM115 - kept open for the process's lifetime
    process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT)
    server = Sshd(directory, port, host_key, process, dict(set_env or {}))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {(directory / 'sshd.log').read_text()[-500:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.05)
    server.stop()
    raise RuntimeError("sshd did not start listening within 15 s")


def client_home(home: Path, key: Path, servers: dict[str, Sshd], known: bool = True) -> Path:
    """A HOME with ~/.ssh/config (an alias per server), known_hosts (when `known`) and the client key."""
    ssh = home / ".ssh"
    ssh.mkdir(parents=True, exist_ok=True, mode=0o700)
    config = [f"Host {alias}\n  HostName 127.0.0.1\n  Port {server.port}\n  User root\n  IdentityFile {key}\n"
              for alias, server in servers.items()]
    (ssh / "config").write_text("".join(config))
    if known:
        (ssh / "known_hosts").write_text("".join(server.known_hosts_line() for server in servers.values()))
    os.chmod(ssh / "config", 0o600)
    return home
