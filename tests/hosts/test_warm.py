"""A target interpreter's facts run started before its request (hosts/warm.py, facts_batch --ahead/--stdin) answers
as a run started with the request would, and is never handed to a request it does not fit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ScriptCall, facts_script, warm
from driftcheck.hosts.local import _target_environ
from tests.hosts.test_shared import CALLS, _counting_python, _started

AHEAD = [ScriptCall("python_facts"), ScriptCall("dist_facts", ("packages",))]
# A script whose answers say how many times it was called in its process, and with what.
COUNTER = "import sys\nCALLS = []\ndef main(argv):\n    CALLS.append(argv)\n" \
          "    sys.stdout.write(str(len(CALLS)) + ' ' + ' '.join(argv))\n    return 0\n"


def _batch(argv: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", facts_script("facts_batch"), *argv], input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)


def _stdouts(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [part["stdout"] for part in json.loads(done.stdout)["parts"]]


def test_an_answer_ahead_is_given_once_for_the_same_script_and_arguments() -> None:
    request = ["--script", "counter", COUNTER, "--part", "counter", "1", "a", "--part", "counter", "1", "b",
               "--part", "counter", "1", "a"]
    done = _batch(["--script", "counter", COUNTER, "--ahead", "counter", "1", "a", "--stdin"], json.dumps(request))
    # "a" was answered ahead (first call); "b" runs when asked; the second "a" runs again, the answer ahead spent.
    assert _stdouts(done) == ["1 a", "2 b", "3 a"]


def test_a_script_whose_source_changed_is_loaded_again_and_its_answers_ahead_dropped() -> None:
    changed = COUNTER.replace("' '.join(argv)", "'changed ' + ' '.join(argv)")
    request = ["--script", "counter", changed, "--part", "counter", "1", "a"]
    done = _batch(["--script", "counter", COUNTER, "--ahead", "counter", "1", "a", "--stdin"], json.dumps(request))
    assert _stdouts(done) == ["1 changed a"]  # a fresh load of the new source, not the answer of the old one


def test_an_empty_stdin_asks_nothing_and_ends_without_a_word() -> None:
    done = _batch(["--script", "counter", COUNTER, "--ahead", "counter", "1", "a", "--stdin"], "")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_batch_started_ahead_answers_as_a_run_started_with_the_request(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    host = LocalHost(python)
    host.warm_up(AHEAD)
    time.sleep(0.3)  # the answers ahead are ready: they are what is handed out, not computed on the request
    warmed = host.python_many(CALLS)
    (launched,) = _started(starts)
    assert launched[0] == "--script" and launched[-1] == "--stdin" and launched.count("--ahead") == 2
    fresh = LocalHost(python).python_many(CALLS)
    assert len(_started(starts)) == 2  # the warm run answered all four calls; the fresh one is a second start
    assert [answer.error for answer in warmed] == [None] * len(CALLS)
    assert [answer.value for answer in warmed] == [answer.value for answer in fresh]


def test_a_run_started_for_another_environment_is_let_go_and_a_fresh_run_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python, starts = _counting_python(tmp_path)
    host = LocalHost(python)
    host.warm_up(AHEAD)
    started = warm._started[python].process
    monkeypatch.setenv("DRIFTCHECK_TEST_CHANGED", "1")  # the environment a fresh run would get has changed
    answers = host.python_many(CALLS)
    assert [answer.error for answer in answers] == [None] * len(CALLS)
    assert started.poll() is not None and python not in warm._started  # let go (killed: it may not have started)
    assert [words for words in _started(starts) if "--stdin" not in words and "--part" in words]  # a fresh batch


def test_a_run_started_too_long_ago_is_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python, _ = _counting_python(tmp_path)
    LocalHost(python).warm_up(AHEAD)
    monkeypatch.setattr(warm, "MAX_AGE_S", 0.0)
    time.sleep(0.01)
    assert warm.take(python, _target_environ(), "/") is None


def test_warming_up_again_lets_the_earlier_run_go(tmp_path: Path) -> None:
    # A run's reading after its command must never get the answers ahead of the reading before it.
    python, _ = _counting_python(tmp_path)
    host = LocalHost(python)
    host.warm_up(AHEAD)
    earlier = warm._started[python].process
    host.warm_up(AHEAD)
    assert earlier.poll() is not None and warm._started[python].process is not earlier
    warm.let_go_all()
    assert python not in warm._started


def test_an_interpreter_that_cannot_start_is_not_warmed_and_its_batch_says_why(tmp_path: Path) -> None:
    host = LocalHost(str(tmp_path / "no-python"))
    host.warm_up(AHEAD)
    assert str(tmp_path / "no-python") not in warm._started
    assert all(isinstance(answer.error, FileNotFoundError) for answer in host.python_many(CALLS))


# A script saying whether its interpreter started without site (-S): held and released, or started afresh.
NO_SITE = "import sys\ndef main(argv):\n    sys.stdout.write(str(sys.flags.no_site))\n    return 0\n"


def _held_flags(python: str, before_release: Callable[[], None] = lambda: None) -> str:
    """Hold `python`, run `before_release`, release it and ask NO_SITE: "1" when the held start answered."""
    tail = [facts_script("facts_batch"), "--script", "flags", NO_SITE, "--stdin"]
    warm.hold(python, facts_script("facts_held"), tail, _target_environ(), "/")
    time.sleep(0.3)  # held: up to its first line of stdin
    before_release()
    warm.start(python, tail, _target_environ(), "/")
    process = warm.take(python, _target_environ(), "/")
    assert process is not None
    answer = warm.ask(process, ["--part", "flags", "0"], 60)
    assert answer.returncode == 0, answer.stderr
    return str(json.loads(answer.stdout)["parts"][0]["stdout"])


def test_a_held_start_released_answers_as_a_start_without_it(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    host = LocalHost(python)
    host.warm_up(AHEAD, hold=True)
    held = warm._held[python].process
    time.sleep(0.3)
    assert held.poll() is None and "-S" in held.args  # up, and waiting
    assert os.getsid(held.pid) != os.getsid(0)  # out of reach of a Ctrl-C meant for the command it waits beside
    host.warm_up(AHEAD)
    assert warm._started[python].process is held  # released, not a second start
    released = host.python_many(CALLS)
    fresh = LocalHost(python).python_many(CALLS)
    assert [answer.error for answer in released] == [None] * len(CALLS)
    # The same sys.path (python_facts) and distributions: site ran on release as it runs at a start.
    assert [answer.value for answer in released] == [answer.value for answer in fresh]
    assert _held_flags(sys.executable) == "1"


def test_a_held_start_for_another_launch_is_let_go(tmp_path: Path) -> None:
    python, _ = _counting_python(tmp_path)
    host = LocalHost(python)
    host.warm_up(AHEAD, hold=True)
    held = warm._held[python].process
    host.warm_up(AHEAD[:1])  # another set of calls ahead: not the launch it was held for
    assert held.wait(10) is not None and warm._started[python].process is not held
    assert [answer.error for answer in host.python_many(CALLS)] == [None] * len(CALLS)


def test_a_held_interpreter_whose_files_changed_starts_afresh(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    python = str(tmp_path / "venv" / "bin" / "python")
    config = tmp_path / "venv" / "pyvenv.cfg"
    assert _held_flags(python) == "1"
    # A venv made again while the command ran: the held core read the old pyvenv.cfg, so a fresh start answers.
    assert _held_flags(python, lambda: config.write_text(config.read_text() + "\n")) == "0"


def test_a_held_start_never_released_ends_without_a_word() -> None:
    tail = [facts_script("facts_batch"), "--script", "flags", NO_SITE, "--stdin"]
    warm.hold(sys.executable, facts_script("facts_held"), tail, _target_environ(), "/")
    held = warm._held[sys.executable].process
    stdout, stderr = held.communicate(b"", timeout=30)  # driftcheck went on without it: its stdin ends
    assert (held.returncode, stdout, stderr) == (0, b"", b"")
    warm.hold(sys.executable, facts_script("facts_held"), tail, _target_environ(), "/")
    again = warm._held[sys.executable].process
    warm.let_go_all()
    assert again.poll() is not None and not warm._held
