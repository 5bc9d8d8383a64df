"""Figures read from real benchmark outputs pasted in public issues (tests/data/bench_outputs/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftcheck.errors import UsageError
from driftcheck.runs.metrics import MetricScanner, user_pattern
from driftcheck.runs.output import scan_text

OUTPUTS = Path(__file__).resolve().parent.parent / "data" / "bench_outputs"

# file -> {metric name: (value, unit)}; every figure listed must be found with exactly this value.
EXPECTED: dict[str, dict[str, tuple[float, str]]] = {
    "sglang_bench_serving_2805.txt": {
        "request_throughput": (9.67, "req/s"), "input_token_throughput": (2165.94, "tok/s"),
        "output_token_throughput": (1915.40, "tok/s"), "total_token_throughput": (4081.34, "tok/s"),
        "benchmark_duration": (170.41, "s"), "mean_e2e_latency": (80126.93, "ms"), "mean_ttft": (44294.80, "ms")},
    "sglang_bench_serving_fa4_9428.txt": {
        "output_token_throughput": (6.60, "tok/s"), "input_token_throughput": (137022.74, "tok/s"),
        "median_ttft": (6711.85, "ms"), "p99_ttft": (15292.66, "ms"), "mean_itl": (8132.74, "ms"),
        "p95_itl": (13752.97, "ms"), "p99_itl": (13753.42, "ms")},
    "sglang_bench_serving_1639.txt": {
        "output_token_throughput": (10896.87, "tok/s"), "total_token_throughput": (24022.63, "tok/s"),
        "median_tpot": (74.07, "ms"), "p99_tpot": (1647.41, "ms")},
    "sglang_bench_one_batch_30147.txt": {  # the measured pass, printed after the warm-up, is the one kept
        "prefill_latency": (0.01014, "s"), "prefill_throughput": (5916.43, "tok/s"),
        "decode_median_latency": (0.00572, "s"), "decode_median_throughput": (174.85, "tok/s"),
        "total_latency": (0.062, "s"), "total_throughput": (1122.76, "tok/s")},
    "sglang_bench_latency_564.txt": {
        "prefill_latency": (0.019, "ms"), "prefill_throughput": (52553.25, "tok/s"),
        "decode_throughput": (108.31, "tok/s")},
    "sglang_bench_offline_throughput_1968.txt": {"token_throughput": (12577.550785919339, "tok/s")},
    "vllm_benchmark_serving_12845.txt": {
        "request_throughput": (2.34, "req/s"), "output_token_throughput": (529.33, "tok/s"),
        "total_token_throughput": (925.72, "tok/s"), "mean_ttft": (249.49, "ms"), "p99_tpot": (169.89, "ms"),
        "median_itl": (80.62, "ms"), "p99_itl": (340.52, "ms")},
    "vllm_benchmark_serving_7062.txt": {
        "output_token_throughput": (1556.25, "tok/s"), "p90_ttft": (332.99, "ms"), "p95_ttft": (400.04, "ms"),
        "median_tpot": (223.08, "ms")},
    "vllm_benchmark_throughput_8914.txt": {
        "request_throughput": (89.27, "req/s"), "total_token_throughput": (22853.37, "tok/s"),
        "output_token_throughput": (11426.69, "tok/s")},
    "vllm_benchmark_throughput_before_8914.txt": {
        "request_throughput": (81.74, "req/s"), "token_throughput": (20926.37, "tok/s")},
    "vllm_bench_latency_36517.txt": {
        "avg_latency": (0.45101274012898407, "s"), "p10_latency": (0.45005662548355757, "s"),
        "p50_latency": (0.4513282610569149, "s"), "p99_latency": (0.4531175020430237, "s")},
    "nccl_tests_all_reduce_119.txt": {"avg_bus_bandwidth": (84.8558, "GB/s")},
    # speculative decoding: the accept length next to the throughput it explains
    "sglang_bench_serving_eagle_cookbook_b200.txt": {
        "accept_length": (2.46, "tok/step"), "output_token_throughput": (95.62, "tok/s"), "mean_tpot": (9.09, "ms")},
    "sglang_bench_serving_mtp_cookbook_h800.txt": {
        "accept_length": (3.27, "tok/step"), "output_token_throughput": (86.20, "tok/s"), "mean_tpot": (10.99, "ms")},
    "vllm_bench_serve_spec_51742.txt": {
        "acceptance_rate": (31.16, "%"), "output_token_throughput": (371.88, "tok/s"), "mean_tpot": (2.38, "ms")},
    "vllm_spec_decode_offline_24344.txt": {
        "num_drafts": (2189, "drafts"), "num_draft_tokens": (6567, "tokens"), "num_accepted_tokens": (3187, "tokens"),
        "accept_length": (2.46, "tok/step")},
    "vllm_spec_decoding_log_24127.txt": {
        "acceptance_rate": (88.8, "%"), "accept_length": (5.44, "tok/step"), "num_accepted_tokens": (262, "tokens"),
        "num_draft_tokens": (295, "tokens")},
    "vllm_ascend_spec_decoding_log_13640.txt": {  # two intervals: the last one is kept
        "acceptance_rate": (27.5, "%"), "accept_length": (2.93, "tok/step"), "num_accepted_tokens": (106, "tokens"),
        "num_draft_tokens": (385, "tokens")},
    "vllm_spec_decoding_log_15902.txt": {  # before (a fraction) and after (a percentage) that change
        "acceptance_rate": (100.0, "%"), "num_accepted_tokens": (66, "tokens"), "num_draft_tokens": (66, "tokens")},
    "sglang_decode_log_eagle3_11948.txt": {  # five decode intervals: the last is kept
        "accept_length": (1.80, "tok/step"), "acceptance_rate": (45.0, "%")},
    "vllm_v0_speculative_metrics_7301.txt": {
        "acceptance_rate": (60.7, "%"), "num_accepted_tokens": (32594, "tokens"),
        "num_draft_tokens": (53716, "tokens")},
}

# Figures that must NOT be read: per-step lines, counts without a unit, the generic fallback on tables.
NOT_EXPECTED = {
    "sglang_bench_one_batch_30147.txt": {"throughput", "decode_0_batch_size_1_latency"},
    "sglang_bench_serving_2805.txt": {"successful_requests", "total_input_tokens", "milliseconds"},
    "nccl_tests_all_reduce_119.txt": {"milliseconds", "tokens_per_second"},
    # the log's "Accepted/Drafted throughput" are rates of draft tokens, not output throughput
    "vllm_spec_decoding_log_24127.txt": {"accepted_throughput", "drafted_throughput", "tokens_per_second"},
    "vllm_ascend_spec_decoding_log_13640.txt": {"accepted_throughput", "drafted_throughput"},
    # "seq normalized acceptance length" is another figure; only "mean acceptance length" is the accept length
    "vllm_spec_decode_offline_24344.txt": {"seq_normalized_acceptance_length"},
    "sglang_decode_log_eagle3_11948.txt": {"gen_throughput", "tokens_per_second"},
}


def test_every_output_file_is_checked_and_has_a_source() -> None:
    files = {p.name for p in OUTPUTS.glob("*.txt")}
    assert files == set(EXPECTED)
    sources = (OUTPUTS / "SOURCES.md").read_text("utf-8")
    for name in files:
        assert f"| {name} |" in sources and "https://github.com/" in sources.split(f"| {name} |")[1].split("\n")[0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builtin_patterns_read_real_outputs(name: str) -> None:
    found = {m.name: m for m in scan_text((OUTPUTS / name).read_text("utf-8"))}
    for metric, (value, unit) in EXPECTED[name].items():
        assert metric in found, f"{metric} not read from {name}; read: {sorted(found)}"
        assert found[metric].value == pytest.approx(value, rel=1e-12)
        assert found[metric].unit == unit
    assert not (NOT_EXPECTED.get(name, set()) & set(found))


def test_direction_follows_the_unit() -> None:
    found = {m.name: m for m in scan_text((OUTPUTS / "vllm_benchmark_serving_12845.txt").read_text("utf-8"))}
    assert found["output_token_throughput"].higher_is_better is True
    assert found["mean_ttft"].higher_is_better is False


def test_an_accept_length_is_better_higher_and_draft_counts_have_no_direction() -> None:
    found = {m.name: m for m in scan_text((OUTPUTS / "vllm_spec_decode_offline_24344.txt").read_text("utf-8"))}
    assert found["accept_length"].higher_is_better is True
    assert found["num_drafts"].higher_is_better is None
    assert found["num_accepted_tokens"].higher_is_better is None


def test_the_spec_decoding_log_line_is_not_read_as_output_throughput() -> None:
    # Without its own pattern the generic "N tokens/s" reader took "Accepted throughput: 4.37 tokens/s" for a
    # throughput figure; the line is claimed whole, and a line of the same shape with no known part yields none.
    line = (OUTPUTS / "vllm_spec_decoding_log_24127.txt").read_text("utf-8")
    assert not any(m.unit == "tok/s" for m in scan_text(line))
    assert scan_text("SpecDecoding metrics: Accepted throughput: 4.37 tokens/s") == []


def test_a_figure_printed_twice_keeps_the_last_and_counts() -> None:
    found = {m.name: m for m in scan_text((OUTPUTS / "sglang_bench_one_batch_30147.txt").read_text("utf-8"))}
    assert found["total_throughput"].count == 2
    assert found["total_throughput"].value == 1122.76


def test_generic_lines() -> None:
    found = {m.name: m for m in scan_text("decode: 61.5 tok/s\nstep time = 12.5 ms\nall done\n")}
    assert found["decode"].value == 61.5 and found["decode"].unit == "tok/s"
    assert found["step_time"].value == 12.5 and found["step_time"].unit == "ms"


def test_progress_bars_redrawn_with_carriage_returns_are_split() -> None:
    found = {m.name: m for m in scan_text("\r 10%|#  | 1/10\r100%|###| 10/10\rOutput token throughput (tok/s): 94.1\n")}
    assert found["output_token_throughput"].value == 94.1


def test_user_pattern_with_value_and_unit_groups() -> None:
    pattern = user_pattern(r"verify cycle=cycle (?P<value>[0-9.]+) ?(?P<unit>ms)")
    scanner = MetricScanner((pattern,))
    scanner.feed("spec decode: cycle 20.4 ms, accept 3.1")
    (metric,) = [m for m in scanner.metrics() if m.name == "verify_cycle"]
    assert (metric.value, metric.unit, metric.label) == (20.4, "ms", "verify cycle")


def test_user_pattern_does_not_hide_builtin_figures() -> None:
    scanner = MetricScanner((user_pattern(r"otp=throughput \(tok/s\):\s+([0-9.]+)"),))
    scanner.feed("Output token throughput (tok/s):          1915.40")
    names = {m.name for m in scanner.metrics()}
    assert names == {"otp", "output_token_throughput"}


@pytest.mark.parametrize("spec, message", [
    ("no-equals-sign", "NAME=REGEX"),
    ("x=([0-9]+", "not a regular expression"),
    ("x=[0-9]+", "needs a group"),
])
def test_bad_user_patterns_are_usage_errors(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        user_pattern(spec)


def test_user_pattern_with_a_fixed_unit() -> None:
    scanner = MetricScanner((user_pattern(r"accept len[tokens/s]=accept len: ([0-9.]+)"),))
    scanner.feed("Decode batch, #running-req: 40, accept len: 3.13, accept rate: 0.71")
    found = {m.name: m for m in scanner.metrics()}
    metric = found["accept_len"]
    assert (metric.name, metric.value, metric.unit, metric.higher_is_better) == ("accept_len", 3.13, "tok/s", True)
    # the built-in reading of the same line stays (the user's figures never hide a built-in one)
    assert (found["accept_length"].value, found["acceptance_rate"].value) == (3.13, 71.0)


def test_the_sglang_decode_log_counts_its_intervals() -> None:
    found = {m.name: m for m in scan_text((OUTPUTS / "sglang_decode_log_eagle3_11948.txt").read_text("utf-8"))}
    assert found["accept_length"].count == 5


def test_log_lines_that_differ_in_their_digits_are_each_read_for_their_own_figures() -> None:
    # The second and third lines are read from the places the first one's figures were found at.
    scanner = MetricScanner()
    for line in ("step 10: decode 12.5 ms, prefill 300 tok/s", "step 11: decode 99.1 ms, prefill 712 tok/s",
                 "step 12: decode 40.0 ms, prefill 5 tok/s", "step 13: decode 7 ms"):
        scanner.feed(line)
    assert [(m.name, m.value, m.unit, m.count) for m in scanner.metrics()] == [
        ("decode", 7.0, "ms", 4), ("prefill", 5.0, "tok/s", 3)]


def test_no_piece_of_a_built_in_pattern_holds_a_line_end_or_a_digit() -> None:
    # feed_lines finds the pieces in the lines joined by \n and does not search a line it found one in again:
    # a piece holding a line end could be found across two lines, in neither of them. A line like one that held
    # no piece (the same but for its digits) is not searched either: a piece holding a digit could be in it.
    from driftcheck.runs.metrics import BUILTIN_PATTERNS, GENERIC_PATTERNS

    pieces = [piece for pattern in (*BUILTIN_PATTERNS, *GENERIC_PATTERNS) for piece in pattern.needs]
    assert pieces and not [piece for piece in pieces if "\n" in piece or "\r" in piece
                           or any(char.isdigit() for char in piece)]


def test_lines_in_bulk_read_as_lines_one_by_one() -> None:
    lines = ["step 1: loss 2.31 throughput 1234.5 tok/s elapsed 0.0231 s", "plain words, no figure",
             "\x1b[32mOutput token throughput (tok/s): 94.1\x1b[0m", "Accept length: 3.12", "latency: 12.5 ms",
             "step 2: loss 2.30 throughput 1250.0 tok/s elapsed 0.0229 s", "Output token throughput (tok/s): 95.2",
             "decode 812.5 tok/s", "decode 820.0 tok/s", "step 3: accept length 1.50 tok/s",
             "step 4: loss 2.29 throughput 1260.0 tok/s elapsed 0.0228 s"]
    user = (user_pattern("loss=loss ([0-9.]+)"),)
    for chosen in (lines, [line for line in lines if "\x1b" not in line]):  # with and without colour codes
        bulk, single = MetricScanner(user), MetricScanner(user)
        bulk.feed_lines(chosen)
        for line in chosen:
            single.feed(line)
        assert bulk.metrics() == single.metrics()
        assert {(metric.name, metric.value, metric.count) for metric in bulk.metrics()} >= \
            {("loss", 2.29, 3), ("accept_length", 1.5, 2), ("latency", 12.5, 1), ("decode", 820.0, 2)}


def test_the_figures_given_do_not_change_as_the_scan_goes_on() -> None:
    scanner = MetricScanner()
    scanner.feed("Output token throughput (tok/s): 94.1")
    (first,) = scanner.metrics()
    scanner.feed("Output token throughput (tok/s): 60.3")
    assert (first.value, first.count) == (94.1, 1)
    assert [(metric.value, metric.count) for metric in scanner.metrics()] == [(60.3, 2)]


def test_lines_of_one_digit_blind_form_read_in_bulk_as_one_by_one_across_chunks() -> None:
    # The generic pattern's lines are read once per form (their last values, their count, their first place);
    # the lines a user pattern or a specific pattern reads, and a value that reads as infinity, are fed alone
    # between them. The figures, their order, values and counts are those of feeding the lines one by one.
    lines = [f"step {i}: loss 2.{i} throughput {1000 + i}.5 tok/s elapsed 0.0{i} s" for i in range(30)]
    lines[3] = "decode 12.5 ms"
    lines[7] = "Output token throughput (tok/s): 94.1"
    lines[11] = "step 11: loss 2.11 throughput 1e999 tok/s elapsed 0.011 s"  # infinity: not a figure
    lines[12] = "decode 7 ms"
    lines[20] = "Output token throughput (tok/s): 95.2"
    lines[25] = "decode 1e400 ms"
    found = []
    for user in ((), (user_pattern("loss=loss ([0-9.]+)"),)):
        for cut in (0, 5, 12, 21, 30):
            bulk, single = MetricScanner(user), MetricScanner(user)
            bulk.feed_lines(lines[:cut])
            bulk.feed_lines(lines[cut:])
            for line in lines:
                single.feed(line)
            assert [m.to_json() for m in bulk.metrics()] == [m.to_json() for m in single.metrics()]
        found.append([(m.name, m.value, m.count) for m in single.metrics()])
    assert found[0] == [("throughput", 1029.5, 24), ("decode", 7.0, 2), ("output_token_throughput", 95.2, 2)]
    # The user's figure claims its lines: the generic pattern reads none of them.
    assert found[1] == [("loss", 2.29, 25), ("decode", 7.0, 2), ("output_token_throughput", 95.2, 2)]
