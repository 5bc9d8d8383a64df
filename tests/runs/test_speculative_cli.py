"""`driftcheck run` of commands that print SGLang bench_serving results of speculative decoding, then
`explain run:A run:B` splitting the throughput shift into accept length and cycle time, as a user types it.

Run A prints a real bench_serving result (tests/data/bench_outputs/sglang_bench_serving_eagle_cookbook_b200.txt,
source in SOURCES.md): accept length 2.46, mean TPOT 9.09 ms, 95.62 tok/s. Run B prints the same lines with
the story's change: the same accept length, a cycle 51 % longer (mean TPOT 13.74 ms), 63.30 tok/s. Run C
prints them without the accept length line, at 77.9 tok/s: the server without speculative decoding.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.servers import SERVERS_DATA, recorded_routes

REAL = (Path(__file__).resolve().parent.parent / "data" / "bench_outputs"
        / "sglang_bench_serving_eagle_cookbook_b200.txt").read_text("utf-8")
SLOWER_CYCLE = (REAL.replace("Mean TPOT (ms):                          9.09",
                             "Mean TPOT (ms):                          13.74")
                .replace("Output token throughput (tok/s):         95.62",
                         "Output token throughput (tok/s):         63.30"))
PLAIN = "".join(line for line in REAL.splitlines(keepends=True) if not line.startswith("Accept length:")).replace(
    "Output token throughput (tok/s):         95.62", "Output token throughput (tok/s):         77.90")


def _record(cli_process: Callable[..., CliResult], output: str, label: str) -> None:
    done = cli_process("run", "--probe", "env", "--label", label, "--", sys.executable, "-c",
                       f"print({output!r}, end='')")
    assert done.returncode == 0, done.stderr
    assert done.stdout == output  # the command's output passes through unchanged


def test_explain_splits_the_shift_and_states_the_break_even(cli_process: Callable[..., CliResult],
                                                            cli: Callable[..., CliResult]) -> None:
    assert SLOWER_CYCLE != REAL and "Accept length" not in PLAIN and "77.90" in PLAIN
    _record(cli_process, REAL, "eagle")
    _record(cli_process, SLOWER_CYCLE, "eagle-after")
    _record(cli_process, PLAIN, "no-spec")

    explained = cli("explain", "run:1", "run:2")
    lines = explained.stdout.splitlines()
    assert "  Output token throughput: 95.62 \u2192 63.3 tok/s (\u221234%) worse" in lines
    split = next(line for line in lines if "speculative decoding, run 1 -> run 2" in line)
    # 2.46 x 9.09 = 22.4 ms, 2.46 x 13.74 = 33.8 ms
    assert split == ("  speculative decoding, run 1 -> run 2: accept length 2.46 \u2192 2.46 (+0 %); "
                     "cycle 22.4 \u2192 33.8 ms (+51 %); per-stream rate \u221234 %")
    assert "each draft-and-verify cycle got slower and the drafter's accept length held" in explained.stdout
    assert "break-even" not in explained.stdout  # no run without speculation was named

    with_plain = cli("explain", "run:1", "run:2", "--non-spec", "run:3")
    assert ("break-even: run 2 (63.3 tok/s at an accept length of 2.46) breaks even with run 3 without "
            "speculative decoding (77.9 tok/s) at an accept length of 3.03: 0.57 short") in with_plain.stdout
    assert "break-even: run 1 (95.6 tok/s at an accept length of 2.46)" in with_plain.stdout

    report = json.loads(cli("explain", "run:1", "run:2", "--non-spec", "77.9", "--format", "json").stdout)
    spec = report["runs"]["speculative"]
    assert spec["decomposed"] is True
    assert spec["a"]["accept_length"] == {"value": 2.46, "source": "printed (Accept length)"}
    assert spec["b"]["cycle_ms"]["value"] == pytest.approx(2.46 * 13.74)
    assert spec["changes"]["cycle"] == pytest.approx(round(13.74 / 9.09 - 1, 4))
    assert spec["changes"]["cycle_share"] == pytest.approx(1.0)
    (row,) = [r for r in spec["break_even"] if r["run"] == 2]
    assert row["break_even_accept_length"] == pytest.approx(round(2.46 * 77.9 / 63.3, 4))
    assert row["plain_source"] == "77.9 tok/s without speculative decoding (given)"

    # A run without the accept length on one side: no split, and it says what is missing.
    one_sided = cli("explain", "run:2", "run:3")
    assert "run 3 printed no accept length" in one_sided.stdout
    assert "not split into accept length and cycle time" in one_sided.stdout
    assert "speculative decoding, run" not in one_sided.stdout


@pytest.mark.parametrize("args, message", [
    (("run:1", "run:1", "--non-spec", "run:1"), "printed an accept length"),
    (("run:1", "run:1", "--non-spec", "fast"), "give a run (run:ID) or its output throughput"),
    (("run:1", "run:1", "--non-spec", "-3"), "must be a positive number"),
])
def test_a_bad_non_spec_is_one_line_and_exit_2(cli_process: Callable[..., CliResult], cli: Callable[..., CliResult],
                                               args: tuple[str, ...], message: str) -> None:
    _record(cli_process, REAL, "eagle")
    done = cli("explain", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def _server_info(accept: float, algorithm: str | None = None) -> dict[str, Any]:
    """The recorded SGLang /get_server_info answer (a server without speculative decoding) with the key
    SGLang's scheduler adds under speculative decoding (`avg_spec_accept_length`, see
    test_speculative_server.py), and, given `algorithm`, the --speculative-algorithm it would have."""
    info = json.loads((SERVERS_DATA / "sglang-docs-native-api" / "get_server_info.json").read_text("utf-8"))
    info = copy.deepcopy(info)
    info["internal_states"][0]["avg_spec_accept_length"] = accept
    if algorithm is not None:
        info["speculative_algorithm"] = algorithm
    return info


@pytest.mark.slow  # a replayed server and two commands run
def test_the_servers_accept_length_stands_in_when_the_output_has_none(cli: Callable[..., CliResult],
                                                                      replay_server: Any) -> None:
    routes = recorded_routes("sglang-docs-native-api", **{"get_server_info.json": _server_info(2.46)})
    url = replay_server(routes)
    without_line = "".join(line for line in REAL.splitlines(keepends=True) if not line.startswith("Accept length:"))
    slower = "".join(line for line in SLOWER_CYCLE.splitlines(keepends=True) if not line.startswith("Accept length:"))
    for output in (without_line, slower):
        done = cli("run", "--probe", "env", "--server", url, "--", sys.executable, "-c", f"print({output!r}, end='')")
        assert done.returncode == 0, done.stderr
    report = json.loads(cli("explain", "run:1", "run:2", "--format", "json").stdout)
    spec = report["runs"]["speculative"]
    assert spec["decomposed"] is True
    assert spec["b"]["accept_length"]["source"].startswith("the server's avg_spec_accept_length after the run")
    assert spec["changes"]["accept_length"] == 0.0 and spec["changes"]["cycle"] == pytest.approx(0.5116, abs=1e-4)
    # The accept length on the snapshots is a reading: it is never ranked as a cause of the shift.
    assert not any("avg_spec_accept_length" in str(row) for row in report["explanations"])


def test_non_spec_without_two_runs_is_refused_before_any_work(cli: Callable[..., CliResult]) -> None:
    # No snapshot exists: were the snapshots resolved first, the message would be about them.
    done = cli("explain", "@prev", "@latest", "--non-spec", "73.8")
    assert done.returncode == 2 and "use it with explain run:A run:B" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.slow  # a replayed server and two commands run
def test_a_run_whose_server_had_no_speculation_gives_the_break_even_unasked(cli: Callable[..., CliResult],
                                                                            replay_server: Any) -> None:
    routes = recorded_routes("sglang-docs-native-api", **{"get_server_info.json": _server_info(2.46, "EAGLE3")})
    url = replay_server(routes)
    first = cli("run", "--probe", "env", "--server", url, "--", sys.executable, "-c",
                f"print({SLOWER_CYCLE!r}, end='')")
    assert first.returncode == 0, first.stderr
    routes.update(recorded_routes("sglang-docs-native-api"))  # the recorded server, as published: no speculation
    second = cli("run", "--probe", "env", "--server", url, "--", sys.executable, "-c", f"print({PLAIN!r}, end='')")
    assert second.returncode == 0, second.stderr

    text = cli("explain", "run:1", "run:2").stdout
    assert "run 2 ran without speculative decoding: there is nothing of it to split" in text
    assert ("break-even: run 1 (63.3 tok/s at an accept length of 2.46) breaks even with run 2, whose server ran "
            "without speculative decoding (77.9 tok/s) at an accept length of 3.03: 0.57 short") in text, text
    # and the setting that changed is ranked among the causes, as for any server flag
    causes = [line for line in text.splitlines() if re.match(r"^\s+\d+\. \[", line)]
    assert any("speculative decoding" in line for line in causes), text
