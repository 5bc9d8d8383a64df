"""The split of a speculative-decoding throughput shift into accept length and cycle time, and the break-even."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from driftcheck.runs.metrics import Metric
from driftcheck.runs.output import scan_text
from driftcheck.runs.speculative import PlainRun, accept_length, break_even, decompose, shares
from driftcheck.runs.store import RunRecord

OUTPUTS = Path(__file__).resolve().parent.parent / "data" / "bench_outputs"


def _run(run_id: int, metrics: list[Metric]) -> RunRecord:
    return RunRecord(["python", "-m", "sglang.bench_serving"], "/", "host", "2026-12-02T00:00:00Z", 60.0, 0, None,
                     metrics=metrics, id=run_id)


def _story(run_id: int, length: float | None, tpot_ms: float | None, tput: float | None) -> RunRecord:
    """A run with the figures bench_serving prints: accept length, mean TPOT, output token throughput."""
    metrics = []
    if length is not None:
        metrics.append(Metric("accept_length", length, "tok/step", "Accept length", "t"))
    if tpot_ms is not None:
        metrics.append(Metric("mean_tpot", tpot_ms, "ms", "Mean TPOT", "t"))
    if tput is not None:
        metrics.append(Metric("output_token_throughput", tput, "tok/s", "Output token throughput", "t"))
    return _run(run_id, metrics)


def _file_run(run_id: int, name: str) -> RunRecord:
    return _run(run_id, scan_text((OUTPUTS / name).read_text("utf-8")))


def test_break_even_is_accept_length_times_plain_over_speculative_throughput() -> None:
    # The story: 60 tok/s at an accept length of 2.0, and a plain run of 73.8 tok/s, needs 2.46.
    assert break_even(2.0, 60.0, 73.8) == pytest.approx(2.46)
    # At the break-even accept length the speculative throughput (which scales with L at a fixed cycle) is T0.
    needed = break_even(2.0, 60.0, 73.8)
    assert 60.0 * needed / 2.0 == pytest.approx(73.8)
    # Already faster than plain: the break-even lies below the accept length it has.
    assert break_even(2.0, 94.0, 73.8) < 2.0
    with pytest.raises(ValueError):
        break_even(2.0, 0.0, 73.8)


def test_shares_add_up_to_the_whole_change() -> None:
    accept, cycle = shares(2.0 / 2.46, 30.4 / 20.1)  # type: ignore[misc]
    assert accept + cycle == pytest.approx(1.0)
    assert accept == pytest.approx(math.log(2.0 / 2.46) / (math.log(2.0 / 2.46) - math.log(30.4 / 20.1)))
    assert shares(2.0 / 2.0, 30.4 / 20.1) == pytest.approx((0.0, 1.0))
    assert shares(1.0, 1.0) is None  # nothing moved, nothing to share out


def test_a_slower_cycle_at_the_same_accept_length_is_the_cycle_not_the_drafter() -> None:
    # Cycle = accept length x mean TPOT: 2.0 x 10.05 = 20.1 ms, 2.0 x 15.2 = 30.4 ms.
    result = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, 2.0, 15.2, 60.0))
    assert result is not None and result.missing == []
    parts = result.parts()
    assert parts is not None
    assert parts["accept_length"] == 0.0
    assert parts["cycle"] == pytest.approx(30.4 / 20.1 - 1)
    assert parts["cycle_share"] == pytest.approx(1.0)
    text = "\n".join(result.lines())
    assert "accept length 2 \u2192 2 (+0 %); cycle 20.1 \u2192 30.4 ms (+51 %)" in text
    assert "cycle got slower and the drafter's accept length held" in text
    assert "accept length x mean TPOT" in text


def test_fewer_accepted_tokens_at_the_same_cycle_is_the_drafter() -> None:
    result = decompose(_story(1, 2.46, 20.0 / 2.46, 94.0), _story(2, 2.0, 10.0, 77.0))
    assert result is not None
    verdict = result.verdict()
    assert verdict is not None and "fewer tokens accepted per cycle and the cycle time held" in verdict


def test_both_parts_moving_gives_each_its_share() -> None:
    result = decompose(_story(1, 2.46, 20.1 / 2.46, 94.0), _story(2, 2.0, 30.4 / 2.0, 60.0))
    assert result is not None
    parts = result.parts()
    assert parts is not None
    verdict = result.verdict()
    assert verdict is not None and verdict.startswith("both the accept length and the cycle time moved")
    assert f"{parts['cycle_share'] * 100:.0f} % from the cycle time" in verdict
    assert parts["accept_length_share"] + parts["cycle_share"] == pytest.approx(1.0)


def test_nothing_moved_says_the_shift_is_elsewhere() -> None:
    result = decompose(_story(1, 2.0, 10.0, 94.0), _story(2, 2.01, 10.05, 80.0))
    assert result is not None
    assert "neither the accept length nor the cycle time moved" in (result.verdict() or "")


def test_real_outputs_decompose_with_the_cycle_derived_from_tpot() -> None:
    # Two real SGLang bench_serving results with an accept length: 2.46 x 9.09 ms and 3.27 x 10.99 ms per cycle.
    result = decompose(_file_run(1, "sglang_bench_serving_eagle_cookbook_b200.txt"),
                       _file_run(2, "sglang_bench_serving_mtp_cookbook_h800.txt"))
    assert result is not None
    assert result.values() == pytest.approx((2.46, 3.27, 2.46 * 9.09, 3.27 * 10.99))
    assert result.a.throughput is not None and result.a.throughput.value == 95.62
    assert result.to_json()["decomposed"] is True


def test_vllm_counts_give_the_accept_length_when_it_is_not_printed() -> None:
    run = _file_run(1, "vllm_spec_decode_offline_24344.txt")
    run.metrics = [m for m in run.metrics if m.name != "accept_length"]
    found = accept_length(run)
    assert found is not None and found.value == pytest.approx(1 + 3187 / 2189)
    assert found.source == "1 + accepted tokens / drafts"
    # vLLM printed 2.46 for the same counts: the derivation is the engine's own
    assert round(found.value, 2) == 2.46


def test_no_decomposition_when_one_side_lacks_the_figures_and_it_says_which() -> None:
    result = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, None, 13.5, 73.8))
    assert result is not None and result.parts() is None and result.verdict() is None
    text = "\n".join(result.lines())
    assert "run 2 printed no accept length" in text and "--non-spec run:2" in text
    assert "not split into accept length and cycle time" in text
    no_tpot = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, 2.0, None, 60.0))
    assert no_tpot is not None and "run 2 has no mean TPOT above 0" in "\n".join(no_tpot.lines())


def test_neither_side_speculative_and_no_plain_run_gives_nothing() -> None:
    plain_a, plain_b = _file_run(1, "sglang_bench_serving_2805.txt"), _file_run(2, "sglang_bench_serving_1639.txt")
    assert decompose(plain_a, plain_b) is None


def test_break_even_against_a_plain_run_record_uses_the_common_throughput() -> None:
    plain = _story(3, None, 13.5, 73.8)
    result = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, 2.0, 15.2, 60.0), PlainRun("run 3", run=plain))
    assert result is not None
    rows = {row.run_id: row for row in result.break_even}
    assert rows[2].needed == pytest.approx(2.46) and rows[2].unit == "tok/s"
    assert rows[1].needed == pytest.approx(2.0 * 73.8 / 94.0)
    assert "at an accept length of 2.46: 0.46 short" in rows[2].text()
    assert "above it" in rows[1].text()
    row = result.to_json()["break_even"][1]
    assert row["break_even_accept_length"] == pytest.approx(2.46)
    assert row["formula"] == "accept_length x plain_throughput / throughput"


def test_break_even_falls_back_to_tpot_when_no_common_output_throughput() -> None:
    plain = _story(3, None, 13.5, None)
    result = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, 2.0, 15.2, 60.0), PlainRun("run 3", run=plain))
    assert result is not None
    rows = {row.run_id: row for row in result.break_even}
    # per-stream rates 1000/15.2 and 1000/13.5: L* = 2.0 x 15.2 / 13.5
    assert rows[2].needed == pytest.approx(2.0 * 15.2 / 13.5) and rows[2].unit == "tok/s per stream"


def test_break_even_against_a_given_number_and_what_is_missing_without_a_figure() -> None:
    result = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, 2.0, 15.2, 60.0), PlainRun("73.8 tok/s given",
                                                                                         throughput=73.8))
    assert result is not None
    assert [round(row.needed, 2) for row in result.break_even] == [1.57, 2.46]
    bare = _run(3, [])
    missing = decompose(_story(1, 2.0, 10.05, 94.0), _story(2, 2.0, 15.2, 60.0), PlainRun("run 3", run=bare))
    assert missing is not None and missing.break_even == []
    assert any("share no throughput figure" in text for text in missing.missing)


def test_a_printed_cycle_time_is_used_only_when_both_runs_have_one() -> None:
    a = _story(1, 2.0, 10.05, 94.0)
    b = _story(2, 2.0, 15.2, 60.0)
    a.metrics.append(Metric("cycle_time", 20.0, "ms", "cycle_time", "--metric cycle_time"))
    one = decompose(a, b)
    assert one is not None and one.values() == pytest.approx((2.0, 2.0, 20.1, 30.4))
    b.metrics.append(Metric("cycle_time", 0.031, "s", "cycle_time", "--metric cycle_time"))
    both = decompose(a, b)
    assert both is not None and both.values() == pytest.approx((2.0, 2.0, 20.0, 31.0))
    assert "printed (cycle_time)" in "\n".join(both.lines())


def test_zero_figures_are_missing_figures_not_a_division_by_zero() -> None:
    # bench_serving prints 0.00 ms TPOT when every request produced one token, and an engine can print 0.
    result = decompose(_story(1, 2.0, 0.0, 94.0), _story(2, 0.0, 15.2, 60.0))
    assert result is not None and result.parts() is None
    text = "\n".join(result.lines())
    assert "run 1 has no mean TPOT above 0" in text and "run 2 printed no accept length" in text
    zero_plain = decompose(_story(1, 2.0, 10.0, 94.0), _story(2, 2.0, 15.0, 0.0), PlainRun("x", throughput=70.0))
    assert zero_plain is not None and [row.run_id for row in zero_plain.break_even] == [1]
    assert any("run 2's throughput is 0" in text or "run 2 printed no output token throughput" in text
               for text in zero_plain.missing)
