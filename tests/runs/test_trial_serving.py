"""`driftcheck try` against a real `transformers serve` started per run (tests/servers.py's tiny model).

Kept as short as a trial can be: 2 rounds of 2 variants is 4 server starts (about 10 s each on an idle
2-core machine); 2 pairs can never decide at 5 %, so the verdict is the resolution stated, with the pairs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from driftcheck.runs.store import RunStore
from tests.conftest import REPO_ROOT, CliResult
from tests.servers import STARTUP_LIMIT_S, TinyModel, free_port

pytestmark = pytest.mark.slow

# The client: one short completion, its own time printed (no curl needed).
CLIENT = ("import json, sys, time, urllib.request as u; t = time.perf_counter(); "
          "u.urlopen(u.Request(sys.argv[1] + '/v1/completions', json.dumps({'model': sys.argv[2], 'prompt': "
          "'the cat', 'max_tokens': 4}).encode(), {'Content-Type': 'application/json'}), timeout=120).read(); "
          "print(f'completion: {(time.perf_counter() - t) * 1000:.3f} ms')")
METRIC = "completion[ms]=completion: ([0-9.]+) ms"



def _servers_of(model: TinyModel, port: int) -> list[psutil.Process]:
    """Every `transformers serve` of this model on the trial's port still alive (not a zombie); the session's
    own server of the same model (other serving tests) listens on another port and is not the trial's."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        words = process.info["cmdline"] or []
        if ("serve" in words and str(model.path) in words and str(port) in words
                and process.info["status"] != psutil.STATUS_ZOMBIE):
            found.append(process)
    return found


def _trial_args(model: TinyModel, port: int) -> list[str]:
    url = f"http://127.0.0.1:{port}"
    return ["try", "--seed", "7", "--max-pairs", "2", "--metric", METRIC, "--a=-OMP_NUM_THREADS",
            "--b", "OMP_NUM_THREADS=1", "--server-cmd", " ".join(model.serve_command(port)), "--ready", url + "/health",
            "--ready-timeout", str(STARTUP_LIMIT_S), "--", sys.executable, "-c", CLIENT, url, str(model.path)]


def test_try_against_transformers_serve_started_per_run_states_its_resolution_with_the_pairs(
        cli: Callable[..., CliResult], tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.setenv(name, tiny_model.env[name])
    port = free_port()
    result = cli(*_trial_args(tiny_model, port))
    assert result.returncode == 0, result.stderr  # 2 pairs cannot decide: no difference, and why
    lines = result.stdout.splitlines()
    assert lines[0].startswith("B vs A: ") and " 2 pairs, " in lines[0], lines
    assert lines[0].endswith("no difference resolved: nothing could have been seen with so few pairs"), lines[0]
    assert "  A: -OMP_NUM_THREADS" in lines and "  B: OMP_NUM_THREADS=1" in lines
    rounds = lines[lines.index("rounds:") + 1:]
    assert [line.split()[0] for line in rounds] == ["1", "2"]
    assert all(" A " in line and " B " in line and line.endswith(" ms") for line in rounds), rounds
    # four servers were started (one per run, logged as such on stderr) and none is left
    assert result.stderr.count("round ") == 4, result.stderr
    assert _servers_of(tiny_model, port) == []
    records = RunStore().entries()
    assert len(records) == 4 and all(r.metric("completion") for r in records)


def test_ctrl_c_during_a_trial_against_transformers_serve_leaves_no_server(tiny_model: TinyModel,
                                                                            tmp_path: Path) -> None:
    port = free_port()
    env = {**tiny_model.env, "PYTHONPATH": str(REPO_ROOT), "DRIFTCHECK_HOME": str(tmp_path)}
    # Its own session: driftcheck leads a process group, as a shell's foreground job does.
    trial = subprocess.Popen([sys.executable, "-m", "driftcheck", *_trial_args(tiny_model, port)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        servers: list[psutil.Process] = []
        while not servers or not _answers(f"http://127.0.0.1:{port}/health"):
            assert time.monotonic() < deadline and trial.poll() is None, "the server never came up"
            servers = [p for p in _servers_of(tiny_model, port) if p.pid in _descendants(trial.pid)]
            time.sleep(0.2)
        os.killpg(trial.pid, signal.SIGINT)  # what Ctrl-C sends: the whole foreground group
        _, err = trial.communicate(timeout=60)
    finally:
        if trial.poll() is None:
            trial.kill()
    assert trial.returncode == 130, err
    assert b"interrupted" in err
    for server in servers:  # is_running() compares the start time too: a reused pid is not this server
        assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
    assert _servers_of(tiny_model, port) == []


def _descendants(pid: int) -> set[int]:
    try:
        return {child.pid for child in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False
