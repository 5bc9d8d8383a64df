"""Malformed and hostile snapshot inputs: one line, exit 2, bounded in time and memory, never a traceback."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.errors import SnapshotError
from driftcheck.snapshot.model import new_document, parse_snapshot, read_snapshot_file
from tests.conftest import CliResult


def _document(**probes: dict) -> dict:
    return new_document({"name": "vm"}, {name: {"status": "ok", "data": data, "error": None, "duration_s": 0.1}
                                         for name, data in probes.items()})


@pytest.mark.parametrize("text, reason", [
    ('{"schema": 1, "schema": 2, "created_at": "x", "host": {}, "probes": {}}', "appears twice"),
    (json.dumps(_document(env={"vars": {"A": "1"}})).replace('"1"', "1e400"), "out of range"),
    (json.dumps(_document(env={"vars": {"A": "1"}})).replace('"1"', '"\\ud800"'), "lone surrogate"),
    ('{"schema": 1, "created_at": "x", "host": {}, "probes": {"env": {"status": "ok", "data": '
     + "[" * 200 + "]" * 200 + "}}}", "nested deeper"),
    (json.dumps(_document(env=None)).replace('"data": null', '"data": [1, 2]'), "data must be an object"),
    (json.dumps(_document(env={})).replace('"duration_s": 0.1', '"duration_s": "slow"'), "duration_s"),
])
def test_what_json_allows_but_a_snapshot_cannot_hold_is_refused(text: str, reason: str) -> None:
    with pytest.raises(SnapshotError, match=reason):
        parse_snapshot(text, "bad.json")


def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(SnapshotError, match="not a regular file \\(a FIFO\\)"):
        read_snapshot_file(fifo)


def test_an_endless_device_is_refused_without_reading_it() -> None:
    with pytest.raises(SnapshotError, match="a character device"):
        read_snapshot_file(Path("/dev/zero"))


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from driftcheck.snapshot.inputs import MAX_BYTES

    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: no real disk used
    with pytest.raises(SnapshotError, match="larger than a snapshot file can be"):
        read_snapshot_file(big)


@pytest.mark.parametrize("target", ["/dev/zero", "FIFO"])
def test_show_and_diff_of_special_files_are_one_line_exit_2(cli: Callable[..., CliResult], tmp_path: Path,
                                                            target: str) -> None:
    if target == "FIFO":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)
    for argv in (("show", target), ("diff", target, target)):
        done = cli(*argv)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("levels", [62, 63, 64, 65, 66])
@pytest.mark.parametrize("leaf", ["1", '"x"', "[]", "{}", '{"k": 1}'])
def test_the_depth_alone_is_refused_where_the_whole_check_refuses_it(levels: int, leaf: str) -> None:
    """Text with no surrogate escape has its depth checked alone (objects and arrays only): it must refuse
    exactly what the check of every value refuses."""
    from driftcheck.snapshot.model import _check_values

    value = json.loads("[" * levels + leaf + "]" * levels)
    outcomes = []
    for strings in (True, False):
        try:
            _check_values(value, 0, strings)
            outcomes.append("ok")
        except ValueError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def test_a_lone_surrogate_in_a_string_given_as_text_is_refused() -> None:
    text = json.dumps(_document(env={"vars": {"A": "1"}})).replace('"1"', '"\ud800"')
    with pytest.raises(SnapshotError, match="lone surrogate"):
        parse_snapshot(text, "bad.json")
