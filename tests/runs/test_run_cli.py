"""`driftcheck run`, `runs` and `explain run:A run:B` end to end, as a user types them."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from driftcheck.runs.telemetry import listener_pids
from tests.conftest import REPO_ROOT, CliResult
from tests.servers import SERVERS_DATA, recorded_routes

PRINT_94 = 'print("Output token throughput (tok/s): 94.1")'
PRINT_60 = 'print("Output token throughput (tok/s): 60.3")'


def _runs_json(cli_process: Callable[..., CliResult], *args: str) -> list[dict[str, object]]:
    listed = cli_process("runs", "--format", "json", *args)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


def test_done_when_two_runs_explained_by_omp_num_threads(cli_process: Callable[..., CliResult]) -> None:
    first = cli_process("run", "--", sys.executable, "-c", PRINT_94)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Output token throughput (tok/s): 94.1\n"  # the command's output, unchanged
    assert re.search(r"run 1 stored \(exit 0, .*Output token throughput 94\.1 tok/s", first.stderr)
    second = cli_process("run", "--", sys.executable, "-c", PRINT_60, env={"OMP_NUM_THREADS": "1"})
    assert second.returncode == 0, second.stderr
    runs = _runs_json(cli_process)
    assert [r["metrics"][0]["value"] for r in runs] == [94.1, 60.3]  # type: ignore[index]
    assert all(r["snapshot_id"] and r["after_snapshot_id"] for r in runs)

    explained = cli_process("explain", "run:@prev", "run:@latest")
    assert explained.returncode == 1, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0].startswith("run 1 -> run 2")
    assert lines[1] == "  Output token throughput: 94.1 \u2192 60.3 tok/s (\u221236%) worse"
    causes = [line for line in lines if re.match(r"^\s+\d+\. \[", line)]
    assert causes and "OMP_NUM_THREADS" in causes[0], explained.stdout

    as_json = json.loads(cli_process("explain", "run:1", "run:2", "--format", "json").stdout)
    assert as_json["runs"]["metrics"][0] == {"name": "output_token_throughput", "label": "Output token throughput",
                                             "unit": "tok/s", "before": 94.1, "after": 60.3,
                                             "change": -0.3592, "worse": True}
    assert "OMP_NUM_THREADS" in as_json["explanations"][0]["title"]


def test_exit_code_passes_through_and_is_recorded(cli_process: Callable[..., CliResult]) -> None:
    done = cli_process("run", "--probe", "env", "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert done.returncode == 3
    assert "exit 3" in done.stderr
    (run,) = _runs_json(cli_process)
    assert run["exit_code"] == 3 and run["signal"] is None


@pytest.mark.slow  # a signal to a real CLI process
def test_ctrl_c_reaches_the_command_and_the_record_says_so(tmp_path: Path) -> None:
    """SIGINT sent to driftcheck alone (no terminal here) is forwarded; the command ends on it as it chooses."""
    code = ("import signal, sys, time\n"
            "def stop(signum, frame):\n"
            "    print('Output token throughput (tok/s): 12.5', flush=True); sys.exit(0)\n"
            "signal.signal(signal.SIGINT, stop)\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "driftcheck", "run", "--probe", "env", "--", sys.executable,
                                "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err  # the command caught it and exited 0: that is what passes through
    assert "Output token throughput (tok/s): 12.5" in out
    listed = subprocess.run([sys.executable, "-m", "driftcheck", "runs", "--format", "json"], capture_output=True,
                            text=True, env=env, check=True)
    (run,) = json.loads(listed.stdout)
    assert run["signal"] == "SIGINT" and run["exit_code"] == 0
    assert run["metrics"][0]["value"] == 12.5


def test_a_command_that_dies_of_the_forwarded_signal_exits_130(cli_process: Callable[..., CliResult]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "driftcheck", "run", "--probe", "env", "-q", "--",
                                sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM
    (run,) = _runs_json(cli_process)
    assert run["exit_code"] == 143 and run["signal"] == "SIGTERM"


def test_runs_text_and_one_run_in_detail(cli_process: Callable[..., CliResult]) -> None:
    cli_process("run", "--probe", "env", "--label", "nightly", "--metric", r"cycle[ms]=cycle ([0-9.]+) ms", "--",
                sys.executable, "-c", 'print("cycle 20.5 ms"); print("Mean TTFT (ms): 41.0")')
    listed = cli_process("runs")
    assert listed.returncode == 0
    assert re.search(r"^\s+1\s+\S+Z\s+0\s+\d+\.\d\s+[0-9a-f]{12}\s+nightly$", listed.stdout, re.MULTILINE)
    assert "cycle 20.5 ms" in listed.stdout and "mean_ttft 41 ms" in listed.stdout
    detail = cli_process("runs", "1")
    assert "cycle = 20.5 ms" in detail.stdout and "[--metric cycle]" in detail.stdout
    assert "CPU:" in detail.stdout and "GPUs:" in detail.stdout
    assert cli_process("runs", "--label", "other").stdout.startswith("no runs recorded yet")
    assert cli_process("show", "run:1").returncode == 0  # a run stands for its snapshot everywhere


@pytest.mark.parametrize("args, message", [
    (("run",), "give the command to run after --"),
    (("run", "--metric", "x=[0-9]+", "--", "true"), "needs a group"),
    (("run", "--interval", "0", "--", "true"), "--interval 0"),
    (("runs", "7"), "no such run"),
    (("explain", "run:@latest", "run:@prev"), "the store holds 0 run(s)"),
    (("show", "run:abc"), "not a run reference"),
])
def test_bad_input_is_one_line_and_exit_2(cli: Callable[..., CliResult], args: tuple[str, ...],
                                          message: str) -> None:
    done = cli(*args)
    assert done.returncode == 2 and message in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_a_missing_command_exits_127(cli_process: Callable[..., CliResult]) -> None:
    done = cli_process("run", "--probe", "env", "--", "/nonexistent/bench")
    assert done.returncode == 127 and "command not found" in done.stderr


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or \
        ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)


def _dump_dom(page: Path) -> str:
    browser = _chromium()
    assert browser is not None
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                              capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed (.ci/run installs it)")
def test_html_page_of_five_runs_renders_points_and_a_change_marker(cli_process: Callable[..., CliResult],
                                                                    tmp_path: Path) -> None:
    values = (94.1, 93.8, 94.4, 60.3, 61.0)
    for i, value in enumerate(values):
        env = {"NCCL_P2P_DISABLE": "1"} if i >= 3 else {}  # the snapshot changes before run 4
        done = cli_process("run", "--probe", "env", "--", sys.executable, "-c",
                           f'print("Output token throughput (tok/s): {value}")', env=env)
        assert done.returncode == 0, done.stderr
    page = tmp_path / "runs.html"
    assert cli_process("runs", "--html", str(page)).returncode == 0
    text = page.read_text("utf-8")
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    dom = _dump_dom(page)
    points = re.findall(r'<circle [^>]*class="point[^"]*"', dom)
    assert len(points) == 5
    markers = re.findall(r'<line [^>]*class="change"[^>]*data-run="(\d+)"', dom) + \
        re.findall(r'<line [^>]*data-run="(\d+)"[^>]*class="change"', dom)
    assert markers == ["4"]
    hover = re.search(r'class="change-hit"[^>]*><title>([^<]*)</title>', dom)
    assert hover and "NCCL_P2P_DISABLE" in hover.group(1)
    assert cli_process("runs", "--html", str(page)).returncode == 2  # never overwritten without --force


def _in_terminal(args: list[str], env: dict[str, str], keys: bytes, wait_for: bytes) -> tuple[int, bytes]:
    """Run driftcheck as the foreground job of a new pseudo-terminal; type `keys` once `wait_for` shows."""
    import fcntl
    import select
    import termios

    master, slave = os.openpty()

    def become_terminal_owner() -> None:  # in the child, after setsid: the pty is our controlling terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen([sys.executable, "-m", "driftcheck", *args], stdin=slave, stdout=slave,
                               stderr=slave, env=env, start_new_session=True, preexec_fn=become_terminal_owner)
    os.close(slave)
    seen, typed = b"", False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if not typed and wait_for in seen:
            os.write(master, keys)
            typed = True
        if process.poll() is not None and not ready:
            break
    os.close(master)
    return process.wait(timeout=30), seen


@pytest.mark.slow  # a real terminal and CLI process
def test_in_a_terminal_the_command_gets_a_terminal_and_ctrl_c_once() -> None:
    code = ("import signal, sys, time\n"
            "hits = []\n"
            "signal.signal(signal.SIGINT, lambda s, f: hits.append(s))\n"
            "print('tty', sys.stdout.isatty(), flush=True)\n"
            "print('ready', flush=True)\n"
            "end = time.time() + 30\n"
            "while not hits and time.time() < end: time.sleep(0.05)\n"
            "time.sleep(1.0)\n"  # a second, forwarded SIGINT would arrive in this second
            "print('sigints', len(hits), flush=True)\n"
            "sys.exit(5)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    code_rc, seen = _in_terminal(["run", "--probe", "env", "--", sys.executable, "-c", code], env,
                                 b"\x03", b"ready")
    text = seen.decode("utf-8", "replace")
    assert "tty True" in text  # a pseudo-terminal, not a pipe: the command prints as it would directly
    assert "sigints 1" in text, text  # the terminal's Ctrl-C reached it once; driftcheck sent no second one
    assert code_rc == 5
    listed = subprocess.run([sys.executable, "-m", "driftcheck", "runs", "--format", "json"], capture_output=True,
                            text=True, env=env, check=True)
    (run,) = json.loads(listed.stdout)
    assert run["exit_code"] == 5 and run["signal"] == "SIGINT"


def test_run_with_server_records_its_settings_and_explain_ranks_a_changed_one(cli: Callable[..., CliResult],
                                                                             replay_server: Any) -> None:
    """Two runs against one (replayed, recorded) SGLang server whose CUDA-graph batch size changed between them."""
    routes = recorded_routes("sglang-docs-native-api")
    url = replay_server(routes)  # serves `routes` as it is at each request: changed in place below
    first = cli("run", "--probe", "env", "--server", url, "--", sys.executable, "-c", PRINT_94)
    assert first.returncode == 0, first.stderr
    info = json.loads((SERVERS_DATA / "sglang-docs-native-api" / "get_server_info.json").read_text("utf-8"))
    info["cuda_graph_max_bs"] = 160
    routes.update(recorded_routes("sglang-docs-native-api", **{"get_server_info.json": info}))
    second = cli("run", "--probe", "env", "--server", url, "--", sys.executable, "-c", PRINT_60)
    assert second.returncode == 0, second.stderr

    shown = json.loads(cli("show", "run:1", "--format", "json").stdout)
    assert shown["probes"]["server"]["status"] == "ok"
    assert shown["probes"]["server"]["data"]["server_args"]["cuda_graph_max_bs"] == 4
    lines = cli("explain", "run:@prev", "run:@latest").stdout.splitlines()
    assert lines[1] == "  Output token throughput: 94.1 \u2192 60.3 tok/s (\u221236%) worse"
    causes = [line for line in lines if re.match(r"^\s+\d+\. \[", line)]
    assert "CUDA-graph max batch size 4 -> 160" in causes[0], "\n".join(lines)
    assert cli("run", "--server", "localhost:30000", "--", "true").returncode == 2


def test_the_transformers_server_process_counts_as_the_runs_own(transformers_server: Any) -> None:
    pids = listener_pids(transformers_server.url)
    assert pids, "the real server's listening process was not found"
    assert any("serve" in " ".join(psutil.Process(pid).cmdline()) for pid in pids)


@pytest.mark.slow
def test_a_closed_stdout_is_refused_before_anything_is_taken(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    env = {**os.environ, "DRIFTCHECK_HOME": str(tmp_path), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m driftcheck run -q -- echo hi >&-"],
                          capture_output=True, text=True, env=env, cwd=REPO_ROOT)
    assert done.returncode == 2 and done.stderr.startswith("driftcheck: error: standard output is closed")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "snapshots.db").exists()  # no "before" snapshot was taken
