"""How much disk 1,000 daily snapshots of one machine take in the store, and whether `log`, `show @N`
and `diff` stay as fast with 1,000 snapshots stored as with 10.

The machine: the large snapshot of benchmarks/diff_speed.py (8 recorded H100s, 600 packages with
2,400 compiled files, 300 environment variables). Each day changes what changes on a real machine
every day (the time, the uptime, free memory, probe durations, GPU temperatures and power draw, the
signature) and, every few days, one package upgrade (its version and its compiled files' hashes) or
one environment variable. Every snapshot is signed with a real key.

    python benchmarks/store_growth.py [--days 1000] [--repeat 5]

Prints the store's size against one snapshot (as the JSON file `driftcheck snapshot -o` writes, and
as a store holding just it) and against the old layout (every document whole, as text), then the
timings. Timings on a shared machine are disturbed by whatever else runs on it.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import hashlib
import importlib.util
import io
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.cli import main as cli_main  # noqa: E402
from driftcheck.snapshot.canonical import canonical_bytes, pretty_json  # noqa: E402
from driftcheck.snapshot.keys import load_signing_key  # noqa: E402
from driftcheck.snapshot.model import Snapshot  # noqa: E402
from driftcheck.snapshot.signing import sign_document  # noqa: E402
from driftcheck.store.snapshots import Store  # noqa: E402


def _large_document() -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("diff_speed", ROOT / "benchmarks" / "diff_speed.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    document: dict[str, Any] = module.large_document()
    document.pop("signature", None)
    return document


def _next_day(document: dict[str, Any], day: int, rng: random.Random) -> dict[str, Any]:
    """The machine one day later: the readings that always move, and now and then one real change."""
    doc = copy.deepcopy(document)
    doc["created_at"] = f"2027-{1 + (day // 28) % 12:02d}-{1 + day % 28:02d}T03:00:{day % 60:02d}.{day:06d}Z"
    doc["label"] = "scheduled"
    for outcome in doc["probes"].values():
        outcome["duration_s"] = round(rng.uniform(0.01, 2.0), 4)
    system = doc["probes"]["system"]["data"]
    system["uptime_s"] = round(86400.0 * (day % 30) + rng.uniform(0, 60), 2)
    system.setdefault("memory", {})["available_kib"] = rng.randrange(400_000_000, 500_000_000)
    for gpu in doc["probes"]["gpu"]["data"]["gpus"].values():
        for key, value in list(gpu.get("power", {}).items()):
            if key == "draw_w" and isinstance(value, (int, float)):
                gpu["power"][key] = round(rng.uniform(60.0, 90.0), 2)
        for key in ("gpu_c", "memory_c"):  # readings; the slowdown/shutdown thresholds stay
            if isinstance(gpu.get("temperature"), dict) and key in gpu["temperature"]:
                gpu["temperature"][key] = rng.randrange(28, 45)
    if day % 5 == 0:  # an upgrade: a new version and new binaries
        name = f"pkg-{rng.randrange(600):04d}"
        package = doc["probes"]["packages"]["data"]["packages"][name]
        package["version"] = f"{day}.0.{rng.randrange(10)}"
        for key, entry in doc["probes"]["kernels"]["data"]["files"].items():
            if key.startswith(name + ":"):
                entry["sha256"] = hashlib.sha256(f"{key}@{day}".encode()).hexdigest()
                entry["size_bytes"] += rng.randrange(-500, 500)
    if day % 7 == 3:  # someone exported a setting
        doc["probes"]["env"]["data"]["vars"][f"APP_SETTING_{rng.randrange(300):03d}"] = f"value-{day}"
    return doc


def _store_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:  # fold the write-ahead log into the file, as a quiet store is
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Store(path).size_bytes()


class OldLayout:
    """The same snapshots in the layout before deltas: one row per snapshot with its whole JSON text."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript("CREATE TABLE snapshots (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL "
                              "UNIQUE, created_at TEXT NOT NULL, host TEXT NOT NULL, label TEXT, status_counts TEXT "
                              "NOT NULL, document TEXT NOT NULL); CREATE INDEX snapshots_id ON snapshots(id);")

    def add(self, snapshot: Snapshot, text: bytes) -> None:
        self.db.execute("INSERT INTO snapshots (id, created_at, host, label, status_counts, document) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (snapshot.id, snapshot.created_at, snapshot.host_name,
                                                      snapshot.label, json.dumps(snapshot.status_counts()),
                                                      text.decode("utf-8")))

    def size(self) -> int:
        self.db.close()
        return self.path.stat().st_size


