"""`explain --confirm -- CMD`: each top cause undone here for real and measured in an interleaved trial."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from driftcheck.analysis.confirm import ConfirmSetup, Undo, confirm_plan, undo_of, verdict_of, with_flag
from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.runs.system_knob import guard, read, set_for_a_while, wrapper, write
from driftcheck.runs.trial import TrialPlan, TrialResult, TrialRun, Variant
from driftcheck.snapshot.model import Snapshot, read_snapshot_file
from driftcheck.stats.comparison import compare, log_ratios, plan_looks
from tests.conftest import REPO_ROOT, CliResult
from tests.servers import free_port
from tests.wheels import build_wheel, install, venv_with

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"


def _pair(case: str) -> tuple[str, str]:
    return str(PAIRS / case / "a.json"), str(PAIRS / case / "b.json")


def _explained(case: str) -> tuple[Snapshot, Snapshot, list[object]]:
    a, b = (read_snapshot_file(Path(p)) for p in _pair(case))
    result = explain(diff_snapshots(a, b))
    return a, b, [undo_of(result, e) for e in result.explanations]


def test_with_flag_puts_a_s_value_in_b_s_server_command() -> None:
    b = ("python", "-m", "sglang.launch_server", "--attention-backend", "fa3", "--port=1", "--disable-cuda-graph")
    assert with_flag(b, "attention_backend", "triton")[-2:] == ("--attention-backend", "triton")
    assert "fa3" not in with_flag(b, "attention_backend", "triton")
    assert with_flag(b, "disable_cuda_graph", False) == b[:-1]
    assert with_flag(b, "port", None) == ("python", "-m", "sglang.launch_server", "--attention-backend", "fa3",
                                          "--disable-cuda-graph")
    assert with_flag(b[:3], "disable_cuda_graph", True) == (*b[:3], "--disable-cuda-graph")


def test_each_kind_of_cause_is_undone_its_own_way_or_said_not_confirmable() -> None:
    _, _, undos = _explained("env-thread-count")
    assert [(u.kind, u.name, u.a_value, u.b_value) for u in undos] == [("env", "OMP_NUM_THREADS", None, "1")]
    _, _, undos = _explained("server-attention-backend")
    assert undos[0].kind == "server" and undos[0].name.endswith("attention_backend")
    _, _, undos = _explained("cpu-governor")
    assert undos[0].kind == "none" and undos[0].why_not.startswith("not confirmable here: a machine-wide setting")
    _, _, undos = _explained("gpu-persistence-off-after-reboot")
    assert all(u.why_not and u.why_not.startswith("not confirmable here: ") for u in undos)


def test_a_server_argument_needs_the_server_command(tmp_path: Path) -> None:
    a, b = (read_snapshot_file(Path(p)) for p in _pair("server-attention-backend"))
    result = explain(diff_snapshots(a, b))
    plan = confirm_plan(result, b, ConfirmSetup(TrialPlan(("python", "bench.py"), ())))
    assert plan.undos[0].why_not is not None and "--server-cmd" in plan.undos[0].why_not
    assert plan.text() == ["confirm: none of the top causes can be undone here; nothing to run"]


def _trial(b: list[float], undone: list[float], a: list[float] | None = None) -> TrialResult:
    """A trial's result from figures (lower is better), compared as run_trial compares them."""
    figures = {"B": b, "undone": undone, **({"A": a} if a else {})}
    variants = tuple(Variant(name) for name in figures)
    looks = plan_looks(len(b), 0.05, comparisons=len(figures) - 1)
    runs = [TrialRun(name, i + 1, value, 1.0, None) for name, values in figures.items()
            for i, value in enumerate(values)]
    comparisons = {name: compare(log_ratios(b, values), looks.alpha_at(len(b), True) or 0.0)
                   for name, values in figures.items() if name != "B"}
    return TrialResult(TrialPlan(("python", "x.py"), variants), 1, looks, "loop", "ms", False, runs, comparisons,
                       "max-pairs", 1.0)


