"""Opening an SSH connection the way OpenSSH would: ~/.ssh/config, known_hosts, agent and key files.

- `~/.ssh/config`: HostName, User, Port, IdentityFile, ProxyJump, UserKnownHostsFile.
- Host keys: `~/.ssh/known_hosts` (hashed entries too) and `/etc/ssh/ssh_known_hosts`. An unknown key
  is refused with its fingerprint unless the caller accepts new keys (then it is appended to
  known_hosts, like `StrictHostKeyChecking=accept-new`); a changed key is always refused.
- Authentication: the agent, the given identity, the config's IdentityFile and the default keys.
  Never a password or passphrase prompt: this runs unattended.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko

from driftcheck.errors import ChangedHostKeyError, HostError, UnknownHostKeyError, UsageError

DEFAULT_PORT = 22
# How long ssh-agent may take to answer one request (list the keys, sign): a hung agent would hang the
# connection forever, as paramiko waits on its socket without a limit.
AGENT_TIMEOUT_S = 10.0

# paramiko logs its transport thread's failures (a garbage banner, a reset) with their tracebacks; with no
# handler anywhere, Python prints them on stderr. The failure reaches the caller as one HostError, so its
# log stays silent unless an application configures logging for it.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
SYSTEM_KNOWN_HOSTS = "/etc/ssh/ssh_known_hosts"
_TARGET = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:@\s\[\]]+))"
                     r"(?::(?P<port>\d+))?$")


@dataclass(frozen=True)
class SSHTarget:
    """`[user@]host[:port]` as the user wrote it; unset parts come from ~/.ssh/config, then defaults."""

    host: str
    user: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> SSHTarget:
        """`[user@]host[:port]` (IPv6 as `[addr]:port`); UsageError for anything else."""
        match = _TARGET.match(text.strip())
        if not match:
            raise UsageError(f"{text!r} is not a host: write [user@]host[:port]")
        port = int(match["port"]) if match["port"] else None
        if port is not None and not 0 < port < 65536:
            raise UsageError(f"{text!r}: port {port} is out of range")
        return cls(match["v6"] or match["host"], match["user"], port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        return f"{user}{host}" + (f":{self.port}" if self.port else "")


@dataclass(frozen=True)
class Endpoint:
    """Where a target resolves to after ~/.ssh/config: address, port, user, keys, jump host."""

    alias: str
    hostname: str
    port: int
    user: str
    identity_files: tuple[str, ...]
    proxy_jump: str | None
    known_hosts: tuple[str, ...]


def fingerprint(key: paramiko.PKey) -> str:
    """The key's fingerprint as OpenSSH prints it: `SHA256:` and unpadded base64."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def _ssh_dir() -> Path:
    return Path(os.path.expanduser("~")) / ".ssh"


def load_ssh_config(path: Path | None = None) -> paramiko.SSHConfig:
    """The user's ~/.ssh/config (empty when there is none)."""
    path = path or _ssh_dir() / "config"
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except FileNotFoundError:
        return paramiko.SSHConfig()
    except (OSError, ValueError, paramiko.ConfigParseError) as exc:
        raise HostError(f"{path}: cannot read SSH config: {exc}") from exc


def resolve(target: SSHTarget, config: paramiko.SSHConfig, identity: str | None = None) -> Endpoint:
    """The endpoint `target` names, with what the command line gave over what ~/.ssh/config says."""
    # paramiko gives `identityfile` as a list (its stub says every value is text).
    entry: Mapping[str, str | list[str]] = config.lookup(target.host)
    port = target.port or int(_setting(entry, "port") or DEFAULT_PORT)
    user = target.user or _setting(entry, "user") or _local_user()
    identity_files = entry.get("identityfile", [])
    identities = [identity] if identity else []
    identities += [path for path in map(os.path.expanduser, [identity_files] if isinstance(identity_files, str)
                                        else identity_files) if os.path.isfile(path)]
    known = [os.path.expanduser(p) for p in (_setting(entry, "userknownhostsfile") or "").split() if p] or \
        [str(_ssh_dir() / "known_hosts")]
    jump = _setting(entry, "proxyjump")
    return Endpoint(target.host, _setting(entry, "hostname") or target.host, port, user, tuple(identities),
                    None if not jump or jump == "none" else jump, tuple(known))


