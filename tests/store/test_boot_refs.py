"""@boot and @before-boot: a snapshot replayed from a real recording, then one from a copy of that
recording with its boot id edited (the same machine after a reboot)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.api.references import resolve_snapshot
from driftcheck.errors import UnknownSnapshotError
from tests.conftest import DATA, CliResult

RECORDING = DATA / "hosts" / "debian12-vm-docker"
BOOT_ID = "/proc/sys/kernel/random/boot_id"


def _rebooted_copy(tmp_path: Path, boot_id: str) -> Path:
    copy = tmp_path / f"boot-{boot_id[:8]}"
    shutil.copytree(RECORDING, copy)
    (copy / "files" / BOOT_ID.lstrip("/")).write_text(boot_id + "\n", "utf-8")
    return copy


def _snapshot(cli: Callable[..., CliResult], recording: Path, label: str) -> str:
    result = cli("snapshot", "--replay", str(recording), "--label", label, "--probe", "system",
                 "--probe", "env", "--probe", "python", "-q")
    assert result.returncode == 0, result.stderr
    return resolve_snapshot("@latest").id


def test_explain_before_boot_against_latest_compares_the_two_boots(cli: Callable[..., CliResult],
                                                                   tmp_path: Path) -> None:
    before = _snapshot(cli, RECORDING, "before")
    rebooted = _rebooted_copy(tmp_path, "0b7e9c52-41d6-4a8e-b2f3-6c1d0e9a7f48")
    after = _snapshot(cli, rebooted, "after")
    report = json.loads(cli("explain", "@before-boot", "@latest", "--format", "json").stdout)
    assert (report["a"]["id"], report["b"]["id"]) == (before, after)
    assert any(c["path"] == "probes.system.data.boot_id" for c in report["changes"])
    assert resolve_snapshot("@boot").id == after

    later = _snapshot(cli, rebooted, "later, same boot")
    assert resolve_snapshot("@boot").id == after  # the first of this boot, not the newest
    assert resolve_snapshot("@before-boot").id == before
    assert later != after

    log = cli("log").stdout
    marker = [n for n, line in enumerate(log.splitlines()) if "rebooted: boot 5d0c6a1e below, 0b7e9c52 above" in line]
    assert len(marker) == 1
    assert "before" in log.splitlines()[marker[0] + 1]  # the line sits between the two boots
    assert re.fullmatch(r"store: \d+ KiB on disk", log.splitlines()[-1])
    rows = json.loads(cli("log", "--format", "json").stdout)
    assert [row["new_boot"] for row in rows] == [False, True, False]


def test_check_against_before_boot(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    before = resolve_snapshot(_snapshot(cli, RECORDING, "before"))
    _snapshot(cli, _rebooted_copy(tmp_path, "0b7e9c52-41d6-4a8e-b2f3-6c1d0e9a7f48"), "after")
    result = cli("check", "--against", "@before-boot", "--format", "json", "--no-store")
    assert result.returncode in (0, 1), result.stderr
    # The reference, cut down to the probes the check took: same snapshot, same time.
    reference = json.loads(result.stdout)["a"]
    assert (reference["label"], reference["created_at"]) == ("before", before.created_at)


def test_without_a_reboot_before_boot_says_why(cli: Callable[..., CliResult]) -> None:
    with pytest.raises(UnknownSnapshotError, match="holds no snapshots"):
        resolve_snapshot("@before-boot")
    _snapshot(cli, RECORDING, "only boot")
    with pytest.raises(UnknownSnapshotError, match="from this boot"):
        resolve_snapshot("@before-boot")
    failed = cli("explain", "@before-boot", "@latest")
    assert failed.returncode == 2 and "none was taken before it" in failed.stderr
    assert cli("snapshot", "--replay", str(RECORDING), "--probe", "env", "-q").returncode == 0
    assert resolve_snapshot("@boot").label == "only boot"  # a snapshot without a boot id changes nothing
