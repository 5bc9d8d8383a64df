"""Only the user's own key reads "signed by you": another's key cannot be trusted under a name that says so
(issue 31: `key trust <a stranger's fingerprint> --name you` was accepted)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

STRANGER = "SHA256:" + base64.b64encode(bytes(range(32))).decode().rstrip("=")


@pytest.mark.parametrize("name", ["you", "You", "me", "  my   key ", "myself"])
def test_a_name_that_reads_as_you_is_refused(name: str, cli: Callable[..., CliResult]) -> None:
    done = cli("key", "trust", STRANGER, "--name", name)
    assert done.returncode == 2 and "read as your own key" in done.stderr


def test_a_hand_written_you_is_shown_as_the_fingerprint(cli: Callable[..., CliResult], driftcheck_home: Path) -> None:
    assert cli("key", "trust", STRANGER, "--name", "alice").returncode == 0
    trust_file = next(p for p in driftcheck_home.iterdir() if "trust" in p.name)
    trust_file.write_text(trust_file.read_text().replace(" alice", " you"))
    listed = cli("key", "trusted")
    assert listed.returncode == 0, listed.stderr
    assert STRANGER in listed.stdout and " you" not in listed.stdout.split(STRANGER)[1].splitlines()[0]
