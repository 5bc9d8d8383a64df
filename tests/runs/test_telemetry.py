"""Telemetry: NVML through the fake (no GPU here), nvidia-smi through a replayed real `-lms` log, CPU for real."""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import median

import psutil

from driftcheck.hosts.base import CommandResult, LineStream
from driftcheck.hosts.local import LocalHost
from driftcheck.hosts.replay import ReplayHost
from driftcheck.nvidia.driver import missing_driver
from driftcheck.runs.gpu_samples import SMI_QUERY, nvml_reading, smi_header, smi_row, smi_stream_argv
from driftcheck.runs.summary import condition_text, summarize
from driftcheck.runs.telemetry import TelemetrySampler, listener_pids, process_tree
from tests.nvidia.fake_pynvml import FakeNvml, dual_rtx_2070
from tests.nvidia.helpers import NVIDIA_DATA, make_replay

PKB_LOG = NVIDIA_DATA / "text" / "query-gpu_power-draw-samples_pkb.csv"
H100_LOAD = NVIDIA_DATA / "text" / "query-gpu_h100-80gb-hbm3_590.48.01_load.csv"


def _nvml_series(nv: FakeNvml, own: set[int], steps: list[dict[int, dict[str, object]]]) -> dict[str, object]:
    """Sample the fake NVML once per step, after applying that step's changes to its GPUs."""
    sampler = TelemetrySampler(LocalHost(), interval_s=1.0, nvml=nv, own_pids=lambda: own)
    nv.nvmlInit()
    handles = [0, 1]
    for changes in steps:
        for index, values in changes.items():
            nv.gpus[index].update(values)
        sampler.sample_nvml_once(nv, handles)
    return sampler.series.to_json()


