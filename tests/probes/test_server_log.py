"""`--server-log FILE`: the server probe reads an engine's startup log through the host, merges its settings into
`server_args`, and explain ranks a changed setting with a fix the release's flag table accepts."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.errors import ProbeUnavailable
from driftcheck.hosts import Host
from driftcheck.hosts.local import LocalHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.redact import Redactor
from driftcheck.probes.server import ServerProbe
from driftcheck.serving.flag_tables import table_for
from driftcheck.snapshot.model import read_snapshot_file
from tests.servers import SERVERS_DATA, release_routes, server_snapshot_pair

LOGS = SERVERS_DATA / "logs"
BASE = json.loads((SERVERS_DATA.parent / "pairs" / "base.json").read_text("utf-8"))


def _probe() -> ServerProbe:
    return ServerProbe(Redactor(b"test-secret"))


def _from_log(path: Path | str) -> dict[str, Any]:
    probe = _probe()
    return probe.parse(probe.gather(LocalHost(), ProbeOptions(server_log=str(path))))




def test_a_vllm_log_alone_is_the_settings_of_a_server_that_runs_no_more() -> None:
    data = _from_log(LOGS / "vllm-0.11.0-issue-28910.log")
    assert (data["engine"], data["version"], data["url"]) == ("vllm", "0.11.0", None)
    assert data["server_args"]["tensor_parallel_size"] == 4 and data["server_args"]["max_num_seqs"] == 10
    log = data["server_log"]
    assert log["found"] and log["why"] is None and "tensor_parallel_size" in log["fields"]
    # vLLM logs only what differs from its parser's defaults: the rest are that release's defaults
    table = table_for("vllm", "0.11.0")
    assert table is not None and log["defaults_from"] == f"vllm {table.version} parser table"
    spec = table.spec("pipeline_parallel_size")
    assert "pipeline_parallel_size" not in log["fields"] and spec is not None
    assert data["server_args"]["pipeline_parallel_size"] == spec.default


def test_an_sglang_log_gives_every_argument_under_the_names_the_server_reports() -> None:
    data = _from_log(LOGS / "sglang-docs-native-api.log")
    assert data["engine"] == "sglang" and data["version"] is None
    assert data["server_args"]["cuda_graph_max_bs"] == 4 and data["server_args"]["tp_size"] == 1
    assert data["server_log"]["defaults_from"] is None and len(data["server_log"]["fields"]) == 349


def test_secrets_in_the_log_are_digests(tmp_path: Path) -> None:
    # vLLM before 0.34 logs `api_key` as given (0.34.0 writes "***", redact_sensitive_args); a real line with a key
    # added, as `vllm serve ... --api-key` would log it.
    text = (LOGS / "vllm-0.11.0-issue-28910.log").read_text("utf-8")
    log = tmp_path / "server.log"
    log.write_text(text.replace("{'enable_auto_tool_choice'", "{'api_key': ['sk-live-0123456789abcdef'], "
                                                             "'enable_auto_tool_choice'"), "utf-8")
    data = _from_log(log)
    assert "sk-live-0123456789abcdef" not in json.dumps(data)
    key = data["server_args"]["api_key"]
    assert isinstance(key, list) and key[0] != "sk-live-0123456789abcdef" and key[0]


class _Remote(Host):
    """Another machine, as an SSH host is: its files are what `read_bytes` answers, never this machine's."""

    kind = "ssh"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    @property
    def name(self) -> str:
        return "node7"

    def read_bytes(self, path: str) -> bytes:
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def list_dir(self, path: str) -> list[str]:
        raise FileNotFoundError(path)

    def run(self, argv: Any, timeout_s: float = 30.0) -> Any:
        raise AssertionError("reading a log runs nothing")

    def python(self, script_name: str, args: Any = (), timeout_s: float = 60.0) -> Any:
        raise AssertionError("reading a log runs nothing")

    def environ(self) -> dict[str, str]:
        return {}


def test_the_log_is_read_on_the_probed_machine() -> None:
    remote = _Remote({"/var/log/vllm.log": (LOGS / "vllm-0.11.0-issue-28910-tp8.log").read_bytes()})
    probe = _probe()
    data = probe.parse(probe.gather(remote, ProbeOptions(server_log="/var/log/vllm.log")))
    assert data["server_args"]["tensor_parallel_size"] == 8 and data["server_log"]["path"] == "/var/log/vllm.log"
    with pytest.raises(ProbeUnavailable, match="no such file on node7"):
        probe.gather(remote, ProbeOptions(server_log=str(LOGS / "vllm-0.11.0-issue-28910.log")))


