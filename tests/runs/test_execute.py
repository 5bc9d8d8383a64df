"""Running the command: output passed through byte for byte, lines scanned, exit codes and signals kept."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from driftcheck.errors import CommandNotRunnable
from driftcheck.runs.execute import run_command
from driftcheck.runs.output import OutputLines, OutputReader


def _run(code: str) -> tuple[int, str | None, bytes, bytes, list[str]]:
    out, err, reader = io.BytesIO(), io.BytesIO(), OutputReader()
    finished = run_command([sys.executable, "-c", code], reader, stdout=out, stderr=err)
    return finished.exit_code, finished.signal, out.getvalue(), err.getvalue(), reader.tail()


def test_output_passes_through_unchanged_and_is_split_into_lines() -> None:
    code = ("import sys; o = sys.stdout.buffer; o.write(b'caf\\xc3\\xa9 \\xff raw\\r\\n10%\\r100%\\rdone'); o.flush(); "
            "sys.stderr.write('Output token throughput (tok/s): 94.1\\n')")
    exit_code, signal, out, err, lines = _run(code)
    assert exit_code == 0 and signal is None
    assert out == b"caf\xc3\xa9 \xff raw\r\n10%\r100%\rdone"  # bytes as printed, invalid UTF-8 included
    assert err == b"Output token throughput (tok/s): 94.1\n"
    assert sorted(lines) == sorted(["caf\u00e9 \ufffd raw", "10%", "100%", "done",
                                    "Output token throughput (tok/s): 94.1"])


def test_exit_code_is_passed_through() -> None:
    assert _run("import sys; sys.exit(3)")[0] == 3


def test_a_command_killed_by_a_signal_exits_128_plus_its_number() -> None:
    exit_code, signal, *_ = _run("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert (exit_code, signal) == (137, "SIGKILL")


def test_a_missing_command_is_exit_127() -> None:
    with pytest.raises(CommandNotRunnable) as caught:
        run_command(["/nonexistent/bench"], OutputReader(), stdout=io.BytesIO(), stderr=io.BytesIO())
    assert caught.value.exit_code == 127 and "command not found" in str(caught.value)


def test_line_splitter_waits_for_a_split_crlf() -> None:
    lines: list[str] = []
    splitter = OutputLines()
    for chunk in (b"a\r", b"\nb", b"\xc3", b"\xa9\r", b"c"):
        lines.extend(splitter.feed(chunk))
    lines.extend(splitter.close())
    assert lines == ["a", "b\u00e9", "c"]


def test_a_terminate_sent_to_driftcheck_reaches_the_commands_grandchildren(tmp_path: Path) -> None:
    import os
    import signal
    import threading
    import time

    import psutil

    from driftcheck.runs.execute import run_command

    pid_file = tmp_path / "grandchild.pid"
    # A launcher whose worker (the grandchild) would keep the GPU if only the launcher were told to stop.
    launcher = (f"import subprocess, sys, time\n"
                f"worker = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                f"open({str(pid_file)!r}, 'w').write(str(worker.pid))\n"
                f"time.sleep(60)\n")

    def terminate_us_once_the_worker_runs() -> None:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate_us_once_the_worker_runs, daemon=True).start()
    with open(os.devnull, "w") as sink:
        finished = run_command([sys.executable, "-c", launcher], OutputReader(), stdout=sink, stderr=sink)
    assert finished.signal == "SIGTERM" and finished.forwarded
    worker = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while psutil.pid_exists(worker) and psutil.Process(worker).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the worker outlived the terminate"
        time.sleep(0.05)


class _CountingReader(OutputReader):
    """An output reader that counts the pieces it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces = 0

    def feed(self, data: bytes, stream: int = 0) -> None:
        self.pieces += 1
        super().feed(data, stream)


def test_a_log_written_in_small_pieces_passes_whole_in_fewer_reads() -> None:
    # 600 lines, one write each, half a millisecond apart: a reader woken by each write takes ~600 pieces; one that
    # pauses after a short read takes a few lines at a time.
    code = ("import sys, time\nfor i in range(600):\n"
            "    sys.stdout.write(f'step {i} 12.5 tok/s ' + 'x' * 200 + '\\n')\n"
            "    sys.stdout.flush()\n    time.sleep(0.0005)\n")
    out, reader = io.BytesIO(), _CountingReader()
    finished = run_command([sys.executable, "-c", code], reader, stdout=out, stderr=io.BytesIO())
    expected = "".join(f"step {i} 12.5 tok/s " + "x" * 200 + "\n" for i in range(600)).encode()
    assert finished.exit_code == 0 and out.getvalue() == expected
    assert reader.tail()[-1] == f"step 599 12.5 tok/s {'x' * 200}"
    assert [(m.name, m.count) for m in reader.metrics()] == [("tokens_per_second", 600)]
    assert reader.pieces < 300


def test_on_exit_comes_once_the_command_has_ended_and_before_its_output_is_scanned() -> None:
    reader, seen = OutputReader(), []
    finished = run_command([sys.executable, "-c", "print('Output token throughput (tok/s): 94.1')"], reader,
                           stdout=io.BytesIO(), stderr=io.BytesIO(), on_exit=lambda: seen.append(reader.metrics()))
    assert finished.exit_code == 0
    assert seen == [[]]  # called once, when nothing was scanned yet
    assert [m.name for m in reader.metrics()] == ["output_token_throughput"]


def test_the_scan_keeps_a_bounded_backlog_after_one_stream_has_ended() -> None:
    from driftcheck.runs.execute import _Scanner

    reader = OutputReader()
    scanner = _Scanner(reader, streams=2, max_backlog=1000)
    scanner.put(0, None)  # the command closed its stdout early (a wrapper's `exec >results.txt`) and logs on stderr
    for _ in range(50):
        scanner.put(1, b"x" * 99 + b"\n")
    assert scanner.skipped_bytes >= 4000  # 5,000 bytes queued, at most 1,000 kept
    scanner.put(1, b"Output token throughput (tok/s): 5\n")
    scanner.put(1, None)
    scanner.join(5.0)
    assert [(m.name, m.value) for m in reader.metrics()] == [("output_token_throughput", 5.0)]


def test_the_pause_after_a_read_fits_the_rate_the_command_writes_at() -> None:
    from driftcheck.runs.execute import _COALESCE_FILL, _COALESCE_S, _PIPE_BYTES, _pause_after

    # A log of a few lines a millisecond: the whole pause, for one read to take what 5 ms brought.
    assert _pause_after(4096, 0.001) == _COALESCE_S
    # 200 MB/s fills three quarters of the pipe in ~3.9 ms: the pump reads before it is full, so the command
    # never waits on a full pipe for the rest of a 5 ms pause.
    fast = _pause_after(512 << 10, (512 << 10) / 200e6)
    assert fast == pytest.approx(_COALESCE_FILL * _PIPE_BYTES / 200e6) and fast < _COALESCE_S
    assert _pause_after(_PIPE_BYTES - 1, 1e-6) < 1e-4  # a read that came at once: hardly a pause
