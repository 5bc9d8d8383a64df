"""The command line, end to end: the foundation's "done when" scenarios, as a user would run them."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from driftcheck.cli import COMMANDS, build_parser
from tests.conftest import REPO_ROOT

CONTRACT_KEYS = {"a", "b", "explanations", "changes", "unchanged", "bench"}
# Probes that take milliseconds: for tests of the command line rather than of what the probes find.
CHEAP = ("--probe", "env", "--probe", "system")


def _edit(path: Path, change: callable) -> None:  # type: ignore[valid-type]
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2))


def test_snapshot_then_verify_then_tamper(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    taken = cli("snapshot", "--probe", "python", "-o", str(snap), "--label", "first")
    assert taken.returncode == 0, taken.stderr
    assert len(taken.stdout.strip()) == 12
    assert cli("verify", str(snap)).returncode == 0
    _edit(snap, lambda d: d["probes"]["python"]["data"].__setitem__("version", "3.99.0"))
    verdict = cli("verify", str(snap))
    assert verdict.returncode == 1
    assert "altered" in verdict.stdout


def test_unsigned_snapshot_fails_verify_but_reads(cli, tmp_path: Path) -> None:
    snap = tmp_path / "u.json"
    assert cli("snapshot", *CHEAP, "--no-sign", "-o", str(snap)).returncode == 0
    assert cli("verify", str(snap)).returncode == 1
    assert cli("show", str(snap)).returncode == 0


def test_verify_with_trust(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    cli("snapshot", *CHEAP, "-o", str(snap))
    fingerprint = json.loads(cli("key", "--format", "json").stdout)["fingerprint"]
    assert cli("verify", str(snap), "--trust", fingerprint).returncode == 0
    # Your own key is trusted from the start; a stranger's is not (tests/snapshot/test_trust.py).
    assert "intact, signed by you" in cli("verify", str(snap)).stdout


def test_truncated_snapshot_is_one_line_exit_2_for_every_reader(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    assert cli("snapshot", *CHEAP, "-o", str(snap)).returncode == 0
    cut = tmp_path / "cut.json"
    cut.write_bytes(snap.read_bytes()[: len(snap.read_bytes()) // 2])
    for args in (["show", str(cut)], ["verify", str(cut)], ["diff", str(cut), str(snap)],
                 ["diff", str(snap), str(cut)], ["show", str(cut), "--format", "json"]):
        result = cli(*args)
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "truncated" in result.stderr


def test_tampered_snapshot_is_refused_by_show_and_diff(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    cli("snapshot", *CHEAP, "-o", str(snap))
    _edit(snap, lambda d: d.__setitem__("label", "changed"))
    for args in (["show", str(snap)], ["diff", str(snap), "@latest"]):
        result = cli(*args)
        assert result.returncode == 2
        assert "altered" in result.stderr


@pytest.mark.parametrize("args", [["show", "@latest"], ["show", "nope"], ["diff", "@0", "@1"],
                                  ["show", "missing/file.json"], ["snapshot", "--probe", "nosuchprobe"],
                                  ["snapshot", "--python", "/no/such/python"], ["show", "@latest", "--format", "xml"]])
def test_bad_references_and_arguments_exit_2(cli, args: list[str]) -> None:
    result = cli(*args)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_secret_never_appears_and_its_digest_follows_the_value(cli, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "t.json", tmp_path / "t2.json"
    monkeypatch.setenv("HF_TOKEN", "hf_example123")
    taken = cli("snapshot", "-o", str(first))
    assert taken.returncode == 0
    monkeypatch.setenv("HF_TOKEN", "hf_example124")
    assert cli("snapshot", "-o", str(second)).returncode == 0
    monkeypatch.delenv("HF_TOKEN")
    outputs = [first.read_text(), taken.stdout, taken.stderr]
    for args in (["show", str(first)], ["show", str(first), "--format", "yaml"], ["diff", str(first), str(second)],
                 ["diff", str(first), str(second), "--format", "json", "--all"], ["log"]):
        shown = cli(*args)
        outputs += [shown.stdout, shown.stderr]
    assert not any("hf_example12" in text for text in outputs)
    diff = json.loads(cli("diff", str(first), str(second), "--format", "json").stdout)
    token_changes = [c for c in diff["changes"] if c["path"] == "probes.env.data.vars.HF_TOKEN"]
    assert len(token_changes) == 1
    assert token_changes[0]["before"] != token_changes[0]["after"]
    assert token_changes[0]["before"].startswith("<redacted:hmac-sha256:")


def test_diff_prev_latest_json_contract(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("snapshot", *CHEAP).returncode == 0
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cli("snapshot", *CHEAP).returncode == 0
    result = cli("diff", "@prev", "@latest", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert set(report) >= CONTRACT_KEYS
    assert {"path": "probes.env.data.vars.OMP_NUM_THREADS", "kind": "added", "before": None, "after": "3",
            "category": "env_var_other"} in report["changes"]
    assert cli("diff", "@latest", "@latest").returncode == 0


def test_log_lists_newest_first(cli) -> None:
    cli("snapshot", *CHEAP, "--label", "one")
    cli("snapshot", *CHEAP, "--label", "two")
    rows = json.loads(cli("log", "--format", "json").stdout)
    assert [r["label"] for r in rows] == ["two", "one"]
    assert rows[0]["status_counts"]["ok"] >= 2
    text = cli("log").stdout
    assert text.splitlines()[1].startswith("0 ") and "two" in text.splitlines()[1]


def test_output_file_is_not_overwritten_without_force(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    snap.write_text("precious")
    refused = cli("snapshot", *CHEAP, "-o", str(snap))
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert snap.read_text() == "precious"
    assert cli("snapshot", *CHEAP, "-o", str(snap), "--force").returncode == 0
    assert json.loads(snap.read_text())["schema"] == 1


def test_probe_selection(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    assert cli("snapshot", "--probe", "python", "-o", str(snap)).returncode == 0
    assert list(json.loads(snap.read_text())["probes"]) == ["python"]
    snap2 = tmp_path / "s2.json"
    assert cli("snapshot", "--skip", "python", "-o", str(snap2)).returncode == 0
    assert "python" not in json.loads(snap2.read_text())["probes"]


def test_python_probe_reads_the_target_interpreter(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    assert cli("snapshot", "--probe", "python", "--python", sys.executable, "-o", str(snap)).returncode == 0
    data = json.loads(snap.read_text())["probes"]["python"]["data"]
    assert data["executable"] == sys.executable
    assert data["version"] == ".".join(map(str, sys.version_info[:3]))


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser(*COMMANDS)
    names = [action for action in parser._subparsers._group_actions[0].choices]  # type: ignore[union-attr]
    assert len(names) == len(COMMANDS)
    for name in names:
        with pytest.raises(SystemExit) as exited:
            parser.parse_args([name, "--help"])
        assert exited.value.code == 0
        assert "usage: driftcheck " + name in capsys.readouterr().out


def test_show_lists_probes_in_report_order(cli, tmp_path: Path) -> None:
    cli("snapshot", "--probe", "env", "--probe", "python", "--probe", "system")
    full = cli("show", "@latest", "--full").stdout
    headers = [line.split("]")[0] + "]" for line in full.splitlines() if line.startswith("[")]
    assert headers == ["[python]", "[env]", "[system]"]


@pytest.mark.parametrize("args", [["snapshot", "-o", "{tmp}/no/such/dir/s.json"],
                                  ["snapshot", "-o", "{tmp}", "--force"],
                                  ["snapshot", "--replay", "{tmp}/file.json"], ["log", "-n", "0"],
                                  ["log", "-n", "-1"], ["check", "--against", "golden"]])
def test_more_bad_input_is_one_line_exit_2(cli, tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "file.json").write_text("{}")
    result = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert not list(tmp_path.glob(".*.tmp*"))


def test_check_never_compares_with_an_import(cli, tmp_path: Path) -> None:
    xml = Path(__file__).parent / "data" / "nvidia" / "xml" / "rtx-3090_590.44.01_v13.xml"
    assert cli("snapshot", "--probe", "env", "--probe", "python").returncode == 0
    assert cli("import", str(xml)).returncode == 0
    result = cli("check", "--no-store")
    assert result.returncode == 0, result.stdout
    assert "GPU" not in result.stdout.split("Checked and unchanged")[0]


def test_import_refuses_files_of_two_machines(cli, tmp_path: Path) -> None:
    data = Path(__file__).parent / "data" / "nvidia"
    result = cli("import", str(data / "xml" / "rtx-3090_590.44.01_v13.xml"),
                 str(data / "topo" / "h200-x8_570.124.06_nv18_no-nic_tabs_sglang-6921.txt"))
    assert result.returncode == 2
    assert "shows 8 GPUs, the GPU description 1" in result.stderr


@pytest.mark.slow  # a pipe whose reader leaves: the process is the point
def test_a_reader_that_leaves_early_never_turns_a_verdict_into_success(tmp_path: Path) -> None:
    env = {**os.environ, "DRIFTCHECK_HOME": str(tmp_path / "h"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    subprocess.run([sys.executable, "-m", "driftcheck", "snapshot", "-q"], env=env, check=True, capture_output=True)
    shown = subprocess.run(f"set -o pipefail; {sys.executable} -m driftcheck show @latest | head -c 10 >/dev/null",
                           shell=True, executable="/bin/bash", env=env, capture_output=True, text=True)
    assert shown.returncode in (0, 141), shown.stderr  # 0 when all output fit in the pipe before head left
    assert "Traceback" not in shown.stderr and "Exception ignored" not in shown.stderr


def _parsers(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every command and sub-action parser under `parser`, by its command words."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found[f"{prefix}{name}"] = child
                found.update(_parsers(child, f"{prefix}{name} "))
    return found


def test_adding_a_command_is_one_module_and_one_registry_line() -> None:
    modules = {p.stem for p in (REPO_ROOT / "driftcheck" / "commands").glob("*.py")} - {"__init__", "common"}
    assert {info.module.rsplit(".", 1)[1] for info in COMMANDS.values()} == modules
    assert all(info.summary and len(info.summary) < 80 for info in COMMANDS.values())


def test_one_name_per_concept_across_commands() -> None:
    parsers = _parsers(build_parser(*COMMANDS))
    meaning: dict[str, set[str]] = {}
    for parser in parsers.values():
        for action in parser._actions:
            for option in action.option_strings:
                meaning.setdefault(option, set()).add(action.dest)
    assert {option: dests for option, dests in meaning.items() if len(dests) > 1} == {}
    assert meaning["-n"] == {"limit"}
    assert not {"--bench-runs", "--bench-budget-s"} & set(meaning)
    # Every command that takes the benchmark runs or budget calls them the same.
    for name, parser in parsers.items():
        options = {o for a in parser._actions for o in a.option_strings}
        assert {o for o in options if o.endswith(("runs", "budget-s"))} <= {"--runs", "--max-runs", "--budget-s"}, name


def test_every_handler_is_one_function_per_sub_action() -> None:
    parsers = _parsers(build_parser(*COMMANDS))
    handlers = {name: p.get_default("handler") for name, p in parsers.items()}
    with_actions = {name.split()[0] for name in parsers if " " in name}
    assert with_actions == {"baseline", "export", "key", "schedule"}
    for name, handler in handlers.items():
        # `key` alone still shows the key, as `key show` does (the one action with a default).
        assert (handler is None) == (name in with_actions - {"key"}), name
    assert handlers["key"] is handlers["key show"]
    assert len({handlers[f"key {a}"] for a in ("show", "trust", "untrust", "trusted")}) == 4
    assert len({handlers[f"baseline {a}"] for a in ("save", "list", "show", "rm")}) == 4
    assert len({handlers[f"schedule {a}"] for a in ("install", "status", "remove")}) == 3


@pytest.mark.parametrize("args, message", [
    (["check", "--no-bench", "--runs", "2"], "not allowed with"),
    (["check", "--no-bench", "--max-runs", "4"], "--max-runs: not allowed with --no-bench"),
    (["check", "--max-runs", "0"], "argument --max-runs: 0 is less than 1"),
    (["bench", "--server", "http://127.0.0.1:1", "--sglang-model", "m"], "not allowed with"),
    (["bench", "--server", "http://127.0.0.1:1", "--runs", "2"], "--runs repeats the benchmark suites"),
    (["snapshot", "--runs", "2"], "go with --bench"),
    (["snapshot", "--host", "h", "--replay", "d"], "do not go together"),
    (["snapshot", "--identity", "k"], "go with --host"),
    (["baseline", "save", "b", "@latest", "--bench", "quick"], "cannot be added to SNAP"),
    (["run", "--interval", "0", "--", "true"], "--interval 0"),
    (["fleet", "--driftcheck", "x", "h"], "--driftcheck goes with --slurm"),
    (["fleet", "--host-timeout", "0", "h"], "must be positive"),
    (["fleet", "--runs", "2", "--bench-concurrency", "2", "h"], "--runs, --bench-concurrency go with --bench"),
    (["fleet", "--bench", "--runs", "0", "h"], "argument --runs: 0 is less than 1"),
    (["gc", "-n"], "unrecognized arguments: -n"),
])
def test_conflicting_options_are_refused_before_any_work(cli, args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


def test_key_show_and_plain_key_print_the_same(cli) -> None:
    shown = json.loads(cli("key", "show", "--format", "json").stdout)
    assert shown == json.loads(cli("key", "--format", "json").stdout)
    assert shown["fingerprint"].startswith("SHA256:")


# A fresh interpreter is the point here (what one command imports); each run is about 0.1 s, so these stay
# in the inner loop: they keep `driftcheck key show` within its start-up target.
_LOADED = """
import json, sys
from driftcheck.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
HEAVY = ("deepdiff", "yaml", "psutil", "paramiko", "driftcheck.analysis", "driftcheck.api", "driftcheck.probes",
         "driftcheck.baselines", "driftcheck.store")


