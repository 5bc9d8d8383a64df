"""`driftcheck explain` and `diff --format json` on real snapshot pairs: formats, exit codes, determinism."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"


def _pair(case: str) -> tuple[str, str]:
    return str(PAIRS / case / "a.json"), str(PAIRS / case / "b.json")


def test_diff_json_carries_ranked_explanations_and_unchanged(cli: Callable[..., CliResult]) -> None:
    a, b = _pair("nccl-env-added")
    result = cli("diff", a, b, "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert set(report) >= {"a", "b", "explanations", "changes", "unchanged", "bench"}
    top = report["explanations"][0]
    assert top["rank"] == 1 and top["category"] == "nccl_env"
    assert top["evidence"] == ["probes.env.data.vars.NCCL_P2P_DISABLE"]
    assert top["fix"] == "unset NCCL_P2P_DISABLE"
    assert 0.0 <= top["confidence"] <= 1.0
    titles = [row["title"] for row in report["unchanged"]]
    assert "GPU power limits: identical" in titles
    assert not any(row["category"] == "nccl_env" for row in report["unchanged"])
    assert report["bench"] == []


def test_explain_is_byte_identical_across_runs(cli: Callable[..., CliResult]) -> None:
    a, b = _pair("gpu-persistence-off-after-reboot")
    for fmt in ("text", "markdown", "json"):
        first = cli("explain", a, b, "--format", fmt)
        second = cli("explain", a, b, "--format", fmt)
        assert first.returncode == second.returncode == 1
        assert first.stdout == second.stdout


def test_explain_text_calls_out_reboot_reset_state_without_colour_off_a_tty(cli: Callable[..., CliResult]) -> None:
    a, b = _pair("gpu-persistence-off-after-reboot")
    out = cli("explain", a, b).stdout
    assert "\033[" not in out
    assert "rebooted between A and B" in out
    first_cause = next(line for line in out.splitlines() if line.startswith(" 1."))
    assert "persistence mode turned off on GPU 0" in first_cause
    assert "reset by the reboot" in first_cause
    assert "fix: sudo nvidia-smi -i 0 -pm 1" in out


def test_explain_colour_on_a_tty(cli_process: Callable[..., CliResult], tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    a, b = _pair("pcie-width-narrower")
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(PAIRS.parents[2]), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run([sys.executable, "-m", "driftcheck", "explain", a, b], stdout=follower,
                          stderr=subprocess.PIPE, env=env, timeout=60, check=False)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.returncode == 1
    assert b"\033[" in b"".join(chunks)


def test_trap_only_difference_exits_zero_with_a_note(cli: Callable[..., CliResult]) -> None:
    a, b = _pair("pcie-gen-drop-at-idle")
    result = cli("explain", a, b)
    assert result.returncode == 0
    assert "No relevant difference" in result.stdout
    assert "at idle: power saving, not drift" in result.stdout


def test_explain_markdown_is_an_issue_section(cli: Callable[..., CliResult]) -> None:
    a, b = _pair("package-downgraded")
    out = cli("explain", a, b, "--format", "markdown").stdout
    assert out.startswith("## driftcheck explain\n")
    # deepdiff is pure Python: its prior is scaled down by its relevance (0.6 x 0.2).
    assert ("| 1 | 0.12 | package_version | deepdiff downgraded 9.1.0 -> 8.6.1 | "
            "`/opt/venv/bin/python -m pip install deepdiff==9.1.0` |") in out


def test_explain_bad_input_is_one_line_exit_2(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"schema": 1, "created_at"', "utf-8")
    a, _ = _pair("rebooted")
    result = cli("explain", a, str(junk))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_real_env_change_between_two_real_snapshots(cli: Callable[..., CliResult], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Done-when: two real snapshots of this machine around one real env change."""
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    monkeypatch.delenv("NCCL_P2P_DISABLE", raising=False)
    assert cli("snapshot", "--probe", "env", "--probe", "python", "-o", str(before), "-q").returncode == 0
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")
    assert cli("snapshot", "--probe", "env", "--probe", "python", "-o", str(after), "-q").returncode == 0
    result = cli("explain", str(before), str(after), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["explanations"][0]["rule"] == "nccl-env-added"
    assert report["explanations"][0]["title"] == "NCCL_P2P_DISABLE=1 set (unset on A)"
    assert {"category": "package_version", "title": "Python interpreter: identical"} in report["unchanged"]


def test_identical_snapshots_exit_zero_and_list_unchanged(cli: Callable[..., CliResult]) -> None:
    a, _ = _pair("rebooted")
    result = cli("explain", a, a, "--format", "json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["explanations"] == [] and report["changes"] == []
    assert len(report["unchanged"]) >= 20


def test_many_changes_of_no_known_effect_fold_into_one_line_and_all_expands_them(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    paths = []
    for side in ("a", "b"):
        document = json.loads((PAIRS / "env-other" / f"{side}.json").read_text("utf-8"))
        if side == "b":
            document["probes"]["env"]["data"]["vars"].update({f"MY_TOOL_SETTING_{i}": "x" for i in range(30)})
        paths.append(tmp_path / f"{side}.json")
        paths[-1].write_text(json.dumps(document), "utf-8")
    folded = cli("explain", str(paths[0]), str(paths[1])).stdout
    expanded = cli("explain", str(paths[0]), str(paths[1]), "--all").stdout
    assert "MY_TOOL_SETTING_17" not in folded and "more change(s) of no known effect" in folded
    assert "(31 in all) (--all lists them)" in folded
    assert "MY_TOOL_SETTING_17" in expanded and "no known effect" not in expanded
    assert len(folded.splitlines()) < len(expanded.splitlines()) - 60
    report = json.loads(cli("explain", str(paths[0]), str(paths[1]), "--format", "json").stdout)
    assert len(report["explanations"]) == 31  # machine-readable output is never folded
