"""Other work's CPU use during a run, measured on the live machine with a real busy process."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from driftcheck.baselines.load import OtherLoad, load_report, load_warning

BUSY = "import time\nend = time.time() + 2.0\nwhile time.time() < end: pass"


@pytest.mark.slow  # starts a busy process and measures it
def test_a_busy_neighbour_shows_in_other_cpu_cores() -> None:
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.2)
        meter = OtherLoad()
        time.sleep(0.8)  # the neighbour is not reaped yet: its CPU time is not ours
        report = load_report(meter)
    finally:
        busy.kill()
        busy.wait()
    assert float(report["other_cpu_cores"]) > 0.3
    assert "busy during the benchmarks" in str(load_warning(report))


def test_our_own_work_is_not_other_load() -> None:
    meter = OtherLoad()
    before = meter.own_s
    # Spin for 0.3 s of this process's own CPU time, not of the wall clock: on a busy machine a wall-clock
    # spin may get almost no CPU, and the test would measure the machine instead of the accounting.
    end = time.process_time() + 0.3
    while time.process_time() < end:
        sum(range(1000))
    assert OtherLoad().own_s - before > 0.2
    assert load_warning({"cpus": 2, "other_cpu_cores": 0.1}) is None
