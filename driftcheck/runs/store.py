"""Run records, kept in the table `runs` of the snapshot store's SQLite file.

`snapshot_id` and `after_snapshot_id` are the ids of the snapshots a run points at (the cheap reading
before the command and the one after it); garbage collection treats them as pinned. Until the record is
written, the run's process pins them itself (store/pins.py); writing the record takes over that pin in
the same transaction, so there is no moment when gc may take them. The raw telemetry
series sits in its own column beside the summary, so listing runs never loads it.

A record is redacted on its way in (`add`): its command, label, working directory and the strings of its
telemetry (a trial's `differs_by`, a bisection's changes) pass through the user's redactor, so a token
given on a command line (`try --b HF_TOKEN=...`, `run -- env AWS_SECRET_ACCESS_KEY=... cmd`) is a digest in
the table, in `runs`, in the HTML page and in every report made from it.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from driftcheck.errors import UnknownSnapshotError
from driftcheck.probes.redact import Redactor
from driftcheck.runs.metrics import Metric
from driftcheck.runs.shapes import Condition, RunRecordJson, SeriesJson, Telemetry
from driftcheck.snapshot.home import data_dir
from driftcheck.snapshot.jsontypes import JSONValue
from driftcheck.store.database import STORE_FILE, open_database
from driftcheck.store.pins import Pin, release_pins

# SQLite's integers are 64-bit: a larger run number names no run (and would not even reach the query).
_SQLITE_INTEGERS = 2**63
_COLUMNS = ("id, label, command, cwd, host, started_at, duration_s, exit_code, signal, snapshot_id, "
            "after_snapshot_id, metrics, telemetry")


@dataclass
class RunRecord:
    """One run: the command, how it ended, what it printed, how the machine behaved, the snapshots around it."""

    command: list[str]
    cwd: str
    host: str
    started_at: str
    duration_s: float
    exit_code: int
    snapshot_id: str | None
    after_snapshot_id: str | None = None
    label: str | None = None
    signal: str | None = None
    metrics: list[Metric] = field(default_factory=list)
    telemetry: Telemetry = field(default_factory=lambda: Telemetry())
    id: int | None = None

    def metric(self, name: str) -> Metric | None:
        """The figure called `name`, if the run printed it."""
        return next((m for m in self.metrics if m.name == name), None)

    @property
    def conditions(self) -> list[Condition]:
        """The GPU conditions (HW slowdown, power cap, shared...) the telemetry saw."""
        return list(self.telemetry.get("conditions") or [])

    def to_json(self) -> RunRecordJson:
        """The record as `runs --format json` prints it (the raw series left out)."""
        return {"id": self.id, "label": self.label, "command": self.command, "cwd": self.cwd, "host": self.host,
                "started_at": self.started_at, "duration_s": self.duration_s, "exit_code": self.exit_code,
                "signal": self.signal, "snapshot_id": self.snapshot_id, "after_snapshot_id": self.after_snapshot_id,
                "metrics": [m.to_json() for m in self.metrics], "telemetry": self.telemetry}


def _record(row: tuple[Any, ...]) -> RunRecord:
    (run_id, label, command, cwd, host, started_at, duration_s, exit_code, signal, snapshot_id, after_id,
     metrics, telemetry) = row
    return RunRecord(json.loads(command), cwd, host, started_at, float(duration_s), int(exit_code), snapshot_id,
                     after_id, label, signal, [Metric.from_json(m) for m in json.loads(metrics)],
                     json.loads(telemetry), int(run_id))


class RunStore:
    """The runs of the local store, addressable by id and by position (`@latest`, `@prev`, `@N`)."""

    def __init__(self, path: Path | None = None, redactor: Redactor | None = None) -> None:
        self.path = path or data_dir() / STORE_FILE
        self._redactor = redactor

    @property
    def redactor(self) -> Redactor:
        """What every record passes through on its way in: the given redactor, else the user's own."""
        if self._redactor is None:
            self._redactor = Redactor.of_user()
        return self._redactor

    def redacted(self, record: RunRecord) -> RunRecord:
        """`record` as the store keeps it: command, label, working directory and telemetry strings redacted."""
        redactor = self.redactor
        telemetry = cast(Telemetry, redactor.json(cast(JSONValue, record.telemetry)))
        return replace(record, command=redactor.argv(record.command), cwd=redactor.text(record.cwd),
                       label=None if record.label is None else redactor.text(record.label), telemetry=telemetry)

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return open_database(self.path, "snapshot store")

    def add(self, record: RunRecord, series: SeriesJson | None = None, pin: Pin | None = None,
            within: sqlite3.Connection | None = None) -> int:
        """Keep `record` (and its raw telemetry series); returns the run's id and sets it on the record.
        `pin`: the process's own hold on the record's snapshots, released once the record holds them.
        `within`: a connection to this store whose write transaction the caller holds (`Store.write_lock`): the
        record joins it, and is kept when that transaction commits."""
        kept = self.redacted(record)
        if within is not None:
            return self._insert(within, record, kept, series, pin)
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            run_id = self._insert(db, record, kept, series, pin)
            db.execute("COMMIT")
        return run_id

    def _insert(self, db: sqlite3.Connection, record: RunRecord, kept: RunRecord, series: SeriesJson | None,
                pin: Pin | None) -> int:
        cursor = db.execute(
            "INSERT INTO runs (label, command, cwd, host, started_at, duration_s, exit_code, signal, "
            "snapshot_id, after_snapshot_id, metrics, telemetry, telemetry_series) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (kept.label, json.dumps(kept.command), kept.cwd, kept.host, kept.started_at,
             kept.duration_s, kept.exit_code, kept.signal, kept.snapshot_id, kept.after_snapshot_id,
             json.dumps([m.to_json() for m in kept.metrics]), json.dumps(kept.telemetry),
             None if series is None else json.dumps(series)))
        if pin is not None:
            release_pins(db, [sid for sid in (record.snapshot_id, record.after_snapshot_id) if sid], pin)
        record.id = int(cursor.lastrowid or 0)
        return record.id

    def entries(self, limit: int | None = None, label: str | None = None) -> list[RunRecord]:
        """Runs, oldest first (the last `limit` when given), optionally only those with `label`."""
        query = f"SELECT {_COLUMNS} FROM runs"
        params: list[Any] = []
        if label is not None:
            query += " WHERE label = ?"
            params.append(label)
        query += " ORDER BY id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        with self._connect() as db:
            rows = db.execute(query, params).fetchall()
        return [_record(row) for row in reversed(rows)]

    def get(self, run_id: int) -> RunRecord:
        """The run with this id; UnknownSnapshotError when there is none."""
        if not 0 <= run_id < _SQLITE_INTEGERS:
            raise UnknownSnapshotError(f"run:{run_id}", "no such run in the store; `driftcheck runs` lists them")
        with self._connect() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UnknownSnapshotError(f"run:{run_id}", "no such run in the store; `driftcheck runs` lists them")
        return _record(row)

    def nth_newest(self, n: int) -> RunRecord:
        """The n-th newest run (0 = latest)."""
        if not 0 <= n < _SQLITE_INTEGERS:
            raise UnknownSnapshotError(f"run:@{n}", "no run is that far back")
        with self._connect() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (n,)).fetchone()
            count = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        if row is None:
            hint = "; record one with `driftcheck run -- CMD`" if count == 0 else ""
            raise UnknownSnapshotError(f"run:@{n}", f"the store holds {count} run(s){hint}")
        return _record(row)

    def series(self, run_id: int) -> SeriesJson | None:
        """The raw telemetry series of a run, if it kept one."""
        with self._connect() as db:
            row = db.execute("SELECT telemetry_series FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None or row[0] is None:
            return None
        stored: SeriesJson = json.loads(row[0])  # as `add` wrote it: Series.to_json()
        return stored

    def pinned_snapshot_ids(self) -> set[str]:
        """Every snapshot id a run points at: what garbage collection must keep."""
        with self._connect() as db:
            rows = db.execute("SELECT snapshot_id, after_snapshot_id FROM runs").fetchall()
        return {sid for row in rows for sid in row if sid}
