"""End to end: a venv given with --python, a compiled extension changed in place, two snapshots, a diff.

The first "Done when" of the software-probes issue: the package shows as `package_binary`, its
version as unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.probes.conftest import WheelVenv


def test_binary_changed_in_place_is_flagged_with_its_version_unchanged(
        wheel_venv: WheelVenv, tmp_path: Path, cli_process: Callable[..., CliResult]) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    first = cli_process("snapshot", "--python", str(wheel_venv.python), "-o", str(before))
    assert first.returncode == 0, first.stderr
    with wheel_venv.extension.open("ab") as handle:
        handle.write(b"\0patched in place")
    second = cli_process("snapshot", "--python", str(wheel_venv.python), "-o", str(after))
    assert second.returncode == 0, second.stderr

    diff = cli_process("diff", str(before), str(after), "--format", "json")
    assert diff.returncode == 1, diff.stderr
    changes = json.loads(diff.stdout)["changes"]
    flagged = [c for c in changes if c["path"] == "probes.kernels.data.modified_in_place.markupsafe"]
    assert flagged == [{"path": "probes.kernels.data.modified_in_place.markupsafe", "kind": "added",
                        "before": None, "after": [wheel_venv.extension_relative], "category": "package_binary"}]
    assert all(c["category"] == "package_binary" for c in changes if "markupsafe" in c["path"])
    assert not any(c["path"].startswith("probes.packages.data.packages.markupsafe") for c in changes)
    document = json.loads(after.read_text())
    assert document["probes"]["packages"]["data"]["packages"]["markupsafe"]["version"] == "3.0.2"
    # The venv has no torch: that probe is unavailable, and the snapshot still complete.
    assert document["probes"]["torch"]["status"] == "unavailable"


def test_a_second_snapshot_rehashes_nothing_and_says_so(
        pristine_venv: WheelVenv, cli_process: Callable[..., CliResult]) -> None:
    args = ("snapshot", "--python", str(pristine_venv.python), "--probe", "kernels", "--no-sign")
    assert cli_process(*args).returncode == 0
    again = cli_process(*args)
    assert again.returncode == 0, again.stderr
    assert "hashed now 0 (0.0 MiB)" in again.stderr
