"""A recording is another machine's files, so it is hostile input: a FIFO or a device as `host.json` is refused
(never read for ever), a recorded file larger than any machine's is refused, and a value parsed from a
hostile file that has no JSON form (`/proc/uptime` of 10 MB of 9s reads as infinity) is kept as null: each is a
one-line error or a snapshot, never an internal error."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult


@pytest.fixture
def recording(cli: Callable[..., CliResult], tmp_path: Path) -> Path:
    directory = tmp_path / "rec"
    done = cli("record", str(directory), "--probe", "system")
    assert done.returncode == 0, done.stderr
    return directory


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_host_json_that_is_no_regular_file_is_refused_at_once(kind: str, recording: Path,
                                                                cli: Callable[..., CliResult]) -> None:
    manifest = recording / "host.json"
    manifest.unlink()
    if kind == "fifo":
        os.mkfifo(manifest)
    else:
        manifest.symlink_to("/dev/zero")
    done = cli("snapshot", "--replay", str(recording))
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_huge_number_in_a_recorded_file_is_no_internal_error(recording: Path,
                                                                 cli: Callable[..., CliResult]) -> None:
    uptime = recording / "files" / "proc" / "uptime"
    if not uptime.exists():
        pytest.skip("this machine's recording holds no /proc/uptime")
    uptime.write_text("9" * 10_000_000 + " 1.0\n")
    done = cli("snapshot", "--replay", str(recording))
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