def test_a_log_that_cannot_be_read_or_holds_no_start_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ProbeUnavailable, match="no such file"):
        _probe().gather(LocalHost(), ProbeOptions(server_log=str(tmp_path / "gone.log")))
    other = tmp_path / "app.log"
    other.write_text("INFO started\nINFO 127.0.0.1 GET /v1/models 200\n", "utf-8")
    with pytest.raises(ProbeUnavailable, match="holds no vLLM `non-default args:` line"):
        _probe().gather(LocalHost(), ProbeOptions(server_log=str(other)))


def test_a_running_server_s_report_wins_and_another_engine_s_log_is_not_merged() -> None:
    info = json.loads((LOGS / "sglang-docs-native-api.server_info.json").read_text("utf-8"))
    replies = {"/server_info": {"status": 200, "content_type": "application/json", "server": "uvicorn",
                                "body": json.dumps(info)}}
    lines = (LOGS / "sglang-docs-native-api.log").read_text("utf-8").splitlines()
    raw = {"url": "http://127.0.0.1:30000", "replies": replies,
           "server_log": {"path": "/var/log/sglang.log", "lines": lines, "why": None}}
    data = _probe().parse(raw)
    # both name log_level; the running server's value is kept, and the log adds nothing it did not report
    assert data["server_args"]["log_level"] == "warning" and data["server_log"]["fields"] == []
    vllm_lines = (LOGS / "vllm-0.11.0-issue-28910.log").read_text("utf-8").splitlines()
    other = _probe().parse({**raw, "server_log": {"path": "/var/log/vllm.log", "lines": vllm_lines, "why": None}})
    assert other["engine"] == "sglang" and "tensor_parallel_size" not in other["server_args"]
    assert other["server_log"]["found"] is False and "not merged" in other["server_log"]["why"]
    # a vLLM that answers 0.34.0 is not the start a 0.11.0 log line describes
    models = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]}
    vllm_replies = {path: {"status": 200, "content_type": "application/json", "server": "uvicorn",
                           "body": json.dumps(body)}
                    for path, body in (("/v1/models", models), ("/version", {"version": "0.34.0"}))}
    upgraded = _probe().parse({"url": "http://127.0.0.1:8000", "replies": vllm_replies,
                               "server_log": {"path": "/var/log/vllm.log", "lines": vllm_lines, "why": None}})
    assert upgraded["engine"] == "vllm" and "server_args" not in upgraded
    assert "0.11.0" in upgraded["server_log"]["why"] and "not merged" in upgraded["server_log"]["why"]


def test_tensor_parallel_4_to_8_from_two_logs_ranks_first_with_a_fix_the_parser_accepts(tmp_path: Path) -> None:
    a = _from_log(LOGS / "vllm-0.11.0-issue-28910.log")
    b = _from_log(LOGS / "vllm-0.11.0-issue-28910-tp8.log")
    result = explain(diff_snapshots(*server_snapshot_pair(tmp_path, a, b)))
    top = result.explanations[0]
    assert list(top.evidence) == ["probes.server.data.server_args.tensor_parallel_size"]
    assert top.rule == "server-vllm-setting" and "4 -> 8" in top.title
    table = table_for("vllm", "0.11.0")  # the release B runs, as the fix is written for it
    assert table is not None
    restoration = table.restoring("tensor_parallel_size", 4)
    assert restoration is not None and top.fix.endswith(restoration.text)
    namespace, unknown = table.parser().parse_known_args(list(restoration.add))
    assert not unknown and namespace.tensor_parallel_size == 4
    assert len(result.explanations) == 1


def test_two_identical_logs_at_two_paths_have_no_cause(tmp_path: Path) -> None:
    copy_of = tmp_path / "restart.log"
    shutil.copy(LOGS / "vllm-0.11.0-issue-28910.log", copy_of)
    a, b = _from_log(LOGS / "vllm-0.11.0-issue-28910.log"), _from_log(copy_of)
    diff = diff_snapshots(*server_snapshot_pair(tmp_path, a, b))
    assert diff.changes == [] and explain(diff).explanations == []
    assert "probes.server.data.server_log.path" in {change.path for change in diff.readings}


