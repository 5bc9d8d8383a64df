"""`baseline save --sessions N --interval S`: a baseline taken in several sessions, kept as sessions of its state,
so that the checks against it count this host's between-session spread as measured (issue 36)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

import driftcheck
from driftcheck.errors import OptionError
from tests.conftest import CliResult


@pytest.mark.parametrize("options,match", [({"sessions": 0, "bench": "quick"}, "sessions"),
                                           ({"sessions": 2}, "give bench too"),
                                           ({"sessions": 2, "bench": "quick", "interval_s": -1.0}, "interval_s"),
                                           ({"sessions": 2, "bench": "quick", "interval_s": float("nan")},
                                            "interval_s")])
def test_sessions_that_cannot_be_taken_are_refused_before_any_measurement(options: dict, match: str) -> None:
    with pytest.raises(OptionError, match=match):
        driftcheck.save_baseline("b", **options)
    assert driftcheck.list_baselines().entries == ()


def test_the_command_line_refuses_sessions_without_a_benchmark(cli: Callable[..., CliResult]) -> None:
    refused = cli("baseline", "save", "b", "--sessions", "2")
    assert refused.returncode == 2 and "--sessions" in refused.stderr and "Traceback" not in refused.stderr
    assert cli("baseline", "save", "b", "--bench", "quick", "--sessions", "0").returncode == 2
    assert cli("baseline", "save", "b", "--bench", "quick", "--sessions", "2", "--interval", "0").returncode == 2
    assert cli("baseline", "list").stdout.startswith("no baselines yet")


@pytest.mark.slow
def test_a_baseline_in_four_sessions_measures_the_spread_every_check_counts(
        cli_process: Callable[..., CliResult]) -> None:
    # Four sessions, one more than a measured spread needs (MIN_SESSIONS = 3): on a loaded CI box one session
    # can lose a figure of a benchmark (a case skipped past its budget, a run without its control), and with
    # exactly three sessions that figure would honestly fall back to the assumed spread.
    saved = cli_process("baseline", "save", "b4", "--bench", "quick", "--runs", "2", "--budget-s", "1",
                        "--sessions", "4", "--interval", "1", timeout=900)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert "between sessions (4 taken" in saved.stdout
    measured = [line for line in saved.stdout.splitlines()
                if line.startswith("  ") and ("over 4 sessions" in line or "over 3 sessions" in line)]
    assert measured, saved.stdout
    checked = cli_process("check", "--against", "b4", "--max-runs", "2", "--no-store", "--format", "json",
                          timeout=900)
    assert checked.returncode in (0, 1), checked.stdout + checked.stderr
    rows = json.loads(checked.stdout)["bench"]
    assert rows and all(row["between_sessions"]["measured"] and row["between_sessions"]["sessions"] >= 3
                        for row in rows if row["direction"] != "missing"), rows
    assert all("between-session spread ±" in row["verdict_text"] or "between sessions" in str(row["reason"])
               for row in rows if row["direction"] != "missing")
