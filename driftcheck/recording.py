"""Kept for code written against the old module path: recording and replay now live in `driftcheck.hosts`."""

from __future__ import annotations

from driftcheck.hosts.recording import RECORDING_FORMAT, RecordingHost
from driftcheck.hosts.replay import ReplayHost

__all__ = ["RECORDING_FORMAT", "RecordingHost", "ReplayHost"]
