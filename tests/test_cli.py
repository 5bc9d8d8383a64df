"""The command line, end to end: the foundation's "done when" scenarios, as a user would run them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftcheck.cli import COMMANDS, build_parser

CONTRACT_KEYS = {"a", "b", "explanations", "changes", "unchanged", "bench"}


def _edit(path: Path, change: callable) -> None:  # type: ignore[valid-type]
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2))


def test_snapshot_then_verify_then_tamper(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    taken = cli("snapshot", "-o", str(snap), "--label", "first")
    assert taken.returncode == 0, taken.stderr
    assert len(taken.stdout.strip()) == 12
    assert cli("verify", str(snap)).returncode == 0
    _edit(snap, lambda d: d["probes"]["python"]["data"].__setitem__("version", "3.99.0"))
    verdict = cli("verify", str(snap))
    assert verdict.returncode == 1
    assert "altered" in verdict.stdout


def test_unsigned_snapshot_fails_verify_but_reads(cli, tmp_path: Path) -> None:
    snap = tmp_path / "u.json"
    assert cli("snapshot", "--no-sign", "-o", str(snap)).returncode == 0
    assert cli("verify", str(snap)).returncode == 1
    assert cli("show", str(snap)).returncode == 0


def test_verify_with_trust(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    cli("snapshot", "-o", str(snap))
    fingerprint = json.loads(cli("key", "--format", "json").stdout)["fingerprint"]
    assert cli("verify", str(snap), "--trust", fingerprint).returncode == 0
    assert cli("verify", str(snap), "--trust", "SHA256:someoneelse").returncode == 1


def test_truncated_snapshot_is_one_line_exit_2_for_every_reader(cli_process, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    assert cli_process("snapshot", "-o", str(snap), env={"DRIFTCHECK_HOME": str(tmp_path / "h")}).returncode == 0
    cut = tmp_path / "cut.json"
    cut.write_bytes(snap.read_bytes()[: len(snap.read_bytes()) // 2])
    for args in (["show", str(cut)], ["verify", str(cut)], ["diff", str(cut), str(snap)],
                 ["diff", str(snap), str(cut)], ["show", str(cut), "--format", "json"]):
        result = cli_process(*args, env={"DRIFTCHECK_HOME": str(tmp_path / "h")})
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "truncated" in result.stderr


def test_tampered_snapshot_is_refused_by_show_and_diff(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    cli("snapshot", "-o", str(snap))
    _edit(snap, lambda d: d.__setitem__("label", "changed"))
    for args in (["show", str(snap)], ["diff", str(snap), "@latest"]):
        result = cli(*args)
        assert result.returncode == 2
        assert "altered" in result.stderr


@pytest.mark.parametrize("args", [["show", "@latest"], ["show", "nope"], ["diff", "@0", "@1"],
                                  ["show", "missing/file.json"], ["snapshot", "--probe", "nosuchprobe"],
                                  ["snapshot", "--python", "/no/such/python"], ["show", "@latest", "--format", "xml"]])
def test_bad_references_and_arguments_exit_2(cli_process, args: list[str], tmp_path: Path) -> None:
    result = cli_process(*args, env={"DRIFTCHECK_HOME": str(tmp_path / "empty")})
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_secret_never_appears_and_its_digest_follows_the_value(cli_process, tmp_path: Path) -> None:
    env = {"DRIFTCHECK_HOME": str(tmp_path / "h")}
    first, second = tmp_path / "t.json", tmp_path / "t2.json"
    taken = cli_process("snapshot", "-o", str(first), env={**env, "HF_TOKEN": "hf_example123"})
    assert taken.returncode == 0
    assert cli_process("snapshot", "-o", str(second), env={**env, "HF_TOKEN": "hf_example124"}).returncode == 0
    outputs = [first.read_text(), taken.stdout, taken.stderr]
    for args in (["show", str(first)], ["show", str(first), "--format", "yaml"], ["diff", str(first), str(second)],
                 ["diff", str(first), str(second), "--format", "json", "--all"], ["log"]):
        shown = cli_process(*args, env=env)
        outputs += [shown.stdout, shown.stderr]
    assert not any("hf_example12" in text for text in outputs)
    diff = json.loads(cli_process("diff", str(first), str(second), "--format", "json", env=env).stdout)
    token_changes = [c for c in diff["changes"] if c["path"] == "probes.env.data.vars.HF_TOKEN"]
    assert len(token_changes) == 1
    assert token_changes[0]["before"] != token_changes[0]["after"]
    assert token_changes[0]["before"].startswith("<redacted:hmac-sha256:")


def test_diff_prev_latest_json_contract(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("snapshot").returncode == 0
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cli("snapshot").returncode == 0
    result = cli("diff", "@prev", "@latest", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert set(report) >= CONTRACT_KEYS
    assert {"path": "probes.env.data.vars.OMP_NUM_THREADS", "kind": "added", "before": None, "after": "3",
            "category": "env_var_other"} in report["changes"]
    assert cli("diff", "@latest", "@latest").returncode == 0


def test_log_lists_newest_first(cli) -> None:
    cli("snapshot", "--label", "one")
    cli("snapshot", "--label", "two")
    rows = json.loads(cli("log", "--format", "json").stdout)
    assert [r["label"] for r in rows] == ["two", "one"]
    assert rows[0]["status_counts"]["ok"] >= 2
    text = cli("log").stdout
    assert text.splitlines()[1].startswith("0 ") and "two" in text.splitlines()[1]


def test_output_file_is_not_overwritten_without_force(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    snap.write_text("precious")
    refused = cli("snapshot", "-o", str(snap))
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert snap.read_text() == "precious"
    assert cli("snapshot", "-o", str(snap), "--force").returncode == 0
    assert json.loads(snap.read_text())["schema"] == 1


def test_probe_selection(cli, tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    assert cli("snapshot", "--probe", "python", "-o", str(snap)).returncode == 0
    assert list(json.loads(snap.read_text())["probes"]) == ["python"]
    snap2 = tmp_path / "s2.json"
    assert cli("snapshot", "--skip", "python", "-o", str(snap2)).returncode == 0
    assert "python" not in json.loads(snap2.read_text())["probes"]


def test_python_probe_reads_the_target_interpreter(cli, tmp_path: Path) -> None:
    import sys

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
def test_more_bad_input_is_one_line_exit_2(cli_process, tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "file.json").write_text("{}")
    result = cli_process(*[a.replace("{tmp}", str(tmp_path)) for a in args],
                         env={"DRIFTCHECK_HOME": str(tmp_path / "h")})
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


def test_a_reader_that_leaves_early_never_turns_a_verdict_into_success(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "DRIFTCHECK_HOME": str(tmp_path / "h"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    subprocess.run([sys.executable, "-m", "driftcheck", "snapshot", "-q"], env=env, check=True, capture_output=True)
    shown = subprocess.run(f"set -o pipefail; {sys.executable} -m driftcheck show @latest | head -c 10 >/dev/null",
                           shell=True, executable="/bin/bash", env=env, capture_output=True, text=True)
    assert shown.returncode in (0, 141), shown.stderr  # 0 when all output fit in the pipe before head left
    assert "Traceback" not in shown.stderr and "Exception ignored" not in shown.stderr