def _median_ms(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _cli(*args: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(list(args))
    if code not in (0, 1):
        raise SystemExit(f"driftcheck {' '.join(args)} exited {code}")


def _commands(count: int) -> dict[str, list[str]]:
    """The commands a user runs on history; the diffs compare two adjacent days, so the work of the diff
    itself is alike and what differs is the store."""
    middle, before = f"@{count // 2}", f"@{count // 2 + 1}"
    return {"log -n 20": ["log", "-n", "20"], "log (all)": ["log"],
            f"show {middle}": ["show", middle, "--format", "json"],
            f"diff {before} {middle}": ["diff", before, middle, "--format", "json"],
            "diff @prev @latest": ["diff", "@prev", "@latest", "--format", "json"]}


def _timings(homes: tuple[Path, Path], counts: tuple[int, int], repeat: int) -> list[tuple[str, float, str, float]]:
    """(name, ms) with the small store and with the large one, per command. The two are timed in turn,
    so a burst of other work on the machine falls on both alike."""
    rows = []
    for (small_name, small_args), (large_name, large_args) in zip(_commands(counts[0]).items(),
                                                                  _commands(counts[1]).items(), strict=True):
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(repeat):
            for side, (home, args) in enumerate(((homes[0], small_args), (homes[1], large_args))):
                os.environ["DRIFTCHECK_HOME"] = str(home)
                times[side].append(_median_ms(functools.partial(_cli, *args), 1))
        rows.append((small_name, statistics.median(times[0]), large_name, statistics.median(times[1])))
    return rows


def _fill(home: Path, days: int, base: dict[str, Any], progress: bool,
          old: OldLayout | None = None) -> tuple[dict[str, bytes], float]:
    """Add `days` daily snapshots to the store under `home` (and to `old`); a sample of their canonical
    texts by id (one in 20, and the last) and the seconds spent adding."""
    os.environ["DRIFTCHECK_HOME"] = str(home)
    key = load_signing_key(home)
    store, rng, doc, sample, spent = Store(), random.Random(14), base, {}, 0.0
    for day in range(days):
        doc = _next_day(doc, day, rng)
        snapshot = Snapshot(sign_document(doc, key))
        text = canonical_bytes(snapshot.document)
        if day % 20 == 0 or day == days - 1:
            sample[snapshot.id] = text
        if old is not None:
            old.add(snapshot, text)
        start = time.perf_counter()
        store.add(snapshot)
        spent += time.perf_counter() - start
        if progress and sys.stderr.isatty():
            sys.stderr.write(f"\r\033[Kadding day {day + 1}/{days}")
    if progress and sys.stderr.isatty():
        sys.stderr.write("\n")
    return sample, spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = _large_document()
    with tempfile.TemporaryDirectory() as tmp:
        one, ten, many = Path(tmp, "one"), Path(tmp, "ten"), Path(tmp, "many")
        first, _ = _fill(one, 1, base, False)
        _fill(ten, 10, base, False)
        old_layout = OldLayout(Path(tmp, "old.db"))
        sample, spent = _fill(many, args.days, base, True, old_layout)
        file_bytes = len(pretty_json(json.loads(next(iter(first.values())))).encode("utf-8"))
        one_store = _store_bytes(one / "snapshots.db")
        many_store = _store_bytes(many / "snapshots.db")
        old = old_layout.size()
        # Stored snapshots read back byte for byte, so their signatures still verify.
        store = Store(many / "snapshots.db")
        exact = all(canonical_bytes(store.load(sid).document) == text for sid, text in sample.items())
        print(f"one snapshot: {file_bytes / 1e6:.2f} MB as a JSON file, {one_store / 1e6:.2f} MB as a store")
        print(f"{args.days} daily snapshots: store {many_store / 1e6:.2f} MB "
              f"(whole documents as before: {old / 1e6:.1f} MB); adding took {spent / args.days * 1000:.0f} ms each")
        print(f"ratio store of {args.days} / store of one snapshot: {many_store / one_store:.2f} (target < 10)")
        print(f"ratio store of {args.days} / one snapshot's JSON file: {many_store / file_bytes:.2f}")
        print(f"ratio store of {args.days} / whole documents: {many_store / old:.4f}")
        print(f"snapshots read back byte for byte: {'yes' if exact else 'NO'}")
        for name_small, ms_small, name_large, ms_large in _timings((ten, many), (10, args.days), args.repeat):
            print(f"{name_large:<20} {ms_large:8.1f} ms with {args.days} stored | {name_small:<18} {ms_small:8.1f} ms "
                  f"with 10 | ratio {ms_large / ms_small:.2f}")
        return 0 if many_store < 10 * one_store and exact else 1


if __name__ == "__main__":
    sys.exit(main())
