"""One printable-text rule for every renderer: a foreign snapshot's label, host and values reach the terminal,
report.md and the runs page shown, never obeyed (no ESC sequence, no line of their own, no Markdown or HTML
of their own)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from driftcheck.runs.store import RunRecord, RunStore
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store
from tests.conftest import CliResult

BASE = Path(__file__).resolve().parent / "data" / "pairs" / "base.json"
# A window title, a screen clear, a forged verdict on a line of its own, a direction override.
HOSTILE = "x\x1b]0;owned\x07\x1b[2J\nsnapshot abc  intact, signed by you\u202e"
FENCE = "v\n```\n# forged heading <script>alert(1)</script>"


def _hostile_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(BASE.read_text())
    document.pop("signature", None)
    document["label"] = HOSTILE
    document["host"]["name"] = "node" + HOSTILE
    document["probes"]["env"]["data"]["vars"]["NCCL_ALGO"] = FENCE
    document["probes"]["env"]["data"]["vars"]["CUDA_VISIBLE_DEVICES"] = HOSTILE
    return document


def _obeyed(text: str) -> list[str]:
    """What a terminal would act on, or a line the hostile text wrote on its own."""
    found = [char for char in ("\x1b", "\x07", "\u202e") if char in text]
    return found + [line for line in text.splitlines() if line.startswith(("snapshot abc", "# forged"))]


def test_show_summary_and_full_print_a_foreign_snapshot_inert(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(_hostile_document()))
    for args in (("show", str(path)), ("show", str(path), "--full")):
        done = cli(*args)
        assert done.returncode == 0, done.stderr
        assert _obeyed(done.stdout + done.stderr) == [], args
        assert "\\x1b]0;owned" in done.stdout


def test_gc_and_baseline_list_print_hosts_and_labels_inert(cli: Callable[..., CliResult]) -> None:
    store = Store()
    snapshot_id = store.add(Snapshot(_hostile_document(), source="foreign"))
    saved = cli("baseline", "save", "b1", snapshot_id)
    assert saved.returncode == 0, saved.stderr
    for args in (("baseline", "list"), ("gc", "--keep-last", "0", "--dry-run"), ("log",)):
        done = cli(*args)
        assert done.returncode == 0, (args, done.stderr)
        assert _obeyed(done.stdout + done.stderr) == [], args


def test_a_value_never_ends_report_md_code_block(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(_hostile_document()))
    out = tmp_path / "report"
    done = cli("report", str(path), "--output", str(out))
    assert done.returncode == 0, done.stderr
    markdown = (out / "report.md").read_text()
    assert _obeyed(markdown) == []
    # Fences open and close in pairs: every value stayed inside its block.
    fences = [line for line in markdown.splitlines() if re.match(r"\s{0,3}(```|~~~)", line)]
    assert len(fences) % 2 == 0 and "NCCL_ALGO: v\\n```\\n# forged heading" in markdown


def test_a_label_never_changes_how_the_runs_page_parses(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    label = "a<!--<script>x</script><b>bold</b>&amp;"
    RunStore().add(RunRecord(command=["bench", "--x", "</script><script>alert(1)</script>"], cwd="/", host="h",
                             started_at="2026-01-01T00:00:00Z", duration_s=1.0, exit_code=0, snapshot_id=None,
                             label=label))
    page_path = tmp_path / "runs.html"
    assert cli("runs", "--html", str(page_path)).returncode == 0
    page = page_path.read_text()
    data = re.search(r'<script type="application/json" id="runs-data">(.*?)</script>', page, re.S)
    assert data is not None
    assert "<" not in data.group(1) and ">" not in data.group(1)
    assert json.loads(data.group(1))["runs"][0]["label"] == label
    assert page.count("<script") == 2 and "<b>bold</b>" not in page


def test_fleet_progress_prints_host_names_and_reasons_inert(capsys: Any) -> None:
    """A host name comes from a hosts file or a Slurm node's own report, and a failure's reason from the far
    side: both are printed escaped on fleet's progress lines, one line per host whatever they hold."""
    from driftcheck.api.fleet import HostResult
    from driftcheck.commands.fleet import _bench_progress, _progress

    for reporter in (_progress(True), _bench_progress(True)):
        assert reporter is not None
        reporter(HostResult("node" + HOSTILE, None, "exited 1: " + HOSTILE, 0.4), 1, 2)
        err = capsys.readouterr().err
        assert _obeyed(err) == [] and len(err.splitlines()) == 1, err
        assert "node" + "x\\x1b]0;owned" in err and "exited 1: x\\x1b]0;owned" in err
