"""`driftcheck gc`: limits, and the snapshots nothing may remove (baselines, run records, @before-boot)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from driftcheck.api.references import resolve_snapshot
from driftcheck.hosts import LocalHost
from driftcheck.snapshot.signing import verify_document
from driftcheck.store.gc import plan_gc
from driftcheck.store.hashcache import CachedFile, FileIdentity, HashCache
from driftcheck.store.snapshots import Store
from tests.conftest import DATA, CliResult

RECORDING = DATA / "hosts" / "debian12-vm-docker"


def _snap(cli: Callable[..., CliResult], label: str, recording: Path = RECORDING) -> str:
    assert cli("snapshot", "--replay", str(recording), "--probe", "system", "--probe", "env",
               "--label", label, "-q").returncode == 0
    return resolve_snapshot("@latest").id


def _rebooted(tmp_path: Path) -> Path:
    copy = tmp_path / "rebooted"
    shutil.copytree(RECORDING, copy)
    (copy / "files" / "proc/sys/kernel/random/boot_id").write_text("9f0e1d2c-3b4a-4596-8877-665544332211\n")
    return copy


def test_keep_last_one_keeps_every_pinned_snapshot(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    ids = {label: _snap(cli, label) for label in ("baseline", "run-before", "run-after", "plain-1", "old-boot")}
    rebooted = _rebooted(tmp_path)
    ids.update({label: _snap(cli, label, rebooted) for label in ("new-boot", "plain-2", "newest")})
    assert cli("baseline", "save", "golden", ids["baseline"]).returncode == 0
    with sqlite3.connect(Store().path) as db:  # a run record, as `driftcheck run` keeps them
        db.execute("INSERT INTO runs (command, cwd, host, started_at, duration_s, exit_code, snapshot_id, "
                   "after_snapshot_id, metrics, telemetry) VALUES ('bench', '/', 'vm', '2026-12-01T00:00:00Z', "
                   "1.0, 0, ?, ?, '[]', '{}')", (ids["run-before"], ids["run-after"]))
    result = cli("gc", "--keep-last", "1")
    assert result.returncode == 0, result.stderr
    kept = {e.label for e in Store().entries()}
    # baseline, run record (both ends), @before-boot, @boot, the newest; the two plain ones go.
    assert kept == {"baseline", "run-before", "run-after", "old-boot", "new-boot", "newest"}
    assert "removed 2 snapshot(s)" in result.stdout
    assert "baseline golden" in result.stdout and "run record" in result.stdout and "@before-boot" in result.stdout
    for entry in Store().entries():  # what stays still reads back whole, signature intact
        assert verify_document(resolve_snapshot(entry.id).document).intact
    assert resolve_snapshot("@before-boot").label == "old-boot"


def test_without_a_runs_table_and_dry_run_changes_nothing(cli: Callable[..., CliResult]) -> None:
    for n in range(3):
        _snap(cli, f"s{n}")
    dry = cli("gc", "--keep-last", "1", "--dry-run", "--format", "json")
    assert dry.returncode == 0, dry.stderr
    report = json.loads(dry.stdout)
    assert [e["label"] for e in report["remove"]] == ["s1"]  # s0 is @boot, s2 the newest
    assert report["dry_run"] is True and len(Store().entries()) == 3
    assert cli("gc", "--keep-last", "1").returncode == 0
    assert [e.label for e in Store().entries()] == ["s2", "s0"]


def test_keep_days_counts_from_each_snapshot_time(cli: Callable[..., CliResult]) -> None:
    for n in range(3):
        _snap(cli, f"s{n}")
    entries = Store().entries()
    newest = datetime.fromisoformat(entries[0].created_at.replace("Z", "+00:00"))
    plan = plan_gc(Store(), keep_days=1, now=newest)
    assert plan.remove == []
    later = plan_gc(Store(), keep_days=1, now=newest.replace(year=newest.year + 1))
    assert [e.label for e in later.remove] == ["s1"]
    assert {e.label: why for e, why in later.keep} == {"s2": ["newest of recorded-host"], "s0": ["@boot"]}


def test_hash_cache_forgets_files_that_are_gone(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    _snap(cli, "one")
    kept, gone = tmp_path / "kept.so", tmp_path / "gone.so"
    kept.write_bytes(b"k")
    gone.write_bytes(b"g")
    host = LocalHost().name
    cache = HashCache(Store().path)
    cache.remember(host, [(str(p), CachedFile(FileIdentity(1, 1, 1), "0" * 64)) for p in (kept, gone)])
    cache.remember("other-node", [(str(gone), CachedFile(FileIdentity(1, 1, 1), "0" * 64))])
    gone.unlink()
    result = cli("gc", "--keep-days", "30")
    assert result.returncode == 0
    assert "dropped 1 row(s)" in result.stdout
    assert set(cache.lookup(host)) == {str(kept)}
    assert set(cache.lookup("other-node")) == {str(gone)}  # another machine's files are not ours to stat


def test_gc_needs_a_limit(cli: Callable[..., CliResult]) -> None:
    result = cli("gc")
    assert result.returncode == 2 and "--keep-last N and/or --keep-days D" in result.stderr
    for bad in (["--keep-last", "-1"], ["--keep-days", "nan"]):
        refused = cli("gc", *bad)  # argparse's own exit, with our one-line message
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1


def test_gc_of_a_store_that_does_not_exist_yet(cli: Callable[..., CliResult]) -> None:
    result = cli("gc", "--keep-last", "5")
    assert result.returncode == 0 and "removed 0 snapshot(s)" in result.stdout
