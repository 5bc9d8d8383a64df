"""More runs while a check cannot decide (driftcheck.analysis.more_runs judges, driftcheck.api.bench takes
them): taken only where they could decide, each of the two looks judged at half the level, so looking twice
keeps the 1 % false-alarm rate; and the records and verdicts that carry the looks. Runs here are recorded-shape
dictionaries with seeded noise; the real suite, in child processes, runs in tests/baselines/test_bench_check.py."""

from __future__ import annotations

import importlib
import math
import random
from collections.abc import Callable, Iterator

import pytest

from driftcheck.analysis.bench_verdicts import looks_of
from driftcheck.analysis.more_runs import undecided
from driftcheck.api.bench import record_until_decided
from driftcheck.baselines.repeated import combine, joined
from driftcheck.errors import UsageError
from driftcheck.stats.looks import Looks, default_max_runs, planned_looks

# Judged on a host whose sessions were measured not to differ (tests/between.py): these are tests of the rules
# within two records, which a between-session spread of zero leaves as they were.
from tests.between import on_a_steady_host
from tests.between import verdict_on_a_steady_host as verdict

GEMM = "gemm_fp32_1024_gflops"


def one_run(gemm: float, copy: float | None = None) -> dict:
    def entry(median: float) -> dict:
        return {"unit": "GFLOP/s", "higher_is_better": True, "n": 10, "median": median, "ci_low": median * 0.995,
                "ci_high": median * 1.005}

    results = {GEMM: entry(gemm)}
    if copy is not None:
        results["device_copy_64mib_gbps"] = entry(copy)
    return {"suite": "quick", "device": "cpu", "elapsed_s": 2.0, "skipped": [], "warnings": [],
            "disturbance": {"disturbed": None, "taken": 0.0}, "results": results}


def scripted(medians: list[float]) -> Callable[[], dict]:
    script: Iterator[float] = iter(medians)
    return lambda: one_run(next(script))


def reference(*medians: float) -> dict:
    return on_a_steady_host(combine([one_run(m) for m in medians]))


def test_default_max_runs_doubles_and_never_extends_a_single_run() -> None:
    assert default_max_runs(3) == 6 and default_max_runs(5) == 10 and default_max_runs(1) == 1
    assert planned_looks(3, 6) == (3, 6) and planned_looks(3, 3) == (3,)
    with pytest.raises(UsageError, match="--max-runs"):
        planned_looks(3, 2)


def test_a_decided_benchmark_takes_no_more_runs() -> None:
    lines: list[str] = []
    record = record_until_decided(scripted([50.0, 50.5, 49.5, 1.0, 1.0, 1.0]), 3, 6,
                                  reference(100.0, 101.0, 99.0), lines.append)
    assert record["runs"] == 3 and record["looks"] == [3, 6]
    assert lines[-1] == "every benchmark decided after 3 runs"


def test_an_undecided_shift_takes_more_runs_and_is_called_at_the_second_look() -> None:
    # -40 % on a machine whose runs wander ±15 %: inside the MDS of 3+3 runs, beyond that of 3+6.
    base = reference(100.0, 118.0, 86.0)
    after = [60.0, 72.0, 52.0, 61.0, 58.0, 63.0]
    lines: list[str] = []
    record = record_until_decided(scripted(after), 3, 6, base, lines.append)
    assert record["runs"] == 6 and record["looks"] == [3, 6] and record["results"][GEMM]["looks"] == [3, 6]
    assert any(line.startswith(f"undecided after 3 runs: {GEMM}; 3 more runs (--max-runs 6)") for line in lines)
    assert any(line.startswith("run 6/6:") for line in lines)

    first = verdict(GEMM, base["results"][GEMM], combine([one_run(m) for m in after[:3]])["results"][GEMM])
    assert first["verdict"] == "inconclusive", first["verdict_text"]
    decided = verdict(GEMM, base["results"][GEMM], record["results"][GEMM])
    assert decided["verdict"] == "slower" and decided["runs"] == [3, 6], decided["verdict_text"]
    assert decided["looks"] == {"runs": [3, 6], "planned": 2, "alpha_each": 0.005, "decided_at": 6}
    assert "over 3+6 runs, 2 looks at 0.5% each" in decided["verdict_text"]


def test_without_a_reference_or_room_the_runs_are_taken_as_asked() -> None:
    record = record_until_decided(scripted([60.0, 72.0, 52.0, 61.0]), 3, 6, None)
    assert record["runs"] == 3 and "looks" not in record
    record = record_until_decided(scripted([60.0, 72.0, 52.0, 61.0]), 3, 3, reference(100.0, 118.0, 86.0))
    assert record["runs"] == 3 and "looks" not in record and "looks" not in record["results"][GEMM]


