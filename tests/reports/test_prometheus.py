"""The Prometheus export of a snapshot and a check: what it holds, bounded labels, promtool's verdict, the textfile.

The 8-GPU snapshot is tests/reports/helpers.py's (8 recorded H100s from a real `nvidia-smi -q`, 600
packages, 300 environment variables). `promtool` is Debian's (prometheus 2.42.0), the checker Prometheus
ships for exactly this file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from driftcheck.api.export import ExportRequest, MachineState, PrometheusServer, prometheus_metrics, series_count
from driftcheck.errors import DriftcheckError
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.reports.env_digest import family_digests
from driftcheck.reports.prometheus import TEXTFILE_NAME, all_metrics, exposition, unix_seconds, write_textfile
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.vocabulary import CATEGORIES
from tests.reports.helpers import large_document

SECRET = b"k" * 32
VERDICT = DriftVerdict(reference="default", drift=True, checked_at=1_796_000_000.0, causes={"pcie_link": 1},
                       first_cause="GPU 3 PCIe link x16 -> x8")
needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None,
                                    reason="promtool not installed; .ci/run installs Debian's prometheus")


@pytest.fixture(scope="module")
def eight_gpus() -> Snapshot:
    return Snapshot(large_document(), "8 x H100")


def _samples(text: bytes, name: str) -> list[Sample]:
    return [sample for family in text_string_to_metric_families(text.decode("utf-8")) for sample in family.samples
            if sample.name == name]


def test_every_gpu_is_one_info_series_with_its_recorded_identity(eight_gpus: Snapshot) -> None:
    text = exposition(all_metrics(eight_gpus, VERDICT, family_digests(eight_gpus, SECRET)))
    info = _samples(text, "driftcheck_gpu_info")
    assert len(info) == 8
    assert {s.labels["driver_version"] for s in info} == {"535.161.08"}
    assert {s.labels["name"] for s in info} == {"NVIDIA H100 80GB HBM3"}
    assert {s.labels["gpu"] for s in info} == {str(i) for i in range(8)}
    assert info[0].labels["uuid"] == "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"
    assert info[0].labels["vbios_version"] == "96.00.74.00.0D"


def test_gpu_settings_are_gauges_in_base_units(eight_gpus: Snapshot) -> None:
    text = exposition(all_metrics(eight_gpus, None, {}))
    power = _samples(text, "driftcheck_gpu_power_limit_watts")
    assert [s.value for s in power] == [700.0] * 8  # `Power Limit : 700.00 W` of the recording
    clocks = {(s.labels["gpu"], s.labels["clock"], s.labels["kind"]): s.value
              for s in _samples(text, "driftcheck_gpu_clock_hertz")}
    assert clocks[("0", "graphics", "application")] == 1980e6
    assert clocks[("0", "memory", "max")] == 2619e6
    assert ("0", "sm", "current") not in clocks  # the current clock is a reading, never exported as a setting
    widths = {(s.labels["gpu"], s.labels["kind"]): s.value
              for s in _samples(text, "driftcheck_gpu_pcie_link_width_lanes")}
    assert widths[("0", "current")] == 16 and widths[("0", "max")] == 16
    assert {s.value for s in _samples(text, "driftcheck_gpu_persistence_mode")} == {1.0}


def test_labels_stay_bounded_no_file_hash_no_env_value_no_whole_package_list(eight_gpus: Snapshot) -> None:
    text = exposition(all_metrics(eight_gpus, VERDICT, family_digests(eight_gpus, SECRET))).decode("utf-8")
    assert "_ext0" not in text and "pkg-0042" not in text  # 2,400 compiled files and 600 packages stay out
    assert "value-0" not in text and "APP_SETTING" not in text and "/usr/local/cuda/lib64" not in text
    packages = {s.labels["package"] for s in _samples(text.encode(), "driftcheck_package_info")}
    assert "torch" in packages and len(packages) < 40
    families = {s.labels["family"] for s in _samples(text.encode(), "driftcheck_env_info")}
    assert {"nccl", "cuda", "torch", "nvidia", "loader"} <= families


def test_an_env_family_is_a_keyed_digest_that_moves_with_its_settings(eight_gpus: Snapshot) -> None:
    digests = family_digests(eight_gpus, SECRET)
    assert digests["nccl"].startswith("hmac-sha256:") and len(digests["nccl"]) == len("hmac-sha256:") + 16
    assert family_digests(eight_gpus, b"x" * 32)["nccl"] != digests["nccl"]  # keyed: no guess can be tested
    changed = large_document()
    changed["probes"]["env"]["data"]["vars"]["NCCL_P2P_DISABLE"] = "1"
    moved = family_digests(Snapshot(changed, "B"), SECRET)
    assert moved["nccl"] != digests["nccl"] and moved["cuda"] == digests["cuda"]


def test_check_metrics_hold_the_verdict_and_every_category(eight_gpus: Snapshot) -> None:
    text = exposition(all_metrics(eight_gpus, VERDICT, {}))
    assert [(s.labels, s.value) for s in _samples(text, "driftcheck_check_drift")] == [({"reference": "default"}, 1.0)]
    causes = {s.labels["category"]: s.value for s in _samples(text, "driftcheck_check_causes")}
    assert causes["pcie_link"] == 1.0 and set(CATEGORIES) <= set(causes)
    assert sum(causes.values()) == 1.0
    assert _samples(text, "driftcheck_check_timestamp_seconds")[0].value == 1_796_000_000.0
    assert _samples(text, "driftcheck_snapshot_timestamp_seconds")[0].value == unix_seconds(eight_gpus.created_at)


def test_without_a_check_there_is_no_check_metric(eight_gpus: Snapshot) -> None:
    text = exposition(all_metrics(eight_gpus, None, {})).decode("utf-8")
    assert "driftcheck_check_" not in text


@needs_promtool
def test_promtool_accepts_the_textfile_of_an_8_gpu_snapshot(eight_gpus: Snapshot, tmp_path: Path) -> None:
    families = all_metrics(eight_gpus, VERDICT, family_digests(eight_gpus, SECRET))
    path = write_textfile(tmp_path, families)
    assert path == tmp_path / TEXTFILE_NAME
    assert os.listdir(tmp_path) == [TEXTFILE_NAME]  # the temporary file was renamed, none is left beside it
    checked = subprocess.run(["promtool", "check", "metrics"], input=path.read_bytes(), capture_output=True,
                             timeout=60, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout == b"" and checked.stderr == b""  # no lint complaint either (names, units, help)
    # The figures the issue asks for: the file's size and its series for 8 GPUs (printed with -s).
    print(f"8-GPU textfile: {path.stat().st_size} bytes, {series_count(families)} series")
    assert series_count(families) < 250 and path.stat().st_size < 64_000


def test_a_missing_textfile_directory_is_a_one_line_error(eight_gpus: Snapshot, tmp_path: Path) -> None:
    with pytest.raises(DriftcheckError, match="no such directory"):
        write_textfile(tmp_path / "absent", all_metrics(eight_gpus, None, {}))


def test_the_scrape_endpoint_serves_the_metrics_and_swaps_them_whole(eight_gpus: Snapshot) -> None:
    server = PrometheusServer("127.0.0.1", 0, ExportRequest(check=False))
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as reply:
            served = reply.read()
        assert b"driftcheck_probe_success{probe=\"env\"} 1.0" in served
        assert b"process_cpu_seconds_total" not in served  # only ours, not the library's default collectors
        before = served
        server.refresh()
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert reply.read() != before  # a new snapshot: a new timestamp
    finally:
        server.close()


def test_the_face_keys_env_digests_with_the_users_secret(eight_gpus: Snapshot) -> None:
    families = prometheus_metrics(MachineState(eight_gpus, None))
    text = exposition(families).decode("utf-8")
    assert "driftcheck_env_info{digest=\"hmac-sha256:" in text
