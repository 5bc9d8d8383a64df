"""`driftcheck export prometheus|nfd` on this machine, in-process: the verdict in the files and the exit code,
and bad input as one line with exit 2."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, CliResult
from tests.servers import recorded_routes


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


@pytest.mark.slow  # a real process, serving until interrupted
def test_listen_serves_the_metrics_until_interrupted(tmp_path: Path, driftcheck_home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DRIFTCHECK_HOME": str(driftcheck_home)}
    server = subprocess.Popen([sys.executable, "-m", "driftcheck", "export", "prometheus", "--listen", "0",
                               "--no-check"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        match = re.match(r"serving http://127\.0\.0\.1:(\d+)/metrics; no check\n", first)
        assert match, first + (server.stderr.read() if server.poll() is not None and server.stderr else "")
        with urllib.request.urlopen(f"http://127.0.0.1:{match[1]}/metrics", timeout=10) as reply:
            served = reply.read()
        assert b'driftcheck_probe_success{probe="env"} 1.0' in served and b"driftcheck_check_drift" not in served
        if shutil.which("promtool"):
            checked = subprocess.run(["promtool", "check", "metrics"], input=served, capture_output=True, timeout=60,
                                     check=False)
            assert checked.returncode == 0, checked.stdout + checked.stderr
    finally:
        server.send_signal(signal.SIGINT)
        code = server.wait(timeout=30)
    assert code == 130  # interrupted: the CLI's code for Ctrl-C


def test_the_engine_the_baseline_asked_is_exported_from_its_recorded_answers(
        cli: Callable[..., CliResult], tmp_path: Path, replay_server: Callable[..., str]) -> None:
    # Real answers of SGLang 0.0.0.dev1+g753da2753 (tests/data/servers/sglang-docs-native-api/SOURCE).
    url = replay_server(recorded_routes("sglang-docs-native-api"))
    taken = cli("snapshot", "--server", url, "--probe", "env", "--probe", "python", "--probe", "server", "-q")
    assert taken.returncode == 0, taken.stderr
    assert cli("baseline", "save", "default", "@latest").returncode == 0
    nfd = cli("export", "nfd", "--features-dir", str(tmp_path))
    assert nfd.returncode == 0, nfd.stdout + nfd.stderr
    labels = (tmp_path / "driftcheck").read_text("utf-8")
    assert "/engine=sglang\n" in labels and "/engine-version=0.0.0.dev1_g753da2753\n" in labels
    assert cli("export", "prometheus", "--textfile-dir", str(tmp_path)).returncode == 0
    text = (tmp_path / "driftcheck.prom").read_text("utf-8")
    assert 'driftcheck_server_info{engine="sglang",version="0.0.0.dev1+g753da2753"} 1.0' in text
