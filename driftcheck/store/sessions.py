"""Benchmark sessions: the run medians of every record of one unchanged state, kept per host, suite and device
(table `bench_sessions` of the store's schema), from which a check measures how far this host's speed moves
between sessions (`driftcheck.stats.sessions`).

A state is named by the snapshot that first recorded it (a baseline's): its sessions are that record, the
extra sessions `baseline save --sessions N` took, and every check that passed against it. The figures are
copied here (a benchmark's `runs` and the sense of its unit), so a snapshot gc deletes takes nothing away.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.model import utc_now
from driftcheck.store.snapshots import Store


@dataclass(frozen=True)
class BenchSession:
    """One benchmark's runs in one session of one state."""

    state: str
    session: str
    taken_at: str
    name: str
    entry: JSONObject  # {"higher_is_better": bool, "runs": [the record's per-run entries]}


@dataclass(frozen=True)
class SessionKey:
    """Whose sessions: a host, the suite it ran and the device it ran on."""

    host: str
    suite: str
    device: str


def add_session(store: Store, key: SessionKey, state: str, session: str,
                results: Mapping[str, Mapping[str, object]]) -> int:
    """Keep the runs of each benchmark of `results` (a record's results by name) as session `session` of
    `state`; a session already kept stays as it was. Returns how many benchmarks were added."""
    rows = []
    taken_at = utc_now()
    for name, result in sorted(results.items()):
        runs = result.get("runs")
        if not isinstance(runs, list) or not runs:
            continue
        entry = {"higher_is_better": result.get("higher_is_better"), "runs": runs}
        rows.append((key.host, key.suite, key.device, state, session, taken_at, name, json.dumps(entry)))
    with store.database() as db:
        before = db.total_changes
        db.executemany("INSERT OR IGNORE INTO bench_sessions (host, suite, device, state, session, taken_at, name, "
                       "entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return db.total_changes - before


def sessions_of(store: Store, key: SessionKey) -> list[BenchSession]:
    """Every session kept for `key`, oldest first; a row whose figures do not read as an object is left out."""
    with store.database() as db:
        rows = db.execute("SELECT state, session, taken_at, name, entry FROM bench_sessions "
                          "WHERE host = ? AND suite = ? AND device = ? ORDER BY taken_at, state, session, name",
                          (key.host, key.suite, key.device)).fetchall()
    out = []
    for state, session, taken_at, name, text in rows:
        try:
            entry = json.loads(text)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(BenchSession(str(state), str(session), str(taken_at), str(name), entry))
    return out