def test_more_runs_are_taken_only_where_they_could_decide() -> None:
    base = reference(100.0, 160.0, 62.0)  # runs wander ±45 %
    # A 3 % shift there: 6 runs could neither call it nor bring the MDS under the 25 % `unchanged` needs.
    hopeless = combine([one_run(m) for m in (103.0, 165.0, 64.0)], (3, 6))
    assert undecided(base, hopeless, 6) == []
    # A 60 % loss on the same machine: the projected MDS is within reach of it.
    reachable = combine([one_run(m) for m in (40.0, 66.0, 25.0)], (3, 6))
    assert undecided(base, reachable, 6) == [GEMM]
    # A loss that other load on B could explain: more runs under that load would be held the same way.
    loaded = [one_run(m) for m in (40.0, 66.0, 25.0)]
    for run in loaded:
        run["results"][GEMM]["disturbed"] = None
        run["disturbance"] = {"disturbed": "other processes kept 0.90 of 2 CPUs busy", "taken": 0.45}
    held = combine(loaded, (3, 6))
    assert verdict(GEMM, base["results"][GEMM], held["results"][GEMM])["held_by"] == "load"
    assert undecided(base, held, 6) == []
    # A record already at its most runs has nothing more to take.
    assert undecided(base, combine([one_run(m) for m in (40.0, 66.0, 25.0, 41.0, 39.0, 40.0)], (3, 6)), 6) == []


def test_a_record_that_stopped_at_its_first_look_is_judged_at_half_the_level() -> None:
    base = reference(100.0, 104.0, 96.0)
    # t between 4.604 (t_0.995 at 4 df) and 5.598 (t_0.9975): called at 1 %, not at 0.5 %.
    medians = [84.62, 88.0, 81.24]  # the reference times exp(-0.167)
    alone = verdict(GEMM, base["results"][GEMM], combine([one_run(m) for m in medians])["results"][GEMM])
    planned = verdict(GEMM, base["results"][GEMM], combine([one_run(m) for m in medians], (3, 6))["results"][GEMM])
    assert alone["verdict"] == "slower", alone["verdict_text"]
    assert planned["verdict"] == "inconclusive" and planned["mds_pct"] > alone["mds_pct"], planned["verdict_text"]


def test_a_benchmark_decided_at_the_first_look_is_reported_on_its_runs() -> None:
    # Three runs decide a halving; three more, taken for another benchmark, wander back up.
    base = reference(100.0, 101.0, 99.0)
    record = combine([one_run(m) for m in (50.0, 50.5, 49.5, 95.0, 60.0, 99.0)], (3, 6))
    entry = verdict(GEMM, base["results"][GEMM], record["results"][GEMM])
    assert entry["verdict"] == "slower" and entry["runs"] == [3, 3] and entry["change_pct"] == pytest.approx(-50.0)
    assert entry["looks"]["decided_at"] == 3
    assert "over 3+3 runs, 2 looks at 0.5% each, decided at 3 of 6 runs): slower" in entry["verdict_text"]


def test_looks_are_counted_in_the_runs_that_measured_the_benchmark() -> None:
    runs = [one_run(100.0, 10.0), one_run(101.0), one_run(99.0, 10.2), one_run(100.5, 9.9), one_run(99.5, 10.1)]
    record = combine(runs, (3, 5))
    assert record["results"][GEMM]["looks"] == [3, 5]
    assert record["results"]["device_copy_64mib_gbps"]["looks"] == [2, 4]
    assert looks_of(record["results"][GEMM], 5) == Looks((3, 5), 2)
    assert looks_of({"looks": "bogus"}, 4) == Looks((4,), 1) and looks_of({}, 3) == Looks((3,), 1)
    assert Looks((3,), 2).alpha_each == 0.005


def _null_trials(trials: int, two_looks_at_full_level: bool) -> int:
    """False slower/faster calls among `trials` unchanged checks (3-run reference, runs wandering ±15 %)."""
    rng = random.Random(20)
    alarms = 0
    for _ in range(trials):
        base = reference(*(100.0 * math.exp(rng.gauss(0.0, 0.15)) for _ in range(3)))
        after = [100.0 * math.exp(rng.gauss(0.0, 0.15)) for _ in range(6)]
        if two_looks_at_full_level:  # the naive rule: look at 3 runs, then at 6, each at 1 %
            called = any(verdict(GEMM, base["results"][GEMM], combine([one_run(m) for m in shown])["results"][GEMM])
                         ["verdict"] in ("slower", "faster") for shown in (after[:3], after))
        else:
            record = record_until_decided(scripted(after), 3, 6, base)
            called = verdict(GEMM, base["results"][GEMM], record["results"][GEMM])["verdict"] in ("slower", "faster")
        alarms += called
    return alarms


def test_looking_twice_keeps_the_one_percent_level_where_the_naive_rule_does_not() -> None:
    trials = 3000
    # Binomial sd at 1 % of 3000: 0.18 %; the bound leaves ~1.7 sd for the simulation's own error.
    assert _null_trials(trials, two_looks_at_full_level=False) <= 0.013 * trials
    assert _null_trials(trials, two_looks_at_full_level=True) > 0.015 * trials


