"""The control of checks against the past: a shift the control shares is the machine's and the verdict is
made on the normalised figure; a shift it does not share stays a finding; a multi-threaded benchmark under
other load gets no verdict from either figure; records without a control keep their raw verdicts.

The records here have the shape `driftcheck.baselines.repeated.combine` stores (per-run median, CI,
disturbance, threads and control); tests/baselines/test_control_recorded.py reads records taken on a
2-core VM, and the slow test there runs `baseline save` and `check --against` under a busy process.
"""

from __future__ import annotations

import math

import pytest

from driftcheck.baselines.control import ControlMeter, around, control_figure, usable_cpus
from driftcheck.baselines.render import results_text

# Judged on a host whose sessions were measured not to differ (tests/between.py): these are tests of the rules
# within two records, which a between-session spread of zero leaves as they were.
from tests.between import verdict_on_a_steady_host as verdict

BUSY = "other processes kept 0.90 of 2 CPUs busy"


def control(int_1t: float = 14.0, copy_1t: float = 10.0, all_cores: float = 650.0, batch_s: float = 0.005) -> dict:
    return {"int_1t": int_1t, "copy_1t": copy_1t, "all_cores": all_cores, "all_cores_threads": 2, "batch_s": batch_s}


def record(medians: list[float], controls: list[dict] | None, threads: int = 2, unit: str = "GFLOP/s",
           higher: bool = True, disturbed: str | None = None, taken: float | None = None) -> dict:
    runs = [{"median": m, "n": 20, "ci_rel": 0.005, "disturbed": disturbed, "taken": taken, "threads": threads,
             "control": None if controls is None else controls[i]} for i, m in enumerate(medians)]
    return {"unit": unit, "higher_is_better": higher, "median": sorted(medians)[len(medians) // 2], "runs": runs}


def scaled(factor: float, count: int = 3, batch_s: float = 0.005) -> list[dict]:
    """Controls of `count` runs on a machine `factor` times as fast as the reference (small jitter), around
    a benchmark timed in batches of `batch_s`."""
    jitter = (1.0, 1.01, 0.99, 1.005, 0.995)
    return [control(14.0 * factor * jitter[i], 10.0 * factor * jitter[i], 650.0 * factor * jitter[i], batch_s)
            for i in range(count)]


def test_a_shift_the_control_shares_without_other_work_is_normalised_away() -> None:
    # The launch overhead (one thread) took 61% longer and the control lost 38%, no other work seen: the
    # clock went down. The verdict is made on the normalised figure.
    before = record([6.0, 6.05, 5.95], scaled(1.0), threads=1, unit="us", higher=False)
    after = record([6.0 / 0.62, 6.05 / 0.62, 5.95 / 0.62], scaled(0.62), threads=1, unit="us", higher=False)
    entry = verdict("launch_eager_us_per_op", before, after)
    assert entry["verdict"] == "unchanged", entry["verdict_text"]
    assert entry["raw_change_pct"] == pytest.approx(61.3, abs=0.5)
    assert entry["control_change_pct"] == pytest.approx(-38.0, abs=0.5)
    assert abs(entry["normalised_change_pct"]) < 1.0 and entry["change_pct"] == entry["normalised_change_pct"]
    assert entry["control"]["kind"] == "single-thread" and entry["control"]["moved"] is True
    text = entry["verdict_text"]
    assert "the whole machine is slower now: control -38%" in text and "clock or steal" in text
    assert "raw +61.3%" in text and "normalised" in text
    # The printed figures stay the user's own: 6 us before, ~9.7 us after.
    assert entry["before"] == pytest.approx(6.0, rel=0.01) and entry["after"] > 9.0


def test_a_shift_the_control_shares_under_other_work_is_the_machines_and_decides_nothing() -> None:
    # The same shift with a busy process seen in B: the control says what the machine did, and no figure
    # decides (a short benchmark's median dodges preemptions the control meets: measured +13% vs -68%).
    before = record([6.0, 6.05, 5.95], scaled(1.0), threads=1, unit="us", higher=False)
    after = record([6.0 / 0.62, 6.05 / 0.62, 5.95 / 0.62], scaled(0.62), threads=1, unit="us", higher=False,
                   disturbed=BUSY, taken=0.45)
    entry = verdict("launch_eager_us_per_op", before, after)
    assert entry["verdict"] == "inconclusive" and entry["significant"] is False
    assert entry["reason"].startswith("the whole machine is slower now: control -38%, B: " + BUSY)
    assert "raw +61.3%" in entry["verdict_text"] and entry["verdict_text"].count("the whole machine") == 1


def test_a_shift_the_control_does_not_share_stays_a_finding() -> None:
    # OMP_NUM_THREADS=1: the GEMM lost 40%; the control (no BLAS, no OpenMP) did not move.
    before = record([47.0, 47.5, 46.6], scaled(1.0))
    after = record([28.2, 28.5, 28.0], scaled(1.0), threads=1)
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["verdict"] == "slower" and entry["significant"] is True, entry["verdict_text"]
    assert entry["control"]["moved"] is False and abs(entry["control_change_pct"]) < 2.0
    # One side ran two threads: the all-cores control is the one that applies.
    assert entry["control"]["kind"].startswith("all-cores")
    assert entry["normalised_change_pct"] == pytest.approx(entry["raw_change_pct"], abs=2.0)
    assert abs(entry["change_pct"]) >= entry["mds_pct"]


def test_a_multi_threaded_benchmark_under_load_gets_no_verdict_from_either_figure() -> None:
    # A busy core: the 2-thread GEMM lost 50%, the all-cores control a third. Normalising leaves -25%,
    # which is still the load (a thread team waits for its slowest thread), not the configuration.
    before = record([47.0, 47.5, 46.6], scaled(1.0))
    after = record([23.5, 23.7, 23.3], scaled(0.67), disturbed=BUSY, taken=0.45)
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["verdict"] == "inconclusive" and entry["significant"] is False
    assert entry["reason"].startswith("the whole machine is slower now: control -33%, B: " + BUSY)
    assert "loses more or less than the control" in entry["reason"]
    assert entry["raw_change_pct"] == pytest.approx(-50.0, abs=0.5)
    assert entry["normalised_change_pct"] == pytest.approx(-25.4, abs=1.0)
    # The machine's move is said once, in the reason.
    assert entry["verdict_text"].count("the whole machine") == 1


def test_a_gain_against_a_slower_machine_stays_a_finding() -> None:
    # Under the same load, a benchmark that got faster anyway: no load explains that.
    before = record([47.0, 47.5, 46.6], scaled(1.0))
    after = record([80.0, 80.5, 79.6], scaled(0.67), disturbed=BUSY, taken=0.45)
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["verdict"] == "faster", entry["verdict_text"]


def test_a_uniform_slowdown_without_other_work_is_normalised_for_every_thread_count() -> None:
    # No other process, no steal: the clock went down, which every thread feels alike.
    before = record([47.0, 47.5, 46.6], scaled(1.0))
    after = record([47.0 * 0.7, 47.5 * 0.7, 46.6 * 0.7], scaled(0.7))
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["verdict"] == "unchanged", entry["verdict_text"]
    assert entry["raw_change_pct"] == pytest.approx(-30.0, abs=0.5)
    assert "clock or steal" in entry["verdict_text"]
    # Without the control the same figures are a 30% loss.
    raw = verdict("gemm_fp32_1024_gflops", record([47.0, 47.5, 46.6], None),
                  record([47.0 * 0.7, 47.5 * 0.7, 46.6 * 0.7], None))
    assert raw["verdict"] == "slower"


def test_a_machine_that_was_slower_in_the_reference_is_said_so() -> None:
    before = record([6.0 / 0.7, 6.05 / 0.7, 5.95 / 0.7], scaled(0.7), threads=1, unit="us", higher=False)
    after = record([6.0, 6.05, 5.95], scaled(1.0), threads=1, unit="us", higher=False)
    entry = verdict("launch_eager_us_per_op", before, after)
    assert entry["verdict"] == "unchanged"
    assert "the whole machine was slower in A: control +43% now" in entry["verdict_text"]
    # With a busy process seen in A, A's load is named and nothing is decided.
    loaded = record([6.0 / 0.7, 6.05 / 0.7, 5.95 / 0.7], scaled(0.7), threads=1, unit="us", higher=False,
                    disturbed=BUSY, taken=0.45)
    entry = verdict("launch_eager_us_per_op", loaded, after)
    assert entry["verdict"] == "inconclusive" and ", A: " + BUSY in entry["reason"]


def test_old_records_without_a_control_keep_their_raw_verdicts_and_say_so() -> None:
    before = record([47.0, 47.5, 46.6], None)
    after = record([28.2, 28.5, 28.0], scaled(1.0), threads=1)
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["verdict"] == "slower" and entry["control"] == {"recorded": False, "note": entry["control"]["note"]}
    assert entry["control"]["note"].startswith("no control was recorded in A")
    assert entry["normalised_change_pct"] is None and entry["control_change_pct"] is None
    assert entry["raw_change_pct"] == entry["change_pct"]
    assert "no control was recorded in A" in entry["verdict_text"]
    # A single-run record from before the runs list existed (median and CI only) reads the same way.
    legacy = {"unit": "GFLOP/s", "median": 47.0, "ci_low": 46.8, "ci_high": 47.2}
    assert "no control was recorded in A and B" in verdict("gemm", legacy, {**legacy, "median": 20.0})["verdict_text"]


def test_a_gpu_record_shows_its_control_but_judges_raw_figures() -> None:
    entry = verdict("gemm_bf16_8192_tflops", record([400.0, 401.0, 399.0], scaled(1.0)),
                    record([300.0, 301.0, 299.0], scaled(0.7)), device="cuda")
    assert entry["verdict"] == "slower" and "does not track a GPU" in entry["control"]["note"]


def test_a_run_that_did_not_say_its_threads_counts_as_multi_threaded() -> None:
    before = record([6.0, 6.05, 5.95], scaled(1.0), threads=1, unit="us", higher=False)
    after = record([9.7, 9.75, 9.6], scaled(0.62), threads=1, unit="us", higher=False, disturbed=BUSY, taken=0.45)
    del after["runs"][0]["threads"]
    entry = verdict("launch_eager_us_per_op", before, after)
    assert entry["control"]["kind"].startswith("all-cores") and entry["verdict"] == "inconclusive"


def test_one_thread_in_long_batches_is_not_the_short_controls_to_normalise() -> None:
    # A 1-thread GEMM (90 ms an operation) feels the share of the CPU a busy process takes; the short-batch
    # single-thread control does not: the all-cores control applies, and under load no figure decides.
    before = record([28.0, 28.2, 27.8], scaled(1.0, batch_s=0.09), threads=1)
    after = record([16.0, 16.1, 15.9], scaled(0.67, batch_s=0.09), threads=1, disturbed=BUSY, taken=0.45)
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["control"]["kind"].startswith("all-cores") and entry["verdict"] == "inconclusive"
    # A record without batch times counts as long too.
    unstated = scaled(1.0)
    for item in unstated:
        item["batch_s"] = None
    entry = verdict("launch_eager_us_per_op", record([6.0, 6.05, 5.95], unstated, threads=1, unit="us", higher=False),
                    record([6.0, 6.05, 5.95], scaled(1.0), threads=1, unit="us", higher=False))
    assert entry["control"]["kind"].startswith("all-cores")


def test_stored_controls_are_read_whole_or_not_at_all() -> None:
    figure = control_figure(control(16.0, 4.0, 500.0))
    assert figure is not None and figure.single == pytest.approx(8.0) and figure.for_kind(single=False) == 500.0
    assert figure.for_kind(single=True) == pytest.approx(8.0) and figure.threads == 2 and figure.short
    for bad in (None, {}, {**control(), "copy_1t": 0}, {**control(), "int_1t": math.nan},
                {**control(), "all_cores": True}):
        assert control_figure(bad) is None


def test_the_meter_measures_all_three_figures_and_around_takes_geometric_means() -> None:
    meter = ControlMeter(threads=2)
    first, second = meter.measure(), meter.measure()
    assert set(first) == {"int_1t", "copy_1t", "all_cores"} and all(v > 0 for v in (*first.values(), *second.values()))
    entry = around({"int_1t": 4.0, "copy_1t": 1.0, "all_cores": 100.0},
                   {"int_1t": 9.0, "copy_1t": 4.0, "all_cores": 400.0}, 2, 0.0051)
    assert entry == {"int_1t": 6.0, "copy_1t": 2.0, "all_cores": 200.0, "all_cores_threads": 2, "batch_s": 0.0051}
    assert 1 <= usable_cpus() <= 16


def test_the_bench_text_says_what_the_control_cost() -> None:
    data = {"suite": "quick", "device": "cpu", "elapsed_s": 24.0, "results": {},
            "control": {"figures": {}, "all_cores_threads": 2, "seconds": 0.62}}
    assert "control (machine speed, measured around every benchmark): 0.6 s of 24.0 s" in results_text(data)
    assert "control" not in results_text({**data, "control": None})


def test_a_disturbance_the_control_did_not_feel_still_voids_a_call() -> None:
    # The launch overhead took 40% longer in a disturbed check while the control held still: the control
    # cannot vouch for that disturbance, so it could explain the loss.
    before = record([6.0, 6.05, 5.95], scaled(1.0), threads=1, unit="us", higher=False)
    after = record([8.4, 8.45, 8.35], scaled(1.0), threads=1, unit="us", higher=False, disturbed=BUSY, taken=0.45)
    entry = verdict("launch_eager_us_per_op", before, after)
    assert entry["control"]["moved"] is False and entry["verdict"] == "inconclusive"
    assert "B was disturbed" in entry["reason"]
    # The same loss on a quiet machine is a finding.
    quiet = verdict("launch_eager_us_per_op", before, record([8.4, 8.45, 8.35], scaled(1.0), threads=1, unit="us",
                                                               higher=False))
    assert quiet["verdict"] == "slower"


def test_the_control_can_excuse_a_shift_but_never_make_one() -> None:
    # The CI case: a quiet machine, decode ms/token -12% (inside its resolution), while the noisy control
    # read -10%. Divided by the control the figure is -21%, beyond the MDS: a shift made by the control alone.
    before = record([40.0, 41.5, 38.8], scaled(1.0), threads=1, unit="ms", higher=False)
    after = record([35.0, 37.4, 33.4], scaled(0.9), threads=1, unit="ms", higher=False)
    entry = verdict("decode_eager_ms_per_token", before, after)
    raw = verdict("decode_eager_ms_per_token", record([40.0, 41.5, 38.8], None, threads=1, unit="ms", higher=False),
                  record([35.0, 37.4, 33.4], None, threads=1, unit="ms", higher=False))
    assert raw["verdict"] != "faster", raw["verdict_text"]
    assert entry["normalised_change_pct"] < entry["raw_change_pct"] < 0
    assert entry["verdict"] == "inconclusive", entry["verdict_text"]
    assert "never make one" in entry["reason"] and "only the control-normalised figure shifts" in entry["reason"]


def test_a_control_that_did_not_move_beyond_its_noise_leaves_the_verdict_to_the_raw_figure() -> None:
    # The sensitivity run's case: OMP_NUM_THREADS=1 halved the 2-thread GEMM (raw -45%, steady runs) while the
    # all-cores control, one short hash batch, wandered +-20% between runs and netted -1%. Divided by it, the
    # GEMM's spread is the control's and the shift unresolved; the control said nothing about the machine.
    noisy = [control(all_cores=650.0 * f) for f in (1.0, 0.8, 1.2)]
    wandering = [control(all_cores=650.0 * f) for f in (1.18, 0.85, 0.95)]
    before = record([47.0, 46.0, 48.0], noisy)
    after = record([25.8, 26.3, 25.5], wandering, threads=1)
    entry = verdict("gemm_fp32_1024_gflops", before, after)
    assert entry["control"]["moved"] is False and entry["control"]["decided_by"] == "raw"
    assert entry["verdict"] == "slower", entry["verdict_text"]
    assert entry["change_pct"] == entry["raw_change_pct"] == pytest.approx(-45.0, abs=1.0)
    # The normalised figure alone could not have called it: its MDS takes the control's noise.
    normalised_only = verdict("gemm_fp32_1024_gflops", record([47.0 / 1.0, 46.0 / 0.8, 48.0 / 1.2], None),
                              record([25.8 / 1.18, 26.3 / 0.85, 25.5 / 0.95], None, threads=1))
    assert normalised_only["verdict"] == "inconclusive", normalised_only["verdict_text"]
    assert "(normalised" in entry["verdict_text"] and "within its noise" in entry["verdict_text"]
    assert "normalised (raw" not in entry["verdict_text"]
