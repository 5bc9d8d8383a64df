"""Recording a host's inputs to a directory and replaying it gives the same probe data."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftcheck.errors import HostError
from driftcheck.hosts import LocalHost, RecordingHost, ReplayHost
from driftcheck.hosts.base import CommandResult
from driftcheck.probes import builtin_probes
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
from driftcheck.snapshot.keys import load_redaction_secret


def test_record_then_replay_gives_the_same_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "supersecret-value")
    redactor = Redactor(load_redaction_secret())
    recording = RecordingHost(LocalHost(), redact_environ=redactor.environ)
    probes = builtin_probes(redactor)
    live = Prober(recording, redactor).snapshot(probes)
    # A file read, a missing file, a directory listing and a command, as probes do.
    recording.read_bytes("/proc/self/status")
    with pytest.raises(FileNotFoundError):
        recording.read_bytes("/nonexistent/x")
    recording.list_dir("/proc/self")
    recording.run(["uname", "-r"])
    recording.save(tmp_path / "rec")
    assert "supersecret-value" not in (tmp_path / "rec" / "host.json").read_text()

    replay = ReplayHost(tmp_path / "rec")
    replayed = Prober(replay, redactor).snapshot(probes)
    assert replayed.document["origin"] == "replayed"
    for name in ("python", "env"):
        assert replayed.probe_data(name) == live.probe_data(name)
    assert replay.read_bytes("/proc/self/status") == recording.files["/proc/self/status"]
    with pytest.raises(FileNotFoundError):
        replay.read_bytes("/nonexistent/x")
    with pytest.raises(FileNotFoundError):
        replay.read_bytes("/etc/never-recorded")
    assert replay.run(["uname", "-r"]).stdout == recording.inner.run(["uname", "-r"]).stdout
    with pytest.raises(FileNotFoundError):
        replay.run(["nvidia-smi"])


def test_saving_over_a_recording_is_refused(tmp_path: Path) -> None:
    recording = RecordingHost(LocalHost())
    recording.save(tmp_path / "rec")
    with pytest.raises(HostError, match="already holds"):
        recording.save(tmp_path / "rec")


def test_a_directory_that_is_not_a_recording(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="not a recording"):
        ReplayHost(tmp_path)


def test_a_recorded_command_result_reads_back_and_a_malformed_one_is_refused() -> None:
    result = CommandResult(("nvidia-smi", "-q"), 0, "out", "")
    assert CommandResult.from_json(result.to_json()) == result
    with pytest.raises(ValueError, match="not a command result"):
        CommandResult.from_json({"argv": "nvidia-smi -q", "returncode": 0, "stdout": "", "stderr": ""})
    with pytest.raises(ValueError, match="not a command result"):
        CommandResult.from_json({"argv": ["nvidia-smi"], "returncode": None, "stdout": "", "stderr": ""})