def test_the_second_look_catches_losses_the_first_misses() -> None:
    rng = random.Random(7)
    trials, first, extended = 600, 0, 0
    for _ in range(trials):
        base = reference(*(100.0 * math.exp(rng.gauss(0.0, 0.15)) for _ in range(3)))
        after = [60.0 * math.exp(rng.gauss(0.0, 0.15)) for _ in range(6)]
        first += verdict(GEMM, base["results"][GEMM],
                         combine([one_run(m) for m in after[:3]])["results"][GEMM])["verdict"] == "slower"
        record = record_until_decided(scripted(after), 3, 6, base)
        extended += verdict(GEMM, base["results"][GEMM], record["results"][GEMM])["verdict"] == "slower"
    # Seen: 47 % at 3+3 runs, 75 % with the second look (normal noise, spread 15 %, a 40 % loss).
    assert extended >= first + 0.15 * trials, (first, extended)


def test_a_first_look_joined_to_more_runs_is_the_record_of_all_of_them() -> None:
    # The check asks the bench probe for its more runs apart from its first look, and joins the two records.
    runs = [one_run(100.0, 10.0), one_run(101.0), one_run(99.0, 10.2), one_run(100.5, 9.9), one_run(102.0, 10.1),
            one_run(97.0, 9.8)]
    runs[4]["disturbance"] = {"disturbed": "other processes kept 0.90 of 2 CPUs busy", "taken": 0.45}
    whole = combine(runs, (3, 6))
    both = joined(combine(runs[:3], (3, 6)), combine(runs[3:]))
    for key in ("runs", "looks", "skipped", "warnings", "run_reports", "disturbed_runs", "suite", "device"):
        assert both[key] == whole[key], key
    assert both["elapsed_s"] == pytest.approx(whole["elapsed_s"])
    for name, entry in whole["results"].items():
        for key in ("median", "runs", "between_runs", "looks", "unit"):
            assert both["results"][name][key] == entry[key], (name, key)
    # The within-run figures are those of the middle run of all (100.0) where a record holds it whole.
    assert both["results"][GEMM]["ci_low"] == whole["results"][GEMM]["ci_low"]
    base = reference(100.0, 101.0, 99.0)
    assert verdict(GEMM, base["results"][GEMM], both["results"][GEMM]) == \
        verdict(GEMM, base["results"][GEMM], whole["results"][GEMM])


def test_a_check_asks_the_bench_probe_for_more_runs_and_joins_them_into_its_snapshot(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The check's own orchestration (driftcheck.api.check.decided_bench), with the bench probe's second call
    # answered by recorded-shape runs: the probe is asked for the 3 more runs only, numbered after the first 3.
    api_check = importlib.import_module("driftcheck.api.check")  # the module; `driftcheck.api.check` is the verb
    from driftcheck.hosts import LocalHost
    from driftcheck.probes.base import BenchRequest, ProbeOptions
    from driftcheck.probes.prober import Prober
    from driftcheck.probes.runner import ProbeOutcome
    from driftcheck.snapshot.model import Snapshot, new_document
    from driftcheck.snapshot.signing import sign_document, verify_document

    base = reference(100.0, 118.0, 86.0)
    after = [60.0, 72.0, 52.0, 61.0, 58.0, 63.0]
    lines: list[str] = []
    prober = Prober.for_user(LocalHost(), ProbeOptions(bench=BenchRequest("quick", 3, None, 6)),
                             step_progress=lines.append)
    asked: list[BenchRequest | None] = []

    def probe_again(host: object, probes: list, options: ProbeOptions, progress: object = None) -> dict:
        asked.append(options.bench)
        assert [probe.name for probe in probes] == ["bench"]
        return {"bench": ProbeOutcome("ok", data=dict(combine([one_run(m) for m in after[3:]])), duration_s=2.0)}

    monkeypatch.setattr(api_check, "run_probes", probe_again)

    def snapshot_with(bench: dict) -> Snapshot:
        document = new_document({"name": "h"}, {"bench": {"status": "ok", "data": bench, "error": None,
                                                          "duration_s": 3.0}})
        return Snapshot(sign_document(document, prober.key) if prober.key else document, "<new>")

    first = combine([one_run(m) for m in after[:3]], (3, 6))
    checked = api_check.decided_bench(snapshot_with(first), snapshot_with(base), prober)
    assert asked == [BenchRequest("quick", 3, None, None, taken_before=3)]
    assert any(line.startswith(f"undecided after 3 runs: {GEMM}; 3 more runs (--max-runs 6)") for line in lines)
    record = checked.probe_data("bench") or {}
    assert record["runs"] == 6 and record["looks"] == [3, 6] and record["results"][GEMM]["looks"] == [3, 6]
    assert checked.probes["bench"]["duration_s"] == 5.0
    assert verify_document(checked.document).status in ("valid", "untrusted")
    decided = verdict(GEMM, base["results"][GEMM], record["results"][GEMM])
    assert decided["verdict"] == "slower" and decided["runs"] == [3, 6], decided["verdict_text"]
    # Decided at the first look: no second call, the snapshot as taken.
    asked.clear()
    decided_first = snapshot_with(combine([one_run(m) for m in (50.0, 50.5, 49.5)], (3, 6)))
    assert api_check.decided_bench(decided_first, snapshot_with(reference(100.0, 101.0, 99.0)), prober) \
        is decided_first
    assert asked == [] and lines[-1] == "every benchmark decided after 3 runs"
