"""`driftcheck try`: real variants of small real commands, real venvs, a real HTTP server per run, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from driftcheck.runs.store import RunStore
from driftcheck.runs.trial import Variant, parse_env_changes
from tests.conftest import REPO_ROOT, CliResult
from tests.servers import free_port

PYTHON = sys.executable

# CPU time, not wall time, of a loop of WORK iterations: on a shared 2-core machine the figure then moves with
# the work done, not with the neighbours' load.
LOOP = """
import os, time
n = int(os.environ.get("WORK", "150000"))
start = time.process_time()
x = 0
for i in range(n):
    x += i
print(f"loop: {(time.process_time() - start) * 1000:.3f} ms")
"""

# A server on argv[1]'s port answering every GET with argv[2], else its SPEED variable (what the variant set).
SERVER = """
import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (sys.argv[2] if len(sys.argv) > 2 else os.environ.get("SPEED", "1")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""

FETCH = """
import sys, urllib.request
print(f"latency: {urllib.request.urlopen(sys.argv[1]).read().decode()} ms")
"""


def _script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)



def _processes_with(marker: str) -> list[psutil.Process]:
    """Processes running a script whose path holds `marker` (driftcheck's own command line names it too)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(marker in word for word in (process.info["cmdline"] or ())[1:2]):
            found.append(process)
    return found


@pytest.mark.slow
def test_twice_the_work_is_called_slower_in_few_pairs(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    loop = _script(tmp_path, "loop.py", LOOP)
    result = cli("try", "--seed", "1", "--max-pairs", "12", "--a", "WORK=150000", "--b", "WORK=300000",
                 "--label", "work", "--", PYTHON, loop)
    assert result.returncode == 1, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("B vs A: +") and first.endswith(": B is slower"), first
    assert "stopped: decided" in result.stdout
    assert "look at" in result.stderr  # progress goes to stderr
    records = RunStore().entries()
    assert {r.label for r in records} == {"try:work:A", "try:work:B"}
    assert all(r.snapshot_id is None and r.metric("loop") for r in records)  # cheap: no snapshot per run
    rounds = len(records) // 2
    assert rounds <= 12 and len([line for line in result.stdout.splitlines() if " A " in line]) >= rounds


@pytest.mark.slow
def test_identical_variants_resolve_no_difference_and_interleave(cli: Callable[..., CliResult],
                                                                 tmp_path: Path) -> None:
    fixed = _script(tmp_path, "fixed.py", 'print("decode: 5.000 ms")\n')
    result = cli("try", "--seed", "7", "--max-pairs", "8", "--format", "json", "--no-record", "--", PYTHON, fixed)
    assert result.returncode == 0, result.stderr
    trial = json.loads(result.stdout)
    comparison = trial["comparisons"]["B"]
    assert comparison["verdict"] == "no difference resolved" and comparison["pairs"] == 8
    assert comparison["p_value"] == 1.0 and comparison["detectable_pct"] == 0.0
    assert trial["seed"] == 7 and trial["metric"] == "decode" and trial["unit"] == "ms"
    firsts = [next(r["variant"] for r in trial["runs"] if r["round"] == n) for n in range(1, 9)]
    assert set(firsts) == {"A", "B"}  # the order within a round is drawn, not always A first
    assert RunStore().entries() == []


@pytest.mark.slow
def test_interpreter_variants_run_in_two_real_venvs(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    pythons = []
    for name, work in (("old", 150000), ("new", 300000)):
        venv = tmp_path / name
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next(venv.glob("lib/python*/site-packages"))
        (site / "workmod.py").write_text(LOOP.replace('os.environ.get("WORK", "150000")', repr(str(work))))
        pythons.append(str(venv / "bin" / "python"))
    result = cli("try", "--seed", "2", "--max-pairs", "12", "--a-python", pythons[0], "--b-python", pythons[1],
                 "--metric", "work[ms]=loop: ([0-9.]+) ms", "--", "python", "-c", "import workmod")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].endswith("B is slower")
    assert f"B: python {pythons[1]}" in result.stdout and "figure: work ms" in result.stdout
    assert {r.command[0] for r in RunStore().entries()} == set(pythons)


@pytest.mark.slow
def test_a_budget_stops_the_trial_and_wall_time_is_a_figure(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    fixed = _script(tmp_path, "fixed.py", 'print("decode: 5.000 ms")\n')
    # At alpha 0.001 no look before about 14 rounds could decide: the budget of 0.5 s ends the trial first.
    result = cli("try", "--wall", "--budget", "0.5", "--alpha", "0.001", "--max-pairs", "50", "--format", "json",
                 "--a", "WORK=1", "--b=-WORK", "--", PYTHON, fixed)
    trial = json.loads(result.stdout)
    assert trial["stopped"] == "budget" and trial["metric"] == "wall_time" and trial["unit"] == "s"
    assert 1 <= trial["comparisons"]["B"]["pairs"] < 50
    assert trial["variants"][1]["unset_env"] == ["WORK"]
    assert all(run.metric("wall_time") for run in RunStore().entries())


@pytest.mark.slow
def test_a_run_past_its_timeout_is_ended_with_what_it_started(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    marker = f"stuck-{uuid.uuid4().hex}"
    child = _script(tmp_path, f"{marker}-child.py", "import time\ntime.sleep(60)\n")
    parent = _script(tmp_path, f"{marker}.py", f"import subprocess, sys, time\n"
                                                f"subprocess.Popen([sys.executable, {child!r}])\ntime.sleep(60)\n")
    began = time.monotonic()
    result = cli("try", "--run-timeout", "1", "--", PYTHON, parent)
    assert result.returncode == 2 and "still running after 1 s (--run-timeout)" in result.stderr
    assert time.monotonic() - began < 20
    assert _processes_with(marker) == []


def test_an_interpreter_variant_needs_a_python_word_to_replace(cli: Callable[..., CliResult]) -> None:
    result = cli("try", "--b-python", "/usr/bin/python3", "--", "./bench")
    assert result.returncode == 2
    assert "--b-python /usr/bin/python3: the command must start with the word python" in result.stderr


def test_bad_variant_and_option_combinations_are_refused(cli: Callable[..., CliResult]) -> None:
    assert "give NAME=VALUE" in cli("try", "--b", "not a change", "--", "true").stderr
    assert "--server-cmd and --ready go together" in cli("try", "--server-cmd", "x", "--", "true").stderr
    assert "give the command to run" in cli("try", "--b", "X=1").stderr


@pytest.mark.slow
def test_a_server_per_run_gets_the_variants_environment_and_is_stopped(cli: Callable[..., CliResult],
                                                                       tmp_path: Path) -> None:
    port = free_port()
    marker = f"server-{uuid.uuid4().hex}"
    server = _script(tmp_path, f"{marker}.py", SERVER)
    fetch = _script(tmp_path, "fetch.py", FETCH)
    url = f"http://127.0.0.1:{port}/"
    result = cli("try", "--seed", "4", "--max-pairs", "2", "--format", "json", "--a", "SPEED=10", "--b", "SPEED=20",
                 "--c-server-cmd", f"{PYTHON} {server} {port} 30", "--server-cmd", f"{PYTHON} {server} {port}",
                 "--ready", url, "--ready-timeout", "30", "--", PYTHON, fetch, url)
    assert result.returncode == 0, result.stderr  # 2 pairs can never decide: nothing could have been seen
    trial = json.loads(result.stdout)
    assert {(r["variant"], r["value"]) for r in trial["runs"]} == {("A", 10.0), ("B", 20.0), ("C", 30.0)}
    assert len(trial["runs"]) == 6 and set(trial["comparisons"]) == {"B", "C"}
    assert trial["comparisons"]["B"]["detectable_pct"] is None
    assert _processes_with(marker) == []


@pytest.mark.slow
def test_a_server_that_never_answers_is_given_up_and_stopped(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    marker = f"sleeper-{uuid.uuid4().hex}"
    sleeper = _script(tmp_path, f"{marker}.py", "import time\ntime.sleep(60)\n")
    result = cli("try", "--server-cmd", f"{PYTHON} {sleeper}", "--ready", f"http://127.0.0.1:{free_port()}/",
                 "--ready-timeout", "1", "--", PYTHON, "-c", "print('1 ms')")
    assert result.returncode == 2
    assert "did not answer within 1 s" in result.stderr
    assert _processes_with(marker) == []


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_during_a_trial_leaves_no_server_and_no_command(tmp_path: Path, signum: int) -> None:
    port = free_port()
    marker = f"ctrlc-{uuid.uuid4().hex}"
    server = _script(tmp_path, f"{marker}-server.py", SERVER)
    sleeper = _script(tmp_path, f"{marker}-cmd.py", "import time\ntime.sleep(60)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DRIFTCHECK_HOME": str(tmp_path / "home")}
    trial = subprocess.Popen([PYTHON, "-m", "driftcheck", "try", "--server-cmd", f"{PYTHON} {server} {port}",
                              "--ready", f"http://127.0.0.1:{port}/", "--", PYTHON, sleeper],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not _processes_with(marker + "-cmd"):
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.1)
        trial.send_signal(signum)  # to driftcheck alone: the server and the command run in groups of their own
        _, err = trial.communicate(timeout=30)
    finally:
        if trial.poll() is None:
            trial.kill()
    assert trial.returncode == 128 + signum, err
    assert _processes_with(marker) == []


def test_environment_changes_set_and_unset_and_describe_themselves() -> None:
    set_env, unset = parse_env_changes("b", ["NCCL_ALGO=Ring OMP_NUM_THREADS=1", "-NCCL_PROTO"])
    variant = Variant("B", set_env, unset)
    assert variant.environment({"NCCL_PROTO": "LL", "HOME": "/h"}) == {
        "HOME": "/h", "NCCL_ALGO": "Ring", "OMP_NUM_THREADS": "1"}
    assert variant.describe() == "NCCL_ALGO=Ring, OMP_NUM_THREADS=1, -NCCL_PROTO"
    assert Variant("A", python="/v/bin/python").argv(["python3", "b.py"]) == ["/v/bin/python", "b.py"]
    assert Variant("A", python="/v/bin/python").argv(["/usr/bin/python3.12", "b.py"]) == ["/v/bin/python", "b.py"]
    assert Variant("A", command=("./other",)).argv(["./bench"]) == ["./other"]


def test_output_read_in_chunks_is_scanned_as_whole_lines() -> None:
    # What a command writes in pieces (a line cut by a read, CR LF cut between reads, a character's UTF-8 bytes
    # cut, a line far too long to read, a figure on a last line without its end) is scanned as the lines it
    # prints, and its last lines are kept.
    import threading

    from driftcheck.runs.metrics import user_pattern
    from driftcheck.runs.output import TAIL_LINES, OutputReader

    pieces = [b"dec", b"ode: 12.5 m", b"s\r", b"\n\xc3", b"\xa9t\xc3\xa9: 3 tok/s\n",
              *[f"step {i}\n".encode() for i in range(30)], *[b"x" * 50_000] * 4, b"\nfinal: 7.25 Miter"]
    read_end, write_end = os.pipe()
    reader = OutputReader((user_pattern("final=final: ([0-9.]+) Miter"), user_pattern("summer=été: ([0-9.]+) tok/s")))
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        thread = threading.Thread(target=reader.read, args=(stream,))
        thread.start()
        for piece in pieces:
            os.write(write_end, piece)
            time.sleep(0.01)  # each piece its own read
        os.close(write_end)
        thread.join(10)
    metrics, tail = reader.metrics(), reader.tail()
    found = {m.name: m.value for m in metrics}
    assert found == {"decode": 12.5, "summer": 3.0, "final": 7.25}, found
    assert len(tail) == TAIL_LINES and tail[-1] == "final: 7.25 Miter" and tail[-3] == "step 29", tail
    assert tail[-2] == "x" * (1 << 16)  # the long line's last 64 Ki characters, not 200,000