def test_snapshot_and_diff_from_the_command_line(cli: Any, tmp_path: Path) -> None:
    a, b, again = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "again.json"
    for out, log in ((a, "vllm-0.11.0-issue-28910.log"), (b, "vllm-0.11.0-issue-28910-tp8.log"),
                     (again, "vllm-0.11.0-issue-28910.log")):
        done = cli("snapshot", "--probe", "server", "--server-log", str(LOGS / log), "-o", str(out), "--no-store",
                   "-q")
        assert done.returncode == 0, done.stderr
    server = json.loads(a.read_text("utf-8"))["probes"]["server"]
    assert server["status"] == "ok" and server["data"]["server_args"]["tensor_parallel_size"] == 4
    changed = cli("explain", str(a), str(b))
    assert changed.returncode == 1 and "--tensor-parallel-size 4" in changed.stdout
    same = cli("explain", str(a), str(again))
    assert same.returncode == 0, same.stdout


def test_check_reads_the_log_the_reference_read_unless_told_another(cli: Any) -> None:
    done = cli("snapshot", "--probe", "python", "--server-log", str(LOGS / "vllm-0.11.0-issue-28910.log"), "-q")
    assert done.returncode == 0, done.stderr
    same = cli("check", "--against", "@latest", "--probe", "python", "--no-bench", "--no-store", "--format", "json")
    assert same.returncode == 0, same.stdout + same.stderr
    drift = cli("check", "--against", "@latest", "--probe", "python", "--no-bench", "--no-store", "--format", "json",
                "--server-log", str(LOGS / "vllm-0.11.0-issue-28910-tp8.log"))
    assert drift.returncode == 1, drift.stderr
    top = json.loads(drift.stdout)["explanations"][0]
    assert top["rule"] == "server-vllm-setting" and top["fix"] == "restart the server with --tensor-parallel-size 4"


def test_a_pipe_given_as_the_log_is_refused_with_what_to_do(cli: Any, tmp_path: Path) -> None:
    # `--server-log <(some command)` gives a pipe: read once, and check could never read it again.
    import os

    pipe = tmp_path / "fd"
    os.mkfifo(pipe)
    done = cli("snapshot", "--probe", "server", "--server-log", str(pipe), "--no-store", "-o", str(tmp_path / "s.json"))
    assert done.returncode == 2 and done.stderr.strip() == (
        f"driftcheck: error: --server-log {pipe}: a pipe, not a file; save the log to a file and give that")
    directory = cli("snapshot", "--probe", "server", "--server-log", str(tmp_path), "--no-store", "-o",
                    str(tmp_path / "s.json"))
    assert directory.returncode == 2 and directory.stderr.strip() == (
        f"driftcheck: error: --server-log {tmp_path}: a directory, not a file")


def test_a_missing_local_log_is_a_one_line_usage_error(cli: Any, tmp_path: Path) -> None:
    missing = tmp_path / "nope.log"
    for argv in (("snapshot", "--probe", "server", "--server-log", str(missing), "--no-store", "-o",
                  str(tmp_path / "s.json")),
                 ("run", "--server-log", str(missing), "--", "true")):
        done = cli(*argv)
        expected = f"driftcheck: error: --server-log {missing}: no such file"
        assert done.returncode == 2 and done.stderr.strip() == expected, done.stderr
    assert not (tmp_path / "s.json").exists()


