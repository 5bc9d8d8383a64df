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


class HostError(DriftcheckError):
    """A host that cannot be reached or is missing what the command needs."""


# Probe outcomes, raised inside `gather` and turned into a status by the runner (never shown as errors).
# They live here, a leaf module, so code outside the probes package can raise them without importing it.

class ProbeUnavailable(Exception):
    """What the probe reads is not on this host (no driver, no library, no file): not an error."""


class ProbeDenied(Exception):
    """The probe lacks the permission to read what it needs."""


class CommandNotRunnable(DriftcheckError):
    """The command given to `driftcheck run` could not be started: exit 127 when not found, 126 otherwise,
    as a shell reports it."""

    def __init__(self, program: str, reason: str, exit_code: int) -> None:
        super().__init__(f"{program}: {reason}")
        self.program = program
        self.exit_code = exit_code