PACKAGE_UNDO = Undo(1, "pkg upgraded", "package", "pkg", "1.0", "1.1")
NOISE = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0]


def test_verdicts_say_how_much_of_the_shift_and_the_resolution() -> None:
    b = [20.0 * f for f in NOISE]
    a = [10.0 * f for f in reversed(NOISE)]
    confirmed = verdict_of(PACKAGE_UNDO, _trial(b, [11.0 * f for f in NOISE[1:] + NOISE[:1]], a))
    assert confirmed.verdict == "confirmed" and 80 < (confirmed.recovered_pct or 0) < 95
    assert confirmed.text.startswith("confirmed: with pkg 1.0 (A's) instead of 1.1, B recovers ")
    assert "% of the shift (+" in confirmed.text and "8 pairs, p=" in confirmed.text
    refuted = verdict_of(PACKAGE_UNDO, _trial(b, [20.0 * f for f in NOISE[2:] + NOISE[:2]], a))
    assert refuted.verdict == "refuted" and "would have been seen; the shift is +" in refuted.text
    # A spread as wide as the shift: nothing decided, and nothing ruled out either.
    wild = [1.0, 3.0, 0.4, 2.5, 0.5, 1.8, 0.3, 2.2]
    vague = verdict_of(PACKAGE_UNDO, _trial(b, [20.0 * f for f in wild], [16.0 * f for f in NOISE]))
    assert vague.verdict == "inconclusive", vague.text


def test_without_a_the_figure_moving_back_is_confirmation_and_the_other_way_refutation() -> None:
    b = [20.0 * f for f in NOISE]
    undo = Undo(1, "env", "env", "OMP_NUM_THREADS", None, "1")
    back = verdict_of(undo, _trial(b, [10.0 * f for f in NOISE]))
    assert back.verdict == "confirmed" and "A's whole shift was not measured here" in back.text
    away = verdict_of(undo, _trial(b, [30.0 * f for f in NOISE]))
    assert away.verdict == "refuted" and "moves further away" in away.text
    assert verdict_of(undo, _trial(b, list(b))).verdict == "refuted"  # ±0 % would have been seen
    assert verdict_of(undo, _trial(b[:3], b[:3])).verdict == "inconclusive"  # 3 pairs cannot decide anything


def test_confirm_without_a_command_is_a_one_line_usage_error(cli: Callable[..., CliResult]) -> None:
    done = cli("explain", *_pair("env-thread-count"), "--confirm")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "needs your benchmark command after --" in done.stderr


def test_options_after_the_snapshots_are_still_options(cli: Callable[..., CliResult]) -> None:
    done = cli("explain", *_pair("env-thread-count"), "--format", "json")
    assert done.returncode == 1 and json.loads(done.stdout)["explanations"][0]["rank"] == 1
    assert "only run with --confirm" in cli("explain", *_pair("env-thread-count"), "--", "python", "x.py").stderr


# The figure is work counted, not timed (as in tests/runs/test_bisect.py): these tests are of the confirmation.
OMP_LOOP = """
import os
n = 100000 * (2 if os.environ.get("OMP_NUM_THREADS") == "1" else 1)
print(f"loop: {n / 10000:.3f} ms")
"""


