"""`driftcheck report`: report.md (rendered by a real CommonMark renderer) and the signed snapshot beside it."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from driftcheck.reports.anonymize import Anonymizer
from driftcheck.reports.markdown import GITHUB_LIMIT, render_report
from driftcheck.snapshot.model import Snapshot
from tests.reports.helpers import large_document


def _html(markdown: str) -> str:
    # GitHub renders GFM: CommonMark with tables, raw HTML passed through (<details>, <summary>).
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_done_when_report_against_prev_writes_markdown_and_a_verifiable_snapshot(cli: Callable[..., Any],
                                                                                  tmp_path: Path) -> None:
    assert cli("snapshot", "--probe", "python", "--probe", "env", "--label", "before").returncode == 0
    assert cli("snapshot", "--probe", "python", "--probe", "env", "--probe", "system").returncode == 0
    out = tmp_path / "rep"
    result = cli("report", "@latest", "--against", "@prev", "-o", str(out))
    assert result.returncode == 0, result.stderr
    markdown = (out / "report.md").read_text("utf-8")
    snapshots = list(out.glob("snapshot-*.json"))
    assert len(snapshots) == 1
    assert cli("verify", str(snapshots[0])).returncode == 0
    html = _html(markdown)
    assert "<table>" in html and "<th>fact</th>" in html and "<td>python</td>" in html
    assert html.count("<details>") == 3 and html.count("</details>") == 3  # python, env, system
    assert "<summary><b>python</b> ok" in html
    assert "What changed since <code>@prev</code>" in html
    # The report names its signer for the reader to compare, and never vouches for itself with --trust.
    signer = json.loads(cli("key", "--format", "json").stdout)["fingerprint"]
    assert f"`driftcheck verify {snapshots[0].name}`: it was signed by the key `{signer}`" in markdown
    assert "--trust" not in markdown
    assert f"driftcheck explain {snapshots[0].name} @latest" in markdown
    assert len(markdown) < GITHUB_LIMIT
    again = cli("report", "@latest", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    assert (out / "report.md").read_text("utf-8") == markdown
    assert cli("report", "@latest", "-o", str(out), "--force").returncode == 0


def test_large_snapshot_is_cut_under_the_limit_and_says_where_the_rest_is() -> None:
    snapshot = Snapshot(large_document(), "large")
    markdown = render_report(snapshot, "snapshot-x.json", None)
    assert len(markdown) < GITHUB_LIMIT
    assert "_Cut to stay under GitHub's 65,536-character comment limit: env (" in markdown
    assert "gpu (" not in markdown.rsplit("_Cut to stay", 1)[1]
    assert "Every fact is in `snapshot-x.json`" in markdown
    html = _html(markdown)
    assert html.count("<details>") == len(snapshot.probes)
    # The summary and the GPU section survive the cut whole.
    assert "8 × NVIDIA H100 80GB HBM3" in html and "NV18 all pairs" in html
    assert "more line(s) cut here" in markdown


def test_table_cells_cannot_break_the_table() -> None:
    document = large_document()
    document["probes"]["env"]["data"]["vars"]["NCCL_SOCKET_IFNAME"] = "eth0|ib0 <b>"
    html = _html(render_report(Snapshot(document, "x"), "s.json", None))
    assert "NCCL_SOCKET_IFNAME=eth0|ib0 &lt;b&gt;" in html


def test_bundle_holds_both_files(cli: Callable[..., Any], tmp_path: Path) -> None:
    assert cli("snapshot", "--probe", "python").returncode == 0
    result = cli("report", "-o", str(tmp_path / "rep"), "--bundle")
    assert result.returncode == 0, result.stderr
    with tarfile.open(tmp_path / "rep.tar.gz") as tar:
        names = sorted(tar.getnames())
    assert names[0].startswith("rep/report.md") and names[1].startswith("rep/snapshot-")
    assert not (tmp_path / "rep").exists()
    assert cli("report", "-o", str(tmp_path / "rep"), "--bundle").returncode == 2


def test_anonymize_masks_consistently_and_resigns(cli: Callable[..., Any], tmp_path: Path) -> None:
    assert cli("snapshot", "--probe", "python", "--probe", "env").returncode == 0
    first, second = tmp_path / "a", tmp_path / "b"
    assert cli("report", "-o", str(first), "--anonymize").returncode == 0
    assert cli("report", "-o", str(second), "--anonymize").returncode == 0
    snap_a = next(first.glob("snapshot-*.json"))
    document = json.loads(snap_a.read_text("utf-8"))
    assert document["anonymized"] is True and document["host"]["name"].startswith("host-")
    assert cli("verify", str(snap_a)).returncode == 0
    # Same snapshot, same secret: the same masked (and deterministically signed) document.
    assert snap_a.read_text("utf-8") == next(second.glob("snapshot-*.json")).read_text("utf-8")


def test_anonymizer_masks_names_addresses_and_homes_but_not_versions() -> None:
    masker = Anonymizer(b"k" * 32)
    document = {"schema": 1, "created_at": "t", "host": {"name": "gpu-node-17.corp.example"},
                "probes": {"env": {"status": "ok", "data": {"vars": {
                    "HOSTNAME": "gpu-node-17", "USER": "alice", "MASTER_ADDR": "10.2.3.4",
                    "NCCL_SOCKET_IFNAME": "eth0", "HOME": "/home/alice", "PEER": "fe80::1ff:fe23:4567:890a",
                    "MAC": "0c:42:a1:2b:3c:4d", "LOG": "/home/alice/runs on gpu-node-17",
                    "NV_CUDNN_VERSION": "8.9.7.29"}}},
                    "packages": {"status": "ok", "data": {"packages": {"nvidia-cublas-cu12": {
                        "version": "12.8.3.14"}}}}}}
    masked = masker.document(document)
    env = masked["probes"]["env"]["data"]["vars"]
    assert env["HOSTNAME"].startswith("host-") and env["HOSTNAME"] in env["LOG"]
    assert env["USER"] == masker.token("user", "alice") and env["HOME"] == f"/home/{env['USER']}"
    assert env["MASTER_ADDR"].startswith("ip-") and env["PEER"].startswith("ip6-") and env["MAC"].startswith("mac-")
    assert env["NCCL_SOCKET_IFNAME"] == "eth0" and env["NV_CUDNN_VERSION"] == "8.9.7.29"
    assert masked["probes"]["packages"]["data"]["packages"]["nvidia-cublas-cu12"]["version"] == "12.8.3.14"
    assert "alice" not in json.dumps(masked) and "gpu-node-17" not in json.dumps(masked)
    # The same name gives the same token in another snapshot.
    assert Anonymizer(b"k" * 32).token("host", "gpu-node-17") == env["HOSTNAME"]
