"""`log`: the snapshots in the store, newest first, with the reboots between them and the store's size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from driftcheck.store.snapshots import Store, StoredSnapshot


@dataclass(frozen=True)
class SnapshotLog:
    """The stored snapshots, newest first (position N is what `@N` names), and the store's bytes on disk."""

    entries: list[StoredSnapshot]
    size_bytes: int

    def to_json(self) -> list[dict[str, Any]]:
        """The `log --format json` list: one object per snapshot, with its position."""
        return [{"position": i, "id": e.id, "created_at": e.created_at, "host": e.host, "label": e.label,
                 "status_counts": e.status_counts, "boot_id": e.boot_id, "new_boot": e.new_boot}
                for i, e in enumerate(self.entries)]


def log(*, limit: int | None = None, store: Store | None = None) -> SnapshotLog:
    """The snapshots of `store` (default: the user's), newest first, at most `limit` of them."""
    store = store or Store()
    return SnapshotLog(store.entries(limit), store.size_bytes())
