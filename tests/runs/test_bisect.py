"""`driftcheck bisect`: ddmin over environment changes, each step a real interleaved trial."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from driftcheck.errors import OptionError
from driftcheck.runs.bisect import Change, bisection_id, changes_of, ddmin, variant_with
from driftcheck.runs.metrics import Metric
from driftcheck.runs.overlay import Distribution, Overlays, package_changes
from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.runs.trial import TrialPlan, Variant, recorded_result
from driftcheck.stats.comparison import plan_looks
from tests.conftest import CliResult

# Twelve variables; only X7=slow doubles the work. The figure is the work counted, not timed: these tests are
# of the bisection, and a timed figure would let one step in twenty resolve noise (test_trial times real work).
LOOP = """
import os
n = 150000 * (2 if os.environ.get("X7") == "slow" else 1)
x = 0
for i in range(n):
    x += i
print(f"loop: {n / 10000:.3f} ms")
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
    assert found["rest"]["effect_pct"] == 0 and not found["rest"]["decided"]  # measured: the rest do nothing


@pytest.mark.slow
def test_bisect_without_a_shift_says_so(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    fixed = tmp_path / "fixed.py"
    fixed.write_text('print("decode: 5.000 ms")\n')
    result = cli("bisect", "--max-pairs", "7", "--b", "X1=1 X2=2", "--no-record", "--", sys.executable, fixed)
    assert result.returncode == 0
    assert "no difference resolved, nothing to bisect" in result.stdout


# A run of at least 0.25 s whose figure is counted, not timed: X7=slow doubles it.
SLEEPY = """
import os, time
time.sleep(0.25)
print(f"work: {200 if os.environ.get('X7') == 'slow' else 100}.000 ms")
"""


@pytest.mark.slow
def test_a_bisection_stopped_by_its_budget_resumes_from_its_run_records(cli: Callable[..., CliResult],
                                                                        tmp_path: Path) -> None:
    sleepy = tmp_path / "sleepy.py"
    sleepy.write_text(SLEEPY)
    a = " ".join(f"X{i}=0" for i in range(1, 9))
    b = " ".join(f"X{i}={'slow' if i == 7 else 1}" for i in range(1, 9))
    args = ("bisect", "--seed", "3", "--max-pairs", "7", "--a", a, "--b", b, "--format", "json")
    # Its 7 trials of 7 pairs sleep 24 s at least; the first (14 runs) fits in 20 s even where starting a
    # process takes half a second.
    first = cli(*args, "--budget-s", "20", "--", sys.executable, str(sleepy))
    assert first.returncode == 3, first.stdout + first.stderr
    stopped = json.loads(first.stdout)
    assert not stopped["finished"] and stopped["full"]["decided"], first.stdout
    finished_before = 1 + len(stopped["steps"])
    ids_before = {r.id for r in RunStore().entries()}

    resumed = cli(*args, "--resume", "--", sys.executable, str(sleepy))
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    found = json.loads(resumed.stdout)
    assert found["id"] == stopped["id"] and found["culprits"] == ["X7=slow"]
    assert found["reused"] == finished_before
    # The trials finished before were decided again from their records, not rerun: same figures, old runs.
    assert found["full"]["reused"] and found["full"]["run_ids"] == stopped["full"]["run_ids"]
    for old, new in zip(stopped["steps"], found["steps"], strict=False):
        assert new["reused"] and new["changes"] == old["changes"] and new["effect_pct"] == old["effect_pct"]
    assert all(set(s["run_ids"]) <= ids_before for s in found["steps"] if s["reused"])
    assert all(not set(s["run_ids"]) & ids_before for s in found["steps"] if not s["reused"])
    assert resumed.stderr.count("(reused: runs #") == finished_before
    assert f"{finished_before} finished trial(s) recorded by an earlier run, reused" in resumed.stderr
    # The text output says which steps were reused.
    again = cli(*args[:-2], "--resume", "--", sys.executable, str(sleepy))
    assert again.returncode == 1
    assert f"({len(found['steps']) + 2} reused from the records of an earlier run)" in again.stdout
    assert again.stdout.splitlines()[0].endswith("B is slower (reused)"), again.stdout
    assert all(line.endswith("(reused)") for line in again.stdout.splitlines() if line.startswith("  X"))


def _records(values: list[tuple[float, float]], seed: int = 9) -> list[RunRecord]:
    """The run records a trial of A and B leaves, one pair of figures per round."""
    out = []
    for round_no, pair in enumerate(values, start=1):
        for name, value in zip("AB", pair, strict=True):
            out.append(RunRecord(["cmd"], "/", "h", "t", 0.5, 0, None, label="try:x:" + name,
                                 metrics=[Metric("work", value, "ms", "Work", "--metric work")],
                                 telemetry={"trial": {"seed": seed, "round": round_no, "variant": name,
                                                      "figure": "work"}}, id=len(out) + 1))
    return out


def test_a_recorded_trial_is_decided_again_only_when_it_had_finished() -> None:
    plan = TrialPlan(("cmd",), (Variant("A"), Variant("B", {"X": "1"})), max_pairs=7, seed=9)
    slower = [(10.0, 12.0 + k / 10) for k in range(7)]
    done = recorded_result(plan, _records(slower))
    assert done is not None and done.stopped == "decided" and done.verdict("B") == "slower"
    assert done.comparisons["B"].n == plan_looks(7).looks[0]  # where the live trial stopped too
    assert recorded_result(plan, _records(slower[:3])) is None  # cut off before any look
    # Cut by its budget at 6 rounds, before its one planned look (7): the live trial spent all its alpha at
    # that unplanned look and decided (exact p = 2/64); its records say the same. At 5 (p = 2/32) it had not.
    cut = recorded_result(plan, _records(slower[:6]))
    assert cut is not None and cut.stopped == "decided" and cut.comparisons["B"].n == 6, cut
    assert recorded_result(plan, _records(slower[:5])) is None
    same = [(10.0, 10.0 + (-1) ** k * (k + 1) / 100) for k in range(7)]
    ran_out = recorded_result(plan, _records(same))
    assert ran_out is not None and ran_out.stopped == "max-pairs" and not ran_out.differs
    assert recorded_result(plan, _records(same[:6])) is None  # no look decided, the last not reached
    gap = [r for r in _records(slower) if r.telemetry["trial"]["round"] != 2]
    assert recorded_result(plan, gap) is None


def test_a_bisection_is_known_again_by_its_command_variants_and_options_not_its_budget_or_seed() -> None:
    plan = TrialPlan(("python", "bench.py"), (Variant("A", {"X": "0"}), Variant("B", {"X": "1", "Y": "1"})),
                     max_pairs=7, seed=1, budget_s=10)
    ident = bisection_id(plan)
    assert bisection_id(replace(plan, seed=2, budget_s=None)) == ident
    for other in (replace(plan, command=("python", "other.py")), replace(plan, max_pairs=8),
                  replace(plan, alpha=0.01), replace(plan, metric="work"),
                  replace(plan, variants=(plan.variants[0], Variant("B", {"X": "1", "Y": "2"})))):
        assert bisection_id(other) != ident


def test_resume_needs_the_records(cli: Callable[..., CliResult]) -> None:
    refused = cli("bisect", "--resume", "--no-record", "--b", "X=1", "--", "true")
    assert refused.returncode == 2 and "--resume reads the run records" in refused.stderr


def test_bisect_refuses_what_is_not_an_environment_change(cli: Callable[..., CliResult]) -> None:
    assert "environment changes" in cli("bisect", "--b-python", "/x/python", "--", "python", "b.py").stderr


# Each package's run() loops its WORK iterations and returns them; the command runs all twelve and prints the
# work done (counted, not timed, as above).
PACKAGE = "WORK = {work}\n\n\ndef run():\n    x = 0\n    for i in range(WORK):\n        x += i\n    return WORK\n"
RUN_ALL = ("import " + ", ".join(f"pkg{i}" for i in range(1, 13)) + "; n = "
           + " + ".join(f"pkg{i}.run()" for i in range(1, 13)) + "; print(f'loop: {n / 10000:.3f} ms')")


def _install(site: Path, name: str, version: str, work: int) -> None:
    """Install a real distribution the way pip lays one out: the module, METADATA and a RECORD of the files."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    files = {f"{name}.py": PACKAGE.format(work=work), f"{info.name}/METADATA":
             f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", f"{info.name}/INSTALLER": "pip\n"}
    record = []
    for relative, text in files.items():
        (site / relative).write_text(text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{relative},sha256={digest},{len(text.encode())}")
    (info / "RECORD").write_text("\n".join([*record, f"{info.name}/RECORD,,"]) + "\n")


@pytest.mark.slow
def test_bisect_names_the_one_slow_package_of_twelve_version_changes(cli: Callable[..., CliResult],
                                                                     tmp_path: Path) -> None:
    pythons = []
    for side in ("old", "new"):
        venv = tmp_path / side
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next(venv.glob("lib/python*/site-packages"))
        for i in range(1, 13):
            slow = side == "new" and i == 7
            _install(site, f"pkg{i}", "1.1" if side == "new" else "1.0", 200000 if slow else 10000)
        pythons.append(str(venv / "bin" / "python"))
    before = set(Path(tempfile.gettempdir()).glob("driftcheck-bisect-*"))
    result = cli("bisect", "--seed", "3", "--max-pairs", "7", "--a-python", pythons[0], "--b-python", pythons[1],
                 "--no-record", "--", "python", "-c", RUN_ALL)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("B vs A with all 12 changes: +") and lines[0].endswith("B is slower")
    assert lines[1].startswith("pkg7 1.0 → 1.1 alone reproduces")
    assert "the other 11 change(s) together: no difference resolved (+0.0 %" in lines[1]
    assert set(Path(tempfile.gettempdir()).glob("driftcheck-bisect-*")) == before  # the overlays are gone


def test_package_changes_and_an_overlay_copy_exactly_b_s_files(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "fast", "2.0", 10)
    b = {"fast": Distribution("fast", "2.0", str(site), ("fast.py", "fast-2.0.dist-info/METADATA")),
         "new": Distribution("new", "1.0", str(site), ())}
    a = {"fast": Distribution("fast", "1.0", "/nowhere", ()), "gone": Distribution("gone", "3.0", "/nowhere", ())}
    changes = package_changes(a, b)
    assert [c.describe() for c in changes] == ["fast 1.0 → 2.0", "gone 3.0 → (none)", "new (none) → 1.0"]
    overlays = Overlays(tmp_path / "overlays", b)
    path = overlays.path([changes[0]])
    assert (path / "fast.py").read_bytes() == (site / "fast.py").read_bytes()
    assert overlays.path([changes[0]]) == path  # made once, by what it holds
    with pytest.raises(OptionError, match="removed in B"):
        overlays.path([changes[1]])