def _loaded(*args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _LOADED, *args], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args, command_modules", [
    (["--help"], set()),
    (["--version"], set()),
    (["key", "show"], {"key"}),
    (["log", "--help"], {"log"}),
])
def test_only_the_command_run_is_imported(args: list[str], command_modules: set[str]) -> None:
    loaded = _loaded(*args)
    commands = {m.rsplit(".", 1)[1] for m in loaded if m.startswith("driftcheck.commands.")}
    assert commands - {"common"} == command_modules
    if command_modules <= {"key"}:
        assert [m for m in loaded if m.startswith(HEAVY)] == []


def test_help_lists_every_command_with_its_summary(cli) -> None:
    shown = cli("--help")
    assert shown.returncode == 0
    for name, info in COMMANDS.items():
        assert f"{name}  " in shown.stdout and info.summary.split()[0] in shown.stdout


_VERSION_ONLY = """
import json, sys
sys.argv = ["driftcheck", "--version"]
from driftcheck.__main__ import run
try:
    run()
except SystemExit as exc:
    print(json.dumps({"code": exc.code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def test_version_prints_what_the_parser_would_without_building_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as parsed:
        build_parser().parse_args(["--version"])
    assert parsed.value.code == 0
    from_parser = capsys.readouterr().out
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _VERSION_ONLY], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    ended = json.loads(done.stderr.strip().splitlines()[-1])
    assert done.stdout == from_parser and ended["code"] == 0
    assert "driftcheck.cli" not in ended["modules"] and "argparse" not in ended["modules"]


def test_fleet_bench_reports_each_host_as_it_ends_on_stderr(capsys) -> None:
    from driftcheck.api.fleet import HostResult
    from driftcheck.commands.fleet import _bench_progress

    assert _bench_progress(False) is None
    report = _bench_progress(True)
    assert report is not None
    report(HostResult("node2", None, "driftcheck exited 1 without a snapshot", 0.4), 1, 3)
    assert capsys.readouterr().err == "[bench 1/3] node2: FAILED: driftcheck exited 1 without a snapshot (0.4 s)\n"
