"""`driftcheck bisect`: ddmin over environment changes, each step a real interleaved trial."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from driftcheck.runs.bisect import Change, changes_of, ddmin, variant_with
from driftcheck.runs.trial import Variant
from tests.conftest import CliResult

# Twelve variables; only X7=slow doubles the work (CPU time, so neighbours' load does not move the figure).
LOOP = """
import os, time
n = 150000 * (2 if os.environ.get("X7") == "slow" else 1)
start = time.process_time()
x = 0
for i in range(n):
    x += i
print(f"loop: {(time.process_time() - start) * 1000:.3f} ms")
"""


def test_ddmin_finds_the_one_failing_change_in_few_tests() -> None:
    items = [Change(f"X{i}", "1") for i in range(12)]
    tested: list[int] = []

    def fails(subset: Sequence[Change]) -> bool:
        tested.append(1)
        return items[6] in subset

    assert ddmin(items, fails) == [items[6]]
    assert len(tested) <= 2 * 4 + 2 - 1  # 2·ceil(log2 12)+2 trials, the first being the whole set


def test_ddmin_keeps_a_pair_that_only_fails_together() -> None:
    items = [Change(f"X{i}", "1") for i in range(8)]
    assert ddmin(items, lambda s: items[1] in s and items[5] in s) == [items[1], items[5]]


def test_changes_are_what_b_does_that_a_does_not_and_can_be_put_on_a() -> None:
    a = Variant("A", {"X": "1", "Y": "2"}, ("Z",))
    b = Variant("B", {"X": "1", "Y": "3", "W": "4"}, ("Z", "V"))
    changes = changes_of(a, b)
    assert [c.describe() for c in changes] == ["Y=3", "W=4", "-V"]
    mixed = variant_with(a, [changes[0], changes[2]])
    assert mixed.environment({"V": "x", "Z": "z", "HOME": "/h"}) == {"HOME": "/h", "X": "1", "Y": "3"}


@pytest.mark.slow
def test_bisect_names_the_one_slow_change_of_twelve(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP)
    a = " ".join(f"X{i}=0" for i in range(1, 13))
    b = " ".join(f"X{i}={'slow' if i == 7 else 1}" for i in range(1, 13))
    result = cli("bisect", "--seed", "5", "--max-pairs", "7", "--a", a, "--b", b, "--format", "json",
                 "--no-record", "--", sys.executable, loop)
    assert result.returncode == 1, result.stdout + result.stderr
    found = json.loads(result.stdout)
    assert found["culprits"] == ["X7=slow"]
    assert found["verdict"] == "slower" and found["share_pct"] > 50
    assert len(found["steps"]) + 1 <= 2 * 4 + 2  # the target: 2·ceil(log2 12)+2 trials
    assert found["rest"]["changes"] == [f"X{i}=1" for i in range(1, 13) if i != 7]
    assert not found["rest"]["reproduces"]


@pytest.mark.slow
def test_bisect_without_a_shift_says_so(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    fixed = tmp_path / "fixed.py"
    fixed.write_text('print("decode: 5.000 ms")\n')
    result = cli("bisect", "--max-pairs", "7", "--b", "X1=1 X2=2", "--no-record", "--", sys.executable, fixed)
    assert result.returncode == 0
    assert "no difference resolved, nothing to bisect" in result.stdout


def test_bisect_refuses_what_is_not_an_environment_change(cli: Callable[..., CliResult]) -> None:
    assert "environment changes" in cli("bisect", "--b-python", "/x/python", "--", "python", "b.py").stderr
