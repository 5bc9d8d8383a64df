"""`driftcheck export prometheus` read by a real node_exporter, scraped by a real Prometheus, queried in PromQL.

Two node_exporters: one over this machine's textfile (a real check, drift made by OMP_NUM_THREADS=1 as in
tests/analysis/test_gate.py), one over the export of the recorded 8 x H100 machine (tests/reports/helpers.py),
so the README's Grafana queries are run on GPUs. The queries are the README's, word for word.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from driftcheck.reports.env_digest import family_digests
from driftcheck.reports.prometheus import all_metrics, write_textfile
from driftcheck.snapshot.model import Snapshot
from tests.conftest import CliResult
from tests.reports.helpers import large_document
from tests.reports.prometheus_stack import PrometheusStack, needs_prometheus, start_stack

pytestmark = [needs_prometheus, pytest.mark.slow]

# The README's queries (tests/test_readme_operations.py holds the README to them).
QUERIES = DRIVERS, DRIFTED, CAUSES = ("count by (driver_version) (driftcheck_gpu_info)", "driftcheck_check_drift == 1",
                                      "driftcheck_check_causes > 0")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[PrometheusStack]:
    started = start_stack(tmp_path / "prometheus", exporters=2)
    try:
        yield started
    finally:
        started.stop()


def test_a_drift_on_this_host_reaches_promql_with_its_cause_and_leaves_when_it_is_gone(
        stack: PrometheusStack, cli_process: Callable[..., CliResult]) -> None:
    here, recorded = stack.textfile_dirs
    assert cli_process("baseline", "save", "default").returncode == 0
    drift = cli_process("export", "prometheus", "--textfile-dir", str(here), env={"OMP_NUM_THREADS": "1"})
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert "DRIFT (OMP_NUM_THREADS unset -> 1)" in drift.stdout
    gpus = Snapshot(large_document(), "8 x H100")
    write_textfile(recorded, all_metrics(gpus, None, family_digests(gpus, b"k" * 32)))

    drifted = stack.wait_for(DRIFTED)
    assert [row["metric"]["reference"] for row in drifted] == ["default"]  # type: ignore[index]
    causes = stack.wait_for(CAUSES)
    assert [(row["metric"]["category"], row["value"][1]) for row in causes] == [("env_var_other", "1")]  # type: ignore[index]
    drivers = stack.wait_for(DRIVERS)
    assert [(row["metric"], row["value"][1]) for row in drivers] == [({"driver_version": "535.161.08"}, "8")]  # type: ignore[index]

    clean = cli_process("export", "prometheus", "--textfile-dir", str(here))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    deadline = time.monotonic() + 60
    while stack.query(DRIFTED) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert stack.query(DRIFTED) == []
    assert stack.query("driftcheck_check_drift == 0")