@pytest.mark.slow
def test_an_environment_variable_is_confirmed_by_its_trial(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    loop = tmp_path / "loop.py"
    loop.write_text(OMP_LOOP)
    done = cli("explain", *_pair("env-thread-count"), "--confirm", "--seed", "1", "--max-pairs", "8", "--format",
               "json", "--no-record", "--", "python", str(loop))
    confirmation = json.loads(done.stdout)["explanations"][0]["confirm"]
    assert confirmation["verdict"] == "confirmed", confirmation
    assert confirmation["text"].startswith("confirmed: with OMP_NUM_THREADS unset, B's figure moves back")
    assert confirmation["trial"]["comparisons"]["undone"]["effect_pct"] == -50.0
    plan = done.stderr.splitlines()[:3]
    assert plan[0].startswith("confirm: 1 cause(s) to undo, each in an interleaved trial of `python ")
    assert plan[1] == "  #1: OMP_NUM_THREADS unset" and "s for 16 runs" in plan[2]


@pytest.mark.slow
def test_a_command_that_fails_with_the_cause_undone_is_said_per_cause(cli: Callable[..., CliResult]) -> None:
    needs_the_variable = "import os, sys; os.environ.get('OMP_NUM_THREADS') or sys.exit(3); print('loop: 1.0 ms')"
    done = cli("explain", *_pair("env-thread-count"), "--confirm", "--max-pairs", "4", "--no-record", "--format",
               "json", "--", "python", "-c", needs_the_variable)
    assert done.returncode == 1, done.stderr
    confirmation = json.loads(done.stdout)["explanations"][0]["confirm"]
    assert confirmation["verdict"] == "failed"
    assert confirmation["text"].startswith("could not measure: variant undone (python -c ") and "exited 3" in \
        confirmation["text"]


# Twelve packages; each one's run() does its WORK and returns it. pkg07 1.1 does 20 times the work of 1.0.
PACKAGE = "WORK = {work}\n\n\ndef run():\n    x = 0\n    for i in range(WORK):\n        x += i\n    return WORK\n"
NAMES = [f"pkg{i:02d}" for i in range(1, 13)]
RUN_ALL = ("import " + ", ".join(NAMES) + "; n = " + " + ".join(f"{n}.run()" for n in NAMES)
           + "; print(f'loop: {n / 10000:.3f} ms')")


def _twelve_wheels(directory: Path, version: str, slow: str | None) -> list[Path]:
    directory.mkdir()
    return [build_wheel(directory, name, version, PACKAGE.format(work=200000 if name == slow else 10000))
            for name in NAMES]


@dataclass(frozen=True)
class Upgrade:
    """A venv upgraded in place (all twelve 1.0 -> 1.1, pkg07 slow), snapshotted before and after through its
    interpreter; a copy of it as it was before (A's environment, still runnable); A's wheels."""

    a_python: Path
    b_python: Path
    a_snapshot: str
    b_snapshot: str
    index: Path


def _snapshot(python: Path, out: Path, home: Path) -> str:
    """A real snapshot of `python`'s packages (a process: this fixture outlives one test's home)."""
    env = {**os.environ, "DRIFTCHECK_HOME": str(home),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-m", "driftcheck", "snapshot", "--python", str(python), "--probe", "packages",
                    "-o", str(out), "-q"], env=env, check=True, timeout=120)
    return str(out)


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> Upgrade:
    """The twelve real wheels installed by pip into a venv, which is then upgraded in place, as a user's is."""
    root = tmp_path_factory.mktemp("confirm-venvs")
    python = venv_with(root / "env", _twelve_wheels(root / "wheels-1.0", "1.0", None))
    before = _snapshot(python, root / "a.json", root / "home")
    shutil.copytree(root / "env", root / "env-before", symlinks=True)
    install(python, _twelve_wheels(root / "wheels-1.1", "1.1", "pkg07"))
    after = _snapshot(python, root / "b.json", root / "home")
    return Upgrade(root / "env-before" / "bin" / "python", python, before, after, root / "wheels-1.0")


