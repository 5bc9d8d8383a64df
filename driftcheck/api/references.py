"""Turning what the user typed (a path, an id prefix, @latest, @prev, @N, @boot, @before-boot, baseline:NAME,
run:ID) into a snapshot.

Resolution reads the snapshot store, the named baselines, the run records and files on disk: it is
orchestration, so it lives in the face, and `analysis` receives snapshots already resolved."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from driftcheck.errors import TamperedSnapshotError, UnknownSnapshotError
from driftcheck.runs.reference import is_run_reference, resolve_run
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.named import PREFIX as BASELINE_PREFIX
from driftcheck.store.named import NamedSnapshots
from driftcheck.store.snapshots import Store

if TYPE_CHECKING:
    from driftcheck.runs.store import RunRecord

_POSITION = re.compile(r"^@(latest|prev|\d+)$")
# The longest reference read: longer than any path (PATH_MAX is 4096) or id, so a longer one names nothing.
MAX_REFERENCE = 4096
# The largest @N: no store holds this many snapshots, and SQLite's integers end at 2**63.
MAX_POSITION = 10**12
_RUN_NUMBER = re.compile(r"^run:@?(\d+)")
BOOT_REFERENCES = ("@boot", "@before-boot")


def check_not_tampered(snapshot: Snapshot) -> Snapshot:
    """`snapshot` if it is unsigned or its signature holds; TamperedSnapshotError if it was altered."""
    verdict = snapshot.verification  # kept: the signer named next is this same verdict
    if verdict.status == "altered":
        raise TamperedSnapshotError(snapshot.source, f"{verdict.message}; `driftcheck verify` says more")
    return snapshot


def resolve_snapshot(reference: str, store: Store | None = None, check_signature: bool = True) -> Snapshot:
    """The snapshot `reference` names: a file, `@latest`, `@prev`, `@N` (N-th newest), `@boot` (the first
    snapshot of the newest one's boot), `@before-boot` (the newest of the same host under another boot id),
    `baseline:NAME`, a run (`run:ID`, `run:@latest`...: the snapshot taken before it; `:after` for the one
    after) or an id prefix.

    With `check_signature`, a signed snapshot whose content was altered is refused.
    """
    store = store or Store()
    if len(reference) > MAX_REFERENCE:
        raise UnknownSnapshotError(f"{reference[:40]}...", f"a reference of {len(reference)} characters names "
                                                           f"nothing ({MAX_REFERENCE} at most)")
    position = _POSITION.match(reference)
    if reference.startswith(BASELINE_PREFIX):
        snapshot = NamedSnapshots(store).snapshot(reference[len(BASELINE_PREFIX):])
    elif is_run_reference(reference):
        _check_number(reference, _RUN_NUMBER.match(reference), "no run has that number")
        from driftcheck.runs.store import RunStore  # a run's reference only, as the importer in `_read_file`

        run, after = resolve_run(reference, RunStore(store.path))
        snapshot = run_snapshot(reference, run, after, store)
    elif position:
        which = position.group(1)
        _check_number(reference, position, f"no store holds that many snapshots ({MAX_POSITION:,} at most)")
        n = 0 if which == "latest" else 1 if which == "prev" else int(which)
        snapshot = store.nth_newest(n)
    elif reference in BOOT_REFERENCES:
        snapshot = store.load(boot_reference(reference, store))
    elif reference.startswith("@"):
        raise UnknownSnapshotError(reference, "unknown position; use @latest, @prev, @N (0 = newest), @boot "
                                              "or @before-boot")
    elif _is_path(reference):
        snapshot = _read_file(Path(reference))
    elif "/" in reference or reference.endswith((".json", ".yaml")):
        raise UnknownSnapshotError(reference, "no such file")
    else:
        snapshot = store.by_prefix(reference)
    return check_not_tampered(snapshot) if check_signature else snapshot


def _read_file(path: Path) -> Snapshot:
    """The snapshot file at `path`, or the pasted report there (collect_env, check_env, nvidia-smi) imported on
    the fly. The importer and its report formats are imported here, not at the top: `@latest`, an id or a
    baseline never needs them, and `show @latest` would pay for them on every call."""
    from driftcheck.reports.importer import read_snapshot_or_report

    return read_snapshot_or_report(path)


def _check_number(reference: str, match: re.Match[str] | None, reason: str) -> None:
    """UnknownSnapshotError when the number `match` found in `reference` is beyond MAX_POSITION (SQLite's
    integers end at 2**63: a larger one would be an overflow, not an answer)."""
    digits = match.group(1) if match else ""
    if digits.isdigit() and int(digits.lstrip("0")[:20] or "0") > MAX_POSITION:
        raise UnknownSnapshotError(reference[:60], reason)


def _is_path(reference: str) -> bool:
    """Whether `reference` names something on disk (a NUL or an over-long name names nothing there)."""
    try:
        return Path(reference).exists()
    except (OSError, ValueError):
        return False


def boot_reference(reference: str, store: Store) -> str:
    """The id `@boot` or `@before-boot` names, for the host of the newest snapshot; UnknownSnapshotError
    saying why when there is none."""
    points = store.boot_points(store.newest_host(reference))
    if points.boot_id is None:
        raise UnknownSnapshotError(reference, f"no stored snapshot of {points.host} records a boot id "
                                              "(the system probe records it)")
    if reference == "@boot":
        return str(points.first_id)
    if points.before_id is None:
        raise UnknownSnapshotError(reference, f"every stored snapshot of {points.host} is from this boot "
                                              f"({points.boot_id[:8]}); none was taken before it")
    return points.before_id


def run_snapshot(reference: str, run: RunRecord, after: bool, store: Store) -> Snapshot:
    """The snapshot the run `reference` stands for, once resolved to `run`: the one taken before its command,
    or with `after` the reading after it; UnknownSnapshotError when the run kept none."""
    snapshot_id = run.after_snapshot_id if after else run.snapshot_id
    if not snapshot_id:
        when = "after" if after else "before"
        raise UnknownSnapshotError(reference, f"run {run.id} kept no snapshot {when} its command")
    return store.by_prefix(snapshot_id)
