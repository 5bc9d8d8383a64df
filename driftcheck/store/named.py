"""Named snapshots: a name (`default`, `h100-node-golden`) pointing at a snapshot kept in the store.

The command line calls them baselines (`driftcheck baseline save NAME`, `baseline:NAME`); a named
snapshot may carry calibrated benchmark results (`driftcheck.baselines`), but the name itself is
only a pointer. The names live in `baselines.json` beside the store (the file name is kept so that
existing stores keep their names), the snapshots themselves in the store.
A name is never re-pointed without `force`.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import DriftcheckError, UnknownSnapshotError, UsageError
from driftcheck.snapshot.home import ensure_private_dir
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.model import Snapshot, utc_now
from driftcheck.store.snapshots import Store

BASELINES_FILE = "baselines.json"
PREFIX = "baseline:"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class NamedSnapshot:
    """One name and the snapshot it points at."""

    name: str
    snapshot_id: str
    saved_at: str
    host: str
    label: str | None

    def to_json(self) -> JSONObject:
        return {"name": self.name, "id": self.snapshot_id, "saved_at": self.saved_at, "host": self.host,
                "label": self.label}


def check_name(name: str) -> str:
    """`name` if it can name a baseline; UsageError otherwise."""
    if not _NAME.match(name):
        raise UsageError(f"baseline name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    return name


class NamedSnapshots:
    """The named snapshots (baselines) of one store."""

    def __init__(self, store: Store | None = None, path: Path | None = None) -> None:
        self.store = store or Store()
        self.path = path or self.store.path.parent / BASELINES_FILE

    @contextmanager
    def _locked(self) -> Iterator[None]:
        ensure_private_dir(self.path.parent)
        with open(self.path.with_name(f".{self.path.name}.lock"), "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def locked(self) -> AbstractContextManager[None]:
        """Hold the baselines' lock: no baseline is saved or removed meanwhile (gc plans and deletes under it;
        taken before the store's write lock, as `save` does)."""
        return self._locked()

    def _read(self) -> dict[str, JSONObject]:
        try:
            document = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise DriftcheckError(f"cannot read the baselines file {self.path}: {exc}") from None
        if not isinstance(document, dict) or not isinstance(document.get("baselines"), dict):
            raise DriftcheckError(f"{self.path}: not a driftcheck baselines file")
        return dict(document["baselines"])

    def _write(self, entries: dict[str, JSONObject]) -> None:
        tmp = self.path.with_name(f".{self.path.name}.tmp{os.getpid()}")
        tmp.write_text(json.dumps({"baselines": dict(sorted(entries.items()))}, indent=2, sort_keys=True) + "\n",
                       "utf-8")
        tmp.replace(self.path)

    def save(self, name: str, snapshot: Snapshot, force: bool = False) -> NamedSnapshot:
        """Name `snapshot` (kept in the store) as baseline `name`; refuses to re-point a name without `force`."""
        check_name(name)
        with self._locked():
            entries = self._read()
            if name in entries and not force and entries[name].get("id") != snapshot.id:
                raise UsageError(f"baseline {name!r} already exists (snapshot {str(entries[name].get('id'))[:12]}); "
                                 f"pass --force to point it at {snapshot.short_id}")
            self.store.add(snapshot)
            baseline = NamedSnapshot(name, snapshot.id, utc_now(), snapshot.host_name, snapshot.label)
            entries[name] = {k: v for k, v in baseline.to_json().items() if k != "name"}
            self._write(entries)
        return baseline

    def check_free(self, name: str) -> None:
        """UsageError when `name` is taken: said before a long measurement, not after it."""
        check_name(name)
        taken = self._read().get(name)
        if taken is not None:
            raise UsageError(f"baseline {name!r} already exists (snapshot {str(taken.get('id'))[:12]}); "
                             "pass --force to re-point it")

    def entries(self) -> list[NamedSnapshot]:
        """Every baseline, by name."""
        return [NamedSnapshot(name, str(e.get("id")), str(e.get("saved_at")), str(e.get("host")), _label(e))
                for name, e in sorted(self._read().items())]

    def get(self, name: str) -> NamedSnapshot:
        """The baseline called `name`; UnknownSnapshotError naming the known ones if none."""
        found = next((b for b in self.entries() if b.name == name), None)
        if found is None:
            known = ", ".join(b.name for b in self.entries()) or "none yet; `driftcheck baseline save NAME`"
            raise UnknownSnapshotError(f"{PREFIX}{name}", f"no such baseline (known: {known})")
        return found

    def snapshot(self, name: str) -> Snapshot:
        """The snapshot baseline `name` points at."""
        return self.store.by_prefix(self.get(name).snapshot_id)

    def remove(self, name: str) -> NamedSnapshot:
        """Forget baseline `name` (its snapshot stays in the store)."""
        with self._locked():
            entries = self._read()
            if name not in entries:
                self.get(name)
            baseline = next(b for b in self.entries() if b.name == name)
            del entries[name]
            self._write(entries)
        return baseline


def _label(entry: JSONObject) -> str | None:
    """The label a baselines file keeps for one entry (text, or null for none)."""
    label = entry.get("label")
    return None if label is None else str(label)