def test_a_relative_log_path_is_kept_absolute_so_check_from_another_directory_reads_the_same_log(
        cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs, elsewhere = tmp_path / "logs", tmp_path / "elsewhere"
    logs.mkdir()
    elsewhere.mkdir()
    shutil.copy(LOGS / "vllm-0.11.0-issue-28910.log", logs / "server.log")
    monkeypatch.chdir(logs)
    done = cli("snapshot", "--probe", "python", "--server-log", "server.log", "-q")
    assert done.returncode == 0, done.stderr
    shown = json.loads(cli("show", "@latest", "--format", "json").stdout)
    assert shown["probes"]["server"]["data"]["server_log"]["path"] == str(logs / "server.log")
    monkeypatch.chdir(elsewhere)  # a check later, from another directory, reads the log the reference read
    same = cli("check", "--against", "@latest", "--probe", "python", "--no-bench", "--no-store", "--format", "json")
    assert same.returncode == 0, same.stdout + same.stderr
    ran = cli("run", "-q", "--probe", "python", "--server-log", "../logs/server.log", "--", "true")
    assert ran.returncode == 0, ran.stderr
    kept = json.loads(cli("show", "run:@latest", "--format", "json").stdout)
    assert kept["probes"]["server"]["data"]["server_log"]["path"] == str(logs / "server.log")


def test_a_log_of_many_request_lines_is_read_line_by_line_not_held_whole(tmp_path: Path) -> None:
    # A server appends request lines to its log for weeks: gigabytes, of which a few lines are its starts.
    # Here 40 MB of them around the real start (and a coloured line, which is read in full): the probe must not
    # hold the file, or its text, in memory at once.
    import tracemalloc

    request = b"(APIServer pid=33518) INFO 11-18 14:20:01 [loggers.py:127] 127.0.0.1:51234 - \"POST /v1/chat/" \
              b"completions HTTP/1.1\" 200 OK\n"
    filler = request * (20_000_000 // len(request))
    log = tmp_path / "vllm.log"
    with log.open("wb") as out:
        out.write(filler)
        out.write((LOGS / "vllm-0.11.0-issue-28910.log").read_bytes())
        out.write(b"\x1b[32mINFO\x1b[0m 11-18 14:30:00 done\n")
        out.write(filler)
    tracemalloc.start()
    try:
        data = _from_log(log)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    expected = _from_log(LOGS / "vllm-0.11.0-issue-28910.log")
    expected["server_log"]["path"] = str(log)
    assert data == expected
    assert peak < 4_000_000, f"peak {peak / 1e6:.1f} MB for a {log.stat().st_size / 1e6:.0f} MB log"


def test_check_s_help_says_it_asks_the_reference_s_server_and_log_by_default(cli: Any) -> None:
    shown = " ".join(cli("check", "--help").stdout.split())
    assert "--server URL also record what" in shown and "default: the server the reference asked" in shown
    assert "default: the log the reference read" in shown


def _with_status(tmp_path: Path, label: str, outcome: dict[str, Any]) -> Any:
    doc = copy.deepcopy(BASE)
    doc["label"] = label
    doc["probes"]["server"] = outcome
    path = tmp_path / f"{label}.json"
    path.write_text(json.dumps(doc), "utf-8")
    return read_snapshot_file(path)


def test_a_server_probe_that_failed_on_b_is_retaken_with_the_log_a_read(tmp_path: Path) -> None:
    """The fix of a server probe whose outcome differs retakes it as A took it: with the log A read (and
    the URL A asked), else the command fails again for want of a server to ask."""
    log = shutil.copy(LOGS / "vllm-0.11.0-issue-28910.log", tmp_path / "engine log.txt")
    a = _with_status(tmp_path, "a", {"status": "ok", "data": _from_log(log), "error": None, "duration_s": 0.1})
    b = _with_status(tmp_path, "b", {"status": "unavailable", "data": None, "error": "no such file",
                                     "duration_s": 0.1})
    top = explain(diff_snapshots(a, b)).explanations[0]
    assert top.rule == "probe-outcome-changed"
    assert f"`driftcheck snapshot --probe server --server-log '{log}'`" in top.fix, top.fix
    # a probe asked of a URL and a log: both
    data = {**_from_log(log), "url": "http://10.0.0.7:8000"}
    a = _with_status(tmp_path, "a", {"status": "ok", "data": data, "error": None, "duration_s": 0.1})
    top = explain(diff_snapshots(a, b)).explanations[0]
    assert f"--probe server --server http://10.0.0.7:8000 --server-log '{log}'`" in top.fix, top.fix


def test_a_log_with_no_engine_start_is_said_on_stderr_in_one_line(cli: Any, replay_server: Any,
                                                                   tmp_path: Path) -> None:
    """A log that holds no engine start is not a silent success: the snapshot is taken (exit 0, the probe's
    outcome recorded) and one line on stderr says the server probe found no engine start in the log, with or
    without a running server to ask, quiet or not."""
    log = tmp_path / "app.log"
    log.write_text("GET /health 200\nGET /v1/models 200\n", "utf-8")
    said = (f"driftcheck: server probe: server log {log} holds no vLLM `non-default args:` line and no SGLang "
            "`server_args=` line: not the log of an engine's start")
    url = replay_server(release_routes("vllm-0.34.0", "start-a"))
    for n, (extra, quiet) in enumerate((extra, quiet) for extra in ((), ("--server", url)) for quiet in ((), ("-q",))):
        done = cli("snapshot", "--probe", "server", "--server-log", str(log), *extra, *quiet, "--no-store",
                   "-o", str(tmp_path / f"s{n}.json"))
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines().count(said) == 1, (extra, quiet, done.stderr)
    # a log that holds a start says nothing of the kind
    done = cli("snapshot", "--probe", "server", "--server-log", str(LOGS / "vllm-0.11.0-issue-28910.log"), "-q",
               "--no-store", "-o", str(tmp_path / "found.json"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
