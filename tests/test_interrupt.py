"""Ctrl-C at any moment, the first tenths of a second included, is one line and exit 130, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [0.15, 0.3, 0.6, 1.0, 2.0])
def test_ctrl_c_while_starting_or_probing_is_one_line_and_130(delay_s: float, tmp_path: Path) -> None:
    env = {**os.environ, "DRIFTCHECK_HOME": str(tmp_path), "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "driftcheck", "snapshot", "--no-store", "-o",
                                str(tmp_path / "s.json")], env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(delay_s)
    os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole foreground group
    _, err = process.communicate(timeout=120)
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text
    if process.returncode == 0:  # finished before the signal came: nothing to say
        return
    assert process.returncode == 130, text
    assert text == "driftcheck: interrupted\n"