@pytest.mark.slow
def test_bisect_names_the_slow_package_and_confirm_convicts_it_and_clears_a_harmless_bump(
        cli: Callable[..., CliResult], upgrade: Upgrade, tmp_path: Path) -> None:
    """Done-when of issue 20: two real venvs, 12 package differences, one of them slow."""
    a_python, b_python = upgrade.a_python, upgrade.b_python
    found = cli("bisect", "--seed", "3", "--max-pairs", "7", "--a-python", str(a_python), "--b-python",
                str(b_python), "--no-record", "--format", "json", "--", "python", "-c", RUN_ALL)
    assert found.returncode == 1, found.stdout + found.stderr
    assert json.loads(found.stdout)["culprits"] == ["pkg07 1.0 → 1.1"]

    a, b = upgrade.a_snapshot, upgrade.b_snapshot
    done = cli("explain", a, b, "--confirm", "--top", "12", "--a-python", str(a_python), "--b-python", str(b_python),
               "--seed", "2", "--max-pairs", "7", "--no-record", "--format", "json", "--", "python", "-c", RUN_ALL)
    assert done.returncode == 1, done.stderr
    rows = {row["title"].split()[0]: row["confirm"] for row in json.loads(done.stdout)["explanations"]}
    assert set(rows) == set(NAMES)
    slow = rows["pkg07"]
    assert slow["verdict"] == "confirmed", slow
    assert slow["text"].startswith("confirmed: with pkg07 1.0 (A's) instead of 1.1, B recovers 100 % of the shift")
    assert slow["recovered_pct"] == 100.0
    harmless = rows["pkg06"]
    assert harmless["verdict"] == "refuted", harmless
    assert "no effect (+0.0 % in 7 pairs: ±0.0 % would have been seen; the shift is +" in harmless["text"]
    assert [r["verdict"] for name, r in rows.items() if name != "pkg07"] == ["refuted"] * 11
    assert "builds a scratch environment" in done.stderr and f"copied from {a_python}" in done.stderr


@pytest.mark.slow
def test_a_s_version_comes_from_the_index_when_no_interpreter_of_a_has_it(
        cli: Callable[..., CliResult], upgrade: Upgrade, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, driftcheck_home: Path) -> None:
    b_python, index, a, b = upgrade.b_python, upgrade.index, upgrade.a_snapshot, upgrade.b_snapshot
    # pip's own settings point it at a local directory of wheels: no network in a test.
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    args = ("--confirm", "--top", "12", "--b-python", str(b_python), "--seed", "4", "--max-pairs", "7",
            "--no-record", "--format", "json", "--", "python", "-c", RUN_ALL)
    rows = {row["title"].split()[0]: row["confirm"] for row in
            json.loads(cli("explain", a, b, *args).stdout)["explanations"]}
    assert rows["pkg07"]["verdict"] == "confirmed", rows["pkg07"]
    assert "A's whole shift was not measured here" in rows["pkg07"]["text"]
    assert rows["pkg03"]["verdict"] == "refuted", rows["pkg03"]
    cached = sorted(p.name for p in (driftcheck_home / "cache" / "scratch-env").iterdir())
    assert len(cached) == 12 and all(name.startswith("pkg") for name in cached)  # no partial left
    # Without a wheel to be had, said so, per cause.
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    for entry in (driftcheck_home / "cache" / "scratch-env").iterdir():
        subprocess.run(["rm", "-rf", str(entry)], check=True)
    # The first cause is enough to see it (pip is asked once, not once for each of twelve).
    report = json.loads(cli("explain", a, b, *(("--confirm", "--top", "1") + args[3:])).stdout)
    verdict = report["explanations"][0]["confirm"]
    assert verdict["verdict"] == "not confirmable", verdict
    assert verdict["text"].startswith("not confirmable here: pip install pkg")
    assert "No matching distribution" in verdict["text"] or "Could not find" in verdict["text"]
    assert list((driftcheck_home / "cache" / "scratch-env").iterdir()) == []


SERVER = "import http.server, sys; http.server.test(http.server.SimpleHTTPRequestHandler, port=int(sys.argv[1]))"



