"""Typed errors of the library; the CLI alone turns them into a message and an exit code."""

from __future__ import annotations


class DriftcheckError(Exception):
    """Base of every error driftcheck reports to the user as one line (exit code 2)."""

    exit_code = 2


class SnapshotError(DriftcheckError):
    """A snapshot could not be read: truncated, not a snapshot, or of a newer schema."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class TamperedSnapshotError(SnapshotError):
    """A signed snapshot whose content no longer matches its signature."""


class UnknownSnapshotError(DriftcheckError):
    """A snapshot reference (path, id, @latest, baseline:NAME) that matches nothing, or several."""

    def __init__(self, reference: str, reason: str) -> None:
        super().__init__(f"{reference!r}: {reason}")
        self.reference = reference
        self.reason = reason


class KeyFileError(DriftcheckError):
    """The signing key or redaction secret could not be read or created."""


class UsageError(DriftcheckError):
    """Arguments that cannot work together, or a name driftcheck does not know."""


class OptionError(UsageError):
    """An option of a library call that cannot work, in the library's terms: `python=/x: no executable
    interpreter there`. `option` is the request field's name, `value` the value as shown (None: none to
    show); the CLI re-words it as its flag."""

    def __init__(self, option: str, value: str | None, reason: str) -> None:
        super().__init__(f"{option}={value}: {reason}" if value is not None else f"{option}: {reason}")
        self.option = option
        self.value = value
        self.reason = reason


class HostError(DriftcheckError):
    """A host that cannot be reached or is missing what the command needs."""


# Probe outcomes, raised inside `gather` and turned into a status by the runner (never shown as errors).
# They live here, a leaf module, so code outside the probes package can raise them without importing it.

class ProbeUnavailable(Exception):
    """What the probe reads is not on this host (no driver, no library, no file): not an error."""


class ProbeDenied(Exception):
    """The probe lacks the permission to read what it needs."""


class HostKeyError(HostError):
    """An SSH host key that is not trusted: unknown (not in known_hosts) or changed since it was recorded."""

    def __init__(self, message: str, host: str, fingerprint: str) -> None:
        super().__init__(message)
        self.host = host
        self.fingerprint = fingerprint


class UnknownHostKeyError(HostKeyError):
    """The host offered a key known_hosts does not hold; trusted only with --accept-new-host-key."""


class ChangedHostKeyError(HostKeyError):
    """The host offered a key other than the one known_hosts holds for it: always refused."""


# Failures of one call on a host (a command, a read, a facts script). They end the probe that made the
# call with the outcome in PROBE_OUTCOMES, never the snapshot. They are not DriftcheckErrors: the CLI
# never shows them as its own error.

class CommandTimeout(Exception):
    """A command on a host ran past its time limit and was stopped."""


class TargetPythonError(Exception):
    """The target interpreter could not run a facts script (not a Python, too old), or printed no JSON."""


class FactsScriptError(Exception):
    """A facts script ran in the target interpreter and raised: a bug or a broken install, not an absence."""


class ConnectionLost(Exception):
    """The connection to a remote host dropped (or could not carry the call): the call has no answer."""


# The one table from a failure to the probe outcome it ends in. The name is the key because failures
# also cross process boundaries and recordings by name; the runner, the isolated child and replays use it.
PROBE_OUTCOMES: dict[str, tuple[type[BaseException], str]] = {
    "ProbeUnavailable": (ProbeUnavailable, "unavailable"),
    "FileNotFoundError": (FileNotFoundError, "unavailable"),
    "NotADirectoryError": (NotADirectoryError, "unavailable"),
    "IsADirectoryError": (IsADirectoryError, "unavailable"),
    "ModuleNotFoundError": (ModuleNotFoundError, "unavailable"),
    "ImportError": (ImportError, "unavailable"),
    "TargetPythonError": (TargetPythonError, "unavailable"),
    "ProbeDenied": (ProbeDenied, "denied"),
    "PermissionError": (PermissionError, "denied"),
    "CommandTimeout": (CommandTimeout, "timeout"),
    "ConnectionLost": (ConnectionLost, "error"),
    "FactsScriptError": (FactsScriptError, "error"),
}


def probe_status(exc: BaseException) -> str:
    """The outcome (unavailable, denied, timeout, error) a probe ends in when its gather or parse raised `exc`."""
    for cls, status in PROBE_OUTCOMES.values():
        if isinstance(exc, cls):
            return status
    return "error"


def probe_status_by_name(type_name: str) -> str:
    """The outcome for a failure known only by its type name (from a child process or a recording)."""
    entry = PROBE_OUTCOMES.get(type_name)
    return entry[1] if entry else "error"


def failure_by_name(type_name: str, message: str) -> BaseException:
    """The failure called `type_name` rebuilt with `message` (an OSError when the name is not in the table)."""
    entry = PROBE_OUTCOMES.get(type_name)
    return entry[0](message) if entry else OSError(message)


class CommandNotRunnable(DriftcheckError):
    """The command given to `driftcheck run` could not be started: exit 127 when not found, 126 otherwise,
    as a shell reports it."""

    def __init__(self, program: str, reason: str, exit_code: int) -> None:
        super().__init__(f"{program}: {reason}")
        self.program = program
        self.exit_code = exit_code


class RuleCatalogError(DriftcheckError):
    """The rule catalog, a fact table or a policy's patterns are malformed."""


class DeadlineError(DriftcheckError):
    """A call did not finish within its time limit (a health check that Slurm would kill at 60 s)."""
