"""`driftcheck record`: save what the probes gathered on a host, redacted, as a replayable recording.

A recording holds the raw inputs (files, listings, command output, facts-script results), not the
parsed data, so a newer driftcheck can re-parse a user's machine, and a recording with one file
edited (a governor, a THP setting, a cgroup limit) is a test case. Secrets are redacted on the way
to disk exactly as in a snapshot: the environment, every process's environ and command line, and
credentials in URLs or token shapes anywhere in recorded text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from driftcheck.errors import HostError, UsageError
from driftcheck.hosts import Host, RecordingHost
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import ProbeOutcome, ProgressCallback, run_probes

_PROC_ENVIRON = re.compile(r"^/proc/[^/]+/environ$")
_PROC_CMDLINE = re.compile(r"^/proc/[^/]+/cmdline$")
_PROC_PID_FILE = re.compile(r"^/proc/(\d+)/")


@dataclass(frozen=True)
class RecordResult:
    """Where a recording went and how each probe ended while it was taken."""

    directory: Path
    outcomes: dict[str, ProbeOutcome]
    files: int
    commands: int


def redact_file(redactor: Redactor, path: str, content: bytes, probes: Sequence[Probe] = ()) -> bytes:
    """A file's content as it may be stored: what one of `probes` keeps of it when it keeps less than the
    file (the boot flags of /proc/cmdline), else environ and cmdline redacted, other text scrubbed."""
    for probe in probes:
        kept = probe.record_file(path, content)
        if kept is not None:
            return kept
    if _PROC_ENVIRON.match(path):
        items = [item.decode("utf-8", errors="surrogateescape") for item in content.split(b"\0") if item]
        pairs = dict(item.partition("=")[::2] for item in items if "=" in item)
        redacted = redactor.environ(pairs)
        return b"".join(f"{k}={v}".encode("utf-8", errors="surrogateescape") + b"\0" for k, v in redacted.items())
    if _PROC_CMDLINE.match(path):
        argv = [item.decode("utf-8", errors="surrogateescape") for item in content.split(b"\0") if item]
        return b"".join(arg.encode("utf-8", errors="surrogateescape") + b"\0" for arg in redactor.argv(argv))
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return content  # binary (a shared object): holds no credential text, and its hash must stay true
    scrubbed = redactor.scrub_value(text)
    return content if scrubbed == text else scrubbed.encode("utf-8")


def recording_host(inner: Host, redactor: Redactor, probes: Sequence[Probe] = ()) -> RecordingHost:
    """A RecordingHost around `inner` that redacts everything on its way to disk and keeps of each file
    what `probes` say they keep."""
    return RecordingHost(inner, redact_environ=redactor.environ,
                         redact_file=lambda path, content: redact_file(redactor, path, content, probes),
                         redact_text=redactor.scrub_value)


def _forget_other_processes(recorder: RecordingHost, probes: Sequence[Probe], outcomes: dict[str, ProbeOutcome],
                            options: ProbeOptions) -> None:
    """Drop what the probes read of processes none of them needs again (a `--process` pattern reads every
    command line): other users' command lines stay private.

    A replay then finds no command line for them, so the same pattern matches the same processes.
    """
    described: set[int] = set()
    for probe in probes:
        outcome = outcomes.get(probe.name)
        described |= probe.recorded_processes(outcome.data if outcome else None, recorder.files, options)
    for path in list(recorder.files):
        pid = _PROC_PID_FILE.match(path)
        if pid and int(pid.group(1)) not in described:
            del recorder.files[path]


def ensure_empty_directory(directory: Path) -> None:
    """Refuse a directory that exists and holds anything (a recording never overwrites the user's files)."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()):
        raise UsageError(f"{directory} is not empty; record into a new or empty directory")


def record(directory: Path, host: Host, probes: Sequence[Probe], redactor: Redactor,
           options: ProbeOptions | None = None, progress: ProgressCallback | None = None) -> RecordResult:
    """Run `probes` against `host` and save their raw inputs, redacted, to the empty `directory`."""
    ensure_empty_directory(directory)
    options = options or ProbeOptions()
    recorder = recording_host(host, redactor, probes)
    outcomes = run_probes(recorder, probes, options, progress)
    _forget_other_processes(recorder, probes, outcomes, options)
    recorder.save(directory, options=options.to_json())
    return RecordResult(directory, outcomes, len(recorder.files), len(recorder.commands))


def replay_options(host: Host, pids: Sequence[int] = (), patterns: Sequence[str] = ()) -> ProbeOptions:
    """The options to replay `host` with: the processes given now, else those the recording was taken with,
    and the rest as recorded (a live host has no recorded options: the defaults)."""
    try:
        recorded = ProbeOptions.from_json(host.recorded_options or {})
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:  # OptionError is a DriftcheckError
        # A recording is another machine's bytes: options of another shape are its fault, said in one line.
        raise HostError(f"the recording's probe options are not of the shape driftcheck writes ({exc})") from None
    if pids or patterns:
        return replace(recorded, pids=tuple(pids), process_patterns=tuple(patterns))
    return recorded
