"""`schedule_install`, `schedule_status`, `schedule_remove`: snapshots taken on a timer and after every boot,
by systemd units (system-wide or the user's, live or under a machine image's root) or a cron entry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftcheck.errors import OptionError
from driftcheck.schedule.installer import (
    Installed,
    Outcome,
    Settings,
    choose_target,
    find_installed,
    install,
    parse_duration,
    remove,
)
from driftcheck.store.snapshots import Store

__all__ = ["Outcome", "ScheduleStatus", "schedule_install", "schedule_remove", "schedule_status"]

# The labels of the snapshots a schedule takes: after a boot, and on the timer.
LABELS = ("boot", "scheduled")


@dataclass
class ScheduleStatus:
    """What is installed (found on disk) and when the store last got a snapshot of each schedule label."""

    installed: Installed
    last: dict[str, str | None]

    def to_json(self) -> dict[str, Any]:
        """The status as `driftcheck schedule status --format json` prints it."""
        return {**self.installed.to_json(), "installed": bool(self.installed.files), "last": self.last}


def schedule_install(*, every: str = "1d", at_boot: bool = False, python: str | None = None,
                     bench: str | None = None, textfile_dir: Path | None = None, user: bool = False,
                     root: Path | None = None, cron_dir: Path | None = None) -> Outcome:
    """Write and enable a service and timer taking a snapshot every `every` (`1d`, `6h`, `1h30min`), and with
    `at_boot` one after every boot; `python`: the interpreter whose packages matter; `bench`: a benchmark suite
    each scheduled snapshot also runs; `textfile_dir`: node_exporter's textfile directory, where
    `driftcheck export prometheus` refreshes `driftcheck.prom` after each scheduled snapshot. System-wide as
    root, the user's (`user`) otherwise; `root` writes the units under a machine image's root; where systemd
    does not run, a cron entry (in `cron_dir` as root)."""
    target = choose_target(user, root, cron_dir)
    every_s = parse_duration(every)
    if python and not Path(python).is_file():
        raise OptionError("python", python, "no such interpreter")
    if textfile_dir is not None and not textfile_dir.is_dir():
        raise OptionError("textfile_dir", str(textfile_dir), "no such directory")
    exported = str(textfile_dir.absolute()) if textfile_dir is not None else None
    return install(Settings(every_s, at_boot, python, bench, exported), target)


def schedule_remove(*, user: bool = False, root: Path | None = None, cron_dir: Path | None = None) -> Outcome:
    """Take away exactly what `schedule_install` wrote there."""
    return remove(choose_target(user, root, cron_dir))


def schedule_status(*, user: bool = False, root: Path | None = None, cron_dir: Path | None = None,
                    store: Store | None = None) -> ScheduleStatus:
    """What is installed there, and when the store (default the user's) last got each label's snapshot."""
    return ScheduleStatus(find_installed(choose_target(user, root, cron_dir)), _last_snapshots(store or Store()))


def _last_snapshots(store: Store) -> dict[str, str | None]:
    last: dict[str, str | None] = dict.fromkeys(LABELS)
    if not store.path.exists():
        return last
    for entry in store.entries():
        if entry.label in last and last[entry.label] is None:
            last[entry.label] = entry.created_at
    return last
