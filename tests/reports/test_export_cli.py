"""`driftcheck export prometheus|nfd` on this machine, in-process: the verdict in the files and the exit code,
and bad input as one line with exit 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult


def test_nfd_labels_say_drift_after_a_change_and_no_drift_before(cli: Callable[..., CliResult], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("baseline", "save", "default").returncode == 0
    clean = cli("export", "nfd", "--features-dir", str(tmp_path))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    text = (tmp_path / "driftcheck").read_text("utf-8")
    assert "driftcheck.feature.node.kubernetes.io/drift=false\n" in text
    assert "driftcheck.feature.node.kubernetes.io/baseline=default\n" in text
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    drifted = cli("export", "nfd", "--features-dir", str(tmp_path))
    assert drifted.returncode == 1
    assert "drift=true\n" in (tmp_path / "driftcheck").read_text("utf-8")
    assert "DRIFT (OMP_NUM_THREADS unset -> 1)" in drifted.stdout


def test_without_a_reference_the_facts_are_exported_and_the_reason_given(cli: Callable[..., CliResult],
                                                                        tmp_path: Path) -> None:
    result = cli("export", "prometheus", "--textfile-dir", str(tmp_path))
    assert result.returncode == 0
    assert "no check: nothing to check against" in result.stdout
    text = (tmp_path / "driftcheck.prom").read_text("utf-8")
    assert "driftcheck_probe_success" in text and "driftcheck_check_drift" not in text


def test_an_unknown_reference_is_trouble_not_a_silent_export(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    result = cli("export", "prometheus", "--textfile-dir", str(tmp_path), "--against", "baseline:nope")
    assert result.returncode == 2 and result.stderr.startswith("driftcheck: error:")
    assert not (tmp_path / "driftcheck.prom").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["export", "prometheus"], "one of the arguments --textfile-dir --listen is required"),
    (["export", "prometheus", "--listen", "localhost:http"], "give ADDR:PORT or PORT"),
    (["export", "prometheus", "--listen", "99999"], "give ADDR:PORT or PORT"),
    (["export", "prometheus", "--textfile-dir", "/nonexistent-dir", "--no-check"], "no such directory"),
    (["export", "nfd", "--features-dir", "/nonexistent-dir", "--no-check"], "no such directory"),
    (["export", "nfd", "--features-dir", ".", "--no-check", "--against", "x"], "--no-check exports without a check"),
])
def test_bad_input_is_one_line_and_exit_2(cli: Callable[..., CliResult], args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