def test_nvml_readings_become_a_summary_with_throttle_seconds_and_conditions() -> None:
    nv = FakeNvml(dual_rtx_2070())
    stranger = psutil.Process(os.getppid()).pid  # a live process that is not the run's own
    ours = os.getpid()
    busy = {"clocks": {1: 1980, 2: 7001, 0: 1980, 3: 1500}, "reasons": 0x0, "power_mw": 170000, "temp": 70,
            "utilization": (98, 40), "processes": [{"pid": ours, "bytes": 2**30}]}
    steps: list[dict[int, dict[str, object]]] = [{0: dict(busy), 1: dict(busy)} for _ in range(10)]
    for i in range(6, 10):  # GPU 0 in HW slowdown (clocks pulled down) for the last 4 of 10 seconds
        steps[i][0].update({"reasons": 0x8, "clocks": {1: 1200, 2: 7001, 0: 1200, 3: 900}})
    for i in range(3, 5):  # another process on GPU 1 for 2 seconds; the power cap on it for 5
        steps[i][1].update({"processes": [{"pid": ours, "bytes": 1}, {"pid": stranger, "bytes": 1}]})
    for i in range(5, 10):
        steps[i][1].update({"reasons": 0x4})
    series = _nvml_series(nv, {ours}, steps)
    summary = summarize(series)
    gpu0 = summary["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]
    gpu1 = summary["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789cd"]
    assert gpu0["samples"] == 10 and gpu0["index"] == 0 and gpu0["name"] == "NVIDIA GeForce RTX 2070"
    assert gpu0["sm_mhz"] == {"min": 1200.0, "median": 1980.0, "max": 1980.0}
    assert gpu0["power_w"]["median"] == 170.0 and gpu0["util_pct"]["max"] == 98.0
    assert gpu0["reason_s"] == {"hw_slowdown": 4.0}
    assert gpu1["reason_s"] == {"sw_power_cap": 5.0}
    assert gpu1["foreign_pids"] == [stranger] and gpu1["shared_s"] == 2.0
    assert gpu0["foreign_pids"] == []
    kinds = {(c["label"], c["kind"]): c for c in summary["conditions"]}
    assert set(kinds) == {("GPU 0", "hw_slowdown"), ("GPU 1", "power_cap"), ("GPU 1", "shared")}
    assert kinds[("GPU 0", "hw_slowdown")]["fraction"] == 0.4
    assert condition_text(kinds[("GPU 0", "hw_slowdown")], "run 15") == \
        "GPU 0 spent 40% of run 15 in HW slowdown (4 s)"
    assert condition_text(kinds[("GPU 1", "shared")], "run 15") == \
        f"GPU 1 was shared with another process for 20% of run 15 (pid {stranger} {psutil.Process(stranger).name()})"
    # The raw series keeps every sample beside the summary.
    assert series["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]["sm_mhz"][6:] == [1200] * 4


def test_nvml_sampling_thread_runs_once_per_interval_until_stopped() -> None:
    nv = FakeNvml(dual_rtx_2070())
    sampler = TelemetrySampler(LocalHost(), interval_s=0.1, nvml=nv)
    sampler.start()
    time.sleep(0.55)
    series = sampler.stop().to_json()
    assert series["gpu_source"] == "nvml"
    counts = {len(gpu["t"]) for gpu in series["gpus"].values()}
    assert len(counts) == 1 and 3 <= counts.pop() <= 8
    assert nv.initialised is False  # shut down again


def _replay_of(tmp_path: Path, stdout: str) -> ReplayHost:
    argv = tuple(smi_stream_argv(1000))
    return ReplayHost(make_replay(tmp_path / "rec", commands={argv: {"stdout": stdout}}))


def test_smi_path_replays_a_real_lms_log(tmp_path: Path) -> None:
    text = PKB_LOG.read_text("utf-8")
    rows = list(csv.reader(io.StringIO(text), skipinitialspace=True))[1:]
    watts = [float(row[1].split()[0]) for row in rows]  # "16.48 W" -> 16.48
    sampler = TelemetrySampler(_replay_of(tmp_path, text), interval_s=1.0)
    sampler.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sampler.series.gpu_source is None:
        time.sleep(0.05)
    time.sleep(0.3)  # the replayed log is read at once; let the reader reach its end
    series = sampler.stop().to_json()
    assert series["gpu_source"] == "nvidia-smi"
    assert "NVML reads only this machine" in series["gpu_note"]
    gpu = series["gpus"]["index-0"]
    assert gpu["power_w"] == watts  # one sample per row, in order, every value as logged
    assert gpu["t"][:3] == [0.0, 1.0, 2.0]
    summary = summarize(series)["gpus"]["index-0"]
    assert summary["samples"] == len(watts) == 91
    assert summary["power_w"] == {"min": min(watts), "median": round(median(watts), 2), "max": max(watts)}
    assert summary["sm_mhz"] is None  # not in that log's query: unknown, not zero


def test_a_gpu_without_uuid_or_bus_id_is_keyed_as_in_probe_data() -> None:
    from driftcheck.nvidia.values import gpu_key

    row = smi_row(["index", "uuid", "pci.bus_id", "power.draw [W]"], "3, [N/A], [N/A], 16.48 W")
    assert row is not None
    assert row[0] == gpu_key({"index": 3, "uuid": None, "pci_bus_id": None}, set()) == "index-3"


def test_smi_row_reads_a_real_full_query_row() -> None:
    header_line, row_line = H100_LOAD.read_text("utf-8").strip().splitlines()
    header = smi_header(header_line)
    assert header is not None
    key, reading = smi_row(header, row_line) or ("", {})
    assert key == "GPU-00000000-0000-0000-0000-000000000000"
    assert reading["sm_mhz"] == 1980 and reading["mem_mhz"] == 2619
    # power.draw (a 1 s average on new drivers: the sampling period) is kept over power.draw.instant
    assert reading["power_w"] == 631.95 and reading["power_limit_w"] == 700.0
    assert reading["temp_c"] == 59 and reading["util_pct"] == 100 and reading["memory_used_mib"] == 19818
    assert reading["reasons"] == []  # clocks_event_reasons.active 0x0


def test_smi_query_names_the_fields_the_parser_reads() -> None:
    assert smi_header(", ".join(SMI_QUERY)) == list(SMI_QUERY)


def test_no_driver_means_no_gpu_series_and_says_why(tmp_path: Path) -> None:
    host = ReplayHost(make_replay(tmp_path / "rec"))  # nvidia-smi not in the recording: no driver
    sampler = TelemetrySampler(host, interval_s=0.1)
    sampler.start()
    time.sleep(0.3)
    series = sampler.stop().to_json()
    assert series["gpus"] == {} and series["gpu_source"] is None
    assert "nvidia-smi not found" in series["gpu_note"]


class _DriverlessHost(LocalHost):
    """This machine, seen without an NVIDIA driver whatever it has; counts the commands it is asked to start."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[list[str]] = []

    def exists(self, path: str) -> bool:
        return False if path.startswith("/proc/driver/nvidia") else super().exists(path)

    def list_dir(self, path: str) -> list[str]:
        return [name for name in super().list_dir(path) if not name.startswith("nvidia")]

    def stream(self, argv: Sequence[str], timeout_s: float = 30.0) -> LineStream:
        self.started.append(list(argv))
        return super().stream(argv, timeout_s)

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        self.started.append(list(argv))
        return super().run(argv, timeout_s)


def test_no_driver_on_this_machine_tries_neither_nvml_nor_nvidia_smi() -> None:
    host = _DriverlessHost()
    sampler = TelemetrySampler(host, interval_s=0.1)
    sampler.start()
    time.sleep(0.2)
    series = sampler.stop().to_json()
    assert series["gpus"] == {} and series["gpu_source"] is None
    assert series["gpu_note"] == missing_driver(host) and series["gpu_note"] is not None
    assert "NVML and nvidia-smi not tried" in series["gpu_note"]
    assert [argv for argv in host.started if argv[0] == "nvidia-smi"] == []


def test_cpu_side_is_read_for_real() -> None:
    sampler = TelemetrySampler(LocalHost(), interval_s=0.1, nvml=FakeNvml(dual_rtx_2070()))
    sampler.start()
    time.sleep(0.45)
    cpu = summarize(sampler.stop().to_json())["cpu"]
    assert cpu["samples"] >= 3
    assert cpu["freq_mhz"] is not None and cpu["freq_mhz"]["median"] > 100  # sysfs or /proc/cpuinfo
    assert cpu["load1"] is not None and cpu["load1"]["min"] >= 0
    assert cpu["steal_pct"] is not None and 0 <= cpu["steal_pct"]["max"] <= 100


def test_process_tree_holds_the_command_and_its_children() -> None:
    import subprocess
    import sys
    parent = subprocess.Popen([sys.executable, "-c",
                               "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', "
                               "'import time; time.sleep(5)']); print(p.pid, flush=True); time.sleep(5)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        tree = process_tree(parent.pid)
        assert {parent.pid, grandchild, os.getpid()} <= tree
        # A server named by --process counts as the run's own, with its children.
        assert {parent.pid, grandchild} <= process_tree(None, patterns=[r"print\(p\.pid"])
        assert parent.pid not in process_tree(None, patterns=[r"no such command line"])
    finally:
        for proc in psutil.Process(parent.pid).children(recursive=True):
            proc.kill()
        parent.kill()
        parent.wait()


def test_the_server_listening_on_a_url_is_found() -> None:
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        assert listener_pids(f"http://127.0.0.1:{port}/v1") == {os.getpid()}
        assert listener_pids("http://gpu-node-7.example:30000") == set()  # not this machine: nothing to count
    finally:
        server.shutdown()
        server.server_close()


def test_the_smi_command_line_is_the_usual_sampling_form() -> None:
    assert smi_stream_argv(1000)[-3:] == ["--format=csv", "-lms", "1000"]
    assert smi_stream_argv(1000)[1].startswith("--query-gpu=index,uuid,pci.bus_id,")


# The real counter a power-capped RTX 3090 had accumulated (tests/data/nvidia/xml/rtx-3090_590.44.01_v13.xml,
# `clocks_event_reasons_counters_sw_power_cap`, 9840338777 us): the run starts from it. Its growth during
# the run (0.41 s per second) is made up: no public recording of a counter series during a run exists.
RTX_3090_POWER_CAP_US = 9840338777


def test_a_power_throttled_run_reports_the_throttled_fraction_from_the_counters() -> None:
    from driftcheck.runs.telemetry import Series

    nv = FakeNvml(dual_rtx_2070())
    nv.nvmlInit()
    series = Series(interval_s=1.0)
    for second in range(11):  # 0..10 s; the reason flag is never caught set by the 1 s samples
        counter_ns = (RTX_3090_POWER_CAP_US + second * 410_000) * 1000
        nv.gpus[0].update(fields={74: counter_ns, 76: 0, 269: 0, 270: 0, 271: 0},
                          violations={0: counter_ns, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0})
        series.add_gpus(float(second), nvml_reading(nv, [0, 1]), own=set())
    summary = summarize(series.to_json())
    gpu0 = summary["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789ab"]
    assert gpu0["reason_s"] == {"idle": 11.0}  # the flags alone saw nothing but idle
    assert gpu0["counter_s"] == {"span_s": 10.0, "seconds": {
        "board_limit": 0.0, "hw_power_brake_slowdown": 0.0, "hw_thermal_slowdown": 0.0, "reliability": 0.0,
        "sw_power_cap": 4.1, "sw_thermal_slowdown": 0.0, "sync_boost": 0.0, "thermal": 0.0}}
    (condition,) = summary["conditions"]
    assert condition["kind"] == "power_cap" and condition["fraction"] == 0.41 and condition["measured"] == "counters"
    assert condition_text(condition, "run 15") == \
        "GPU 0 spent 41% of run 15 at its power cap (4.1 s, counted by the driver)"
    # GPU 1's driver counts nothing (a driver before 570 without violation status): no figure, not zero.
    assert summary["gpus"]["GPU-12345678-aaaa-bbbb-cccc-0123456789cd"]["counter_s"] is None


def test_counters_override_the_sampled_estimate_and_a_single_reading_gives_none() -> None:
    from driftcheck.runs.summary import conditions, counter_growth

    gpu = {"index": 0, "seconds": 10.0, "reason_s": {"sw_power_cap": 1.0}, "shared_s": 0.0,
           "counter_s": {"span_s": 10.0, "seconds": {"sw_power_cap": 6.5}}}
    (condition,) = conditions({"g": gpu})
    assert condition["fraction"] == 0.65 and condition["seconds"] == 6.5
    assert counter_growth({"t": [0.0], "counters_us": [{"sw_power_cap": 5}]}) is None
    # A counter that went backwards (the driver reloaded) grows by nothing, never negatively.
    assert counter_growth({"t": [0.0, 5.0], "counters_us": [{"sw_power_cap": 9}, {"sw_power_cap": 2}]}) == \
        {"span_s": 5.0, "seconds": {"sw_power_cap": 0.0}}


def test_smi_row_reads_the_counters_of_a_real_h200_row() -> None:
    header_line, row_line = (NVIDIA_DATA / "text" / "query-gpu_h200_590.48.01_idle.csv").read_text(
        "utf-8").strip().splitlines()[:2]
    header = smi_header(header_line)
    assert header is not None
    _, reading = smi_row(header, row_line) or ("", {})
    assert reading["counters_us"] == {"sw_power_cap": 0, "sync_boost": 0, "sw_thermal_slowdown": 0,
                                      "hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0}


def test_the_smi_path_asks_for_the_counters_first_and_falls_back(tmp_path: Path) -> None:
    from driftcheck.runs.gpu_samples import SMI_QUERIES

    assert [q[-1] for q in SMI_QUERIES][:2] == ["clocks_event_reasons_counters.hw_power_brake_slowdown",
                                                 "clocks_event_reasons.active"]
    # A recording made with the plain query (a driver before 570) still replays: the counters query is
    # not in it, the next one is.
    test_smi_path_replays_a_real_lms_log(tmp_path)