def _ours(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if marker in " ".join(process.info["cmdline"] or ()):
            found.append(process)
    return found


@pytest.mark.slow
def test_ctrl_c_during_a_confirm_trial_leaves_no_server_and_no_scratch_environment(
        cli: Callable[..., CliResult], upgrade: Upgrade, tmp_path: Path) -> None:
    a_python, b_python, a, b = upgrade.a_python, upgrade.b_python, upgrade.a_snapshot, upgrade.b_snapshot
    port = free_port()
    marker = f"confirm-sigint-{port}"
    slow_cmd = tmp_path / "bench.py"
    slow_cmd.write_text(f"import time, sys  # {marker}\ntime.sleep(0.5)\nexec(sys.argv[1])\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [sys.executable, "-m", "driftcheck", "explain", a, b, "--confirm", "--top", "12", "--a-python", str(a_python),
         "--b-python", str(b_python), "--max-pairs", "20", "--no-record", "--server-cmd",
         f"python -c '{SERVER}' {port} {marker}", "--ready", f"http://127.0.0.1:{port}/", "--",
         "python", str(slow_cmd), RUN_ALL], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        for line in process.stderr:  # wait until a trial is under way: its scratch overlay made, a server up
            if "driftcheck: round 2 " in line:
                break
        assert any(scratch.glob("driftcheck-confirm-*")), "the scratch environment was never made"
        assert _ours(marker), "no server or run of the command was going"
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 130
    deadline = time.monotonic() + 10
    while _ours(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _ours(marker) == []
    assert list(scratch.iterdir()) == []


# A server whose --attention-backend decides how much work a request costs (counted, not timed), and a
# client that prints it: B's server runs triton (the recorded pair's B), A's fa3.
BACKEND_SERVER = """
import argparse, http.server
parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int)
parser.add_argument("--attention-backend")
args = parser.parse_args()
work = 20000 if args.attention_backend == "triton" else 10000


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = str(work).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
"""
CLIENT = ("import sys, urllib.request; n = int(urllib.request.urlopen(sys.argv[1]).read()); "
          "print(f'loop: {n / 10000:.3f} ms')")


@pytest.mark.slow
def test_a_server_argument_is_confirmed_with_a_s_flag_in_b_s_server_command(cli: Callable[..., CliResult],
                                                                           tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text(BACKEND_SERVER)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    done = cli("explain", *_pair("server-attention-backend"), "--confirm", "--seed", "1", "--max-pairs", "8",
               "--server-cmd", f"python {server} --port {port} --attention-backend triton", "--ready", url,
               "--no-record", "--format", "json", "--", "python", "-c", CLIENT, url)
    confirmation = json.loads(done.stdout)["explanations"][0]["confirm"]
    assert confirmation["verdict"] == "confirmed", confirmation
    assert confirmation["undo"] == "the server with --attention-backend fa3 (A's) instead of triton"
    undone = next(v for v in confirmation["trial"]["variants"] if v["name"] == "undone")
    assert undone["server_command"][-2:] == ["--attention-backend", "fa3"]
    assert confirmation["trial"]["comparisons"]["undone"]["effect_pct"] == -50.0


# --- a root-only knob: transparent huge pages, set for real on this machine and put back ------------------

THP = "/sys/kernel/mm/transparent_hugepage/enabled"
THP_LOOP = (f"import re; mode = re.search(r'\\[(\\w+)\\]', open({THP!r}).read()).group(1); "
            "n = 200000 if mode == 'never' else 100000; print(f'loop: {n / 10000:.3f} ms')")
needs_thp = pytest.mark.skipif(not os.access(THP, os.W_OK), reason="transparent huge pages not writable here")


@needs_thp
def test_a_knob_is_put_back_after_its_block_even_on_an_exception() -> None:
    before = read(THP)
    other = "never" if before != "never" else "madvise"
    with set_for_a_while(THP, other) as seen:
        assert seen == before and read(THP) == other
    assert read(THP) == before
    with pytest.raises(RuntimeError), set_for_a_while(THP, other):
        raise RuntimeError("a run failed")
    assert read(THP) == before
    with guard([THP]):
        write(THP, other)
    assert read(THP) == before


@needs_thp
@pytest.mark.slow
def test_a_command_a_signal_ended_exits_the_wrapper_as_a_shell_says_it(tmp_path: Path) -> None:
    # A SIGTERM to the whole group may end the command before the wrapper's own handler runs (seen under load);
    # the wrapper then said -15, which exits 241. As a shell says it: 128 + 15.
    before = read(THP)
    other = "never" if before != "never" else "madvise"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(wrapper(THP, other, ["sh", "-c", "kill -TERM $$"]), env=env, timeout=60)
    assert done.returncode == 128 + signal.SIGTERM
    assert read(THP) == before


@needs_thp
@pytest.mark.slow
def test_the_wrapper_puts_the_knob_back_when_sigterm_ends_it(tmp_path: Path) -> None:
    before = read(THP)
    other = "never" if before != "never" else "madvise"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(wrapper(THP, other, ["sleep", "30"]), env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while read(THP) != other and time.monotonic() < deadline:
            time.sleep(0.05)
        assert read(THP) == other
        os.killpg(process.pid, signal.SIGTERM)  # as the trial stops a run's process tree
        assert process.wait(timeout=20) == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
    assert read(THP) == before


def test_a_knob_is_not_confirmable_without_the_flag(cli: Callable[..., CliResult]) -> None:
    done = cli("explain", *_pair("thp-enabled"), "--confirm", "--format", "json", "--", "python", "-c", THP_LOOP)
    verdict = json.loads(done.stdout)["explanations"][0]["confirm"]
    assert verdict["verdict"] == "not confirmable"
    assert verdict["text"].startswith(f"not confirmable without --allow-system-changes: {THP} is a setting")


@needs_thp
@pytest.mark.slow
def test_a_knob_is_confirmed_with_allow_system_changes_and_put_back(cli: Callable[..., CliResult]) -> None:
    before = read(THP)
    done = cli("explain", *_pair("thp-enabled"), "--confirm", "--allow-system-changes", "--seed", "1",
               "--max-pairs", "8", "--no-record", "--format", "json", "--", "python", "-c", THP_LOOP)
    assert read(THP) == before
    confirmation = json.loads(done.stdout)["explanations"][0]["confirm"]
    assert confirmation["verdict"] == "confirmed", confirmation
    assert confirmation["undo"] == f"{THP} = madvise (A's) instead of never"
    assert confirmation["trial"]["comparisons"]["undone"]["effect_pct"] == -50.0


@needs_thp
@pytest.mark.slow
def test_ctrl_c_during_a_knob_trial_leaves_the_knob_as_it_was(tmp_path: Path) -> None:
    before = read(THP)
    other = "never" if before != "never" else "madvise"
    slow = f"import time; time.sleep(0.4); {THP_LOOP}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [sys.executable, "-m", "driftcheck", "explain", *_pair("thp-enabled"), "--confirm", "--allow-system-changes",
         "--max-pairs", "20", "--no-record", "--", "python", "-c", slow], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if "driftcheck: round 2 " in line:
                break
        deadline = time.monotonic() + 20
        while read(THP) != other and time.monotonic() < deadline:  # Ctrl-C while a run has it changed
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
    finally:
        if process.poll() is None:
            process.kill()
    assert read(THP) == before


def test_the_plan_is_made_from_what_it_is_told_of_this_machine() -> None:
    """The plan reads nothing of the machine itself: which interpreter the command runs and which knobs this
    user may write are given, so it is the same here as under root or without python on PATH."""
    a, b = (read_snapshot_file(Path(p)) for p in _pair("thp-enabled"))
    result = explain(diff_snapshots(a, b))
    allowed = ConfirmSetup(TrialPlan(("python", "bench.py"), ()), allow_system_changes=True)
    knob = next(u for u in confirm_plan(result, b, allowed).undos if u.kind == "system")
    assert knob.why_not is not None and "not writable by this user" in knob.why_not
    writable = confirm_plan(result, b, allowed, writable=[knob.name])
    assert [u.kind for u in writable.runnable] == ["system"]
    a, b = (read_snapshot_file(Path(p)) for p in _pair("package-upgraded"))
    result = explain(diff_snapshots(a, b))
    setup = ConfirmSetup(TrialPlan(("python", "bench.py"), ()))
    package = confirm_plan(result, b, setup).undos[0]
    assert package.kind == "package" and package.why_not is not None and "--b-python" in package.why_not
    told = confirm_plan(result, b, setup, command_python="/venv/bin/python")
    assert told.b_python == "/venv/bin/python" and told.undos[0].why_not is None