def _setting(entry: Mapping[str, str | list[str]], key: str) -> str | None:
    """One single-valued setting of an ~/.ssh/config entry, or None when the entry has none."""
    value = entry.get(key)
    return value if isinstance(value, str) else None


def _local_user() -> str:
    import getpass

    return getpass.getuser()


class _TrustPolicy(paramiko.MissingHostKeyPolicy):
    """Unknown key: refuse with its fingerprint, or (accept_new) append it to known_hosts and go on."""

    def __init__(self, endpoint: Endpoint, accept_new: bool) -> None:
        self.endpoint = endpoint
        self.accept_new = accept_new

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        where = f"{self.endpoint.alias}" + (f" ({hostname})" if hostname != self.endpoint.alias else "")
        if not self.accept_new:
            raise UnknownHostKeyError(
                f"{where}: unknown host key {key.get_name()} {fingerprint(key)}; check it, then pass "
                f"--accept-new-host-key to trust it on first use", self.endpoint.alias, fingerprint(key))
        record_host_key(Path(self.endpoint.known_hosts[0]), hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)


def record_host_key(path: Path, hostname: str, key: paramiko.PKey) -> None:
    """Append `hostname key` to the known_hosts file at `path` (created 0600, its directory 0700)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
            handle.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")
    except OSError as exc:
        raise HostError(f"cannot record the host key in {path}: {exc.strerror or exc}") from exc


def _load_known_hosts(client: paramiko.SSHClient, endpoint: Endpoint) -> None:
    for path in endpoint.known_hosts:
        if os.path.isfile(path):
            try:
                client.load_host_keys(path)
            except (OSError, paramiko.SSHException) as exc:
                raise HostError(f"{path}: cannot read known hosts: {exc}") from exc
    if os.path.isfile(SYSTEM_KNOWN_HOSTS):
        # An unreadable system file only means fewer keys known: the user's file still decides.
        with contextlib.suppress(OSError, paramiko.SSHException):
            client.load_system_host_keys(SYSTEM_KNOWN_HOSTS)


def connect(endpoint: Endpoint, accept_new: bool, timeout_s: float, config: paramiko.SSHConfig,
            jumps: tuple[paramiko.SSHClient, ...] = ()) -> tuple[paramiko.SSHClient, tuple[paramiko.SSHClient, ...]]:
    """A connected, authenticated client for `endpoint`, through its ProxyJump hosts; the jump clients too.

    Raises UnknownHostKeyError, ChangedHostKeyError or HostError, each one line.
    """
    sock: paramiko.Channel | None = None
    chain = jumps
    if endpoint.proxy_jump:
        # ProxyJump may list several hops; the last one connects to us, so walk them in order.
        hops = [SSHTarget.parse(hop) for hop in endpoint.proxy_jump.split(",")]
        previous: paramiko.SSHClient | None = None
        for hop in hops:
            hop_endpoint = resolve(hop, config)
            hop_endpoint = Endpoint(hop_endpoint.alias, hop_endpoint.hostname, hop_endpoint.port, hop_endpoint.user,
                                    hop_endpoint.identity_files, None, hop_endpoint.known_hosts)
            hop_sock = _direct_channel(previous, hop_endpoint, timeout_s) if previous else None
            previous = _open(hop_endpoint, accept_new, timeout_s, hop_sock)
            chain = (*chain, previous)
        assert previous is not None
        sock = _direct_channel(previous, endpoint, timeout_s)
    return _open(endpoint, accept_new, timeout_s, sock), chain


def _direct_channel(via: paramiko.SSHClient, endpoint: Endpoint, timeout_s: float) -> paramiko.Channel:
    transport = via.get_transport()
    if transport is None:
        raise HostError(f"jump host connection to {endpoint.alias} closed")
    try:
        return transport.open_channel("direct-tcpip", (endpoint.hostname, endpoint.port), ("127.0.0.1", 0),
                                      timeout=timeout_s)
    except (paramiko.SSHException, OSError) as exc:
        raise HostError(f"jump host could not reach {endpoint.hostname}:{endpoint.port}: {exc}") from exc


def agent(timeout_s: float = AGENT_TIMEOUT_S) -> paramiko.Agent | None:
    """The user's ssh-agent (at $SSH_AUTH_SOCK) with a time limit on every request; None when there is none
    to reach (no variable, a dangling socket: as for ssh, that only means fewer keys). HostError, one line,
    when it does not answer within `timeout_s`."""
    path = os.environ.get("SSH_AUTH_SOCK")
    if not path:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout_s)  # kept for every later request too: the signature during authentication
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    found = paramiko.Agent.__new__(paramiko.Agent)
    paramiko.agent.AgentSSH.__init__(found)
    try:
        found._connect(conn)  # type: ignore[attr-defined]  # what Agent() does with the socket it opens
    except (OSError, paramiko.SSHException) as exc:
        conn.close()
        reason = "did not answer" if isinstance(exc, TimeoutError) else f"failed: {exc or type(exc).__name__}"
        raise HostError(f"ssh-agent at {path} {reason} within {timeout_s:g} s (restart it, or unset "
                        "SSH_AUTH_SOCK to log in with key files only)") from None
    return found


def _open(endpoint: Endpoint, accept_new: bool, timeout_s: float, sock: paramiko.Channel | None) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    # Our agent, with a time limit, in place of the one paramiko would open without.
    client._agent = agent(min(timeout_s, AGENT_TIMEOUT_S))  # type: ignore[attr-defined]
    _load_known_hosts(client, endpoint)
    client.set_missing_host_key_policy(_TrustPolicy(endpoint, accept_new))
    where = f"{endpoint.user}@{endpoint.alias}" + (f":{endpoint.port}" if endpoint.port != DEFAULT_PORT else "")
    try:
        # paramiko takes a list of key files too (its stub says str only).
        key_files: Any = list(endpoint.identity_files) or None
        client.connect(endpoint.hostname, port=endpoint.port, username=endpoint.user, key_filename=key_files,
                       allow_agent=True, look_for_keys=True, timeout=timeout_s, banner_timeout=timeout_s,
                       auth_timeout=timeout_s, channel_timeout=timeout_s, sock=sock, passphrase=None)
    except UnknownHostKeyError:
        client.close()
        raise
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise ChangedHostKeyError(
            f"{where}: host key CHANGED: offered {exc.key.get_name()} {fingerprint(exc.key)}, known_hosts has "
            f"{fingerprint(exc.expected_key)}; refusing (someone may be in the middle; if the host was "
            f"reinstalled, remove its old line from known_hosts)", endpoint.alias, fingerprint(exc.key)) from None
    except paramiko.PasswordRequiredException:
        client.close()
        raise HostError(f"{where}: the key needs a passphrase; load it into ssh-agent (no prompt here)") from None
    except paramiko.AuthenticationException:
        client.close()
        raise HostError(f"{where}: authentication failed (agent and keys were tried; no password prompt "
                        f"in an unattended run; give a key with --identity)") from None
    except TimeoutError:
        client.close()
        raise HostError(f"{where}: no answer within {timeout_s:g} s") from None
    except (paramiko.SSHException, OSError, EOFError) as exc:
        client.close()
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise HostError(f"{where}: cannot connect: {reason}") from None
    transport = client.get_transport()
    if transport is not None:
        # A dead link is noticed within seconds instead of at the next TCP timeout.
        transport.set_keepalive(5)
    return client
