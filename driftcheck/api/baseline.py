"""`baseline`: named snapshots to check against, saved, listed, shown and removed.

`save_baseline("default")` takes a fresh snapshot (with `bench=`, a calibrated benchmark in it, which a later
`check` reruns and judges) and names it; `save_baseline("golden", snapshot="@latest")` names one already taken.
`save_baseline("default", bench="quick", sessions=5, interval_s=120)` also takes the benchmark in four more
sessions, two minutes apart, and keeps all five as sessions of the baseline's state: what measures how far this
host's speed moves between sessions (`driftcheck.api.sessions`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from driftcheck.analysis.signers import Signers, signers_for
from driftcheck.analysis.signers import require_trusted as refuse_untrusted
from driftcheck.api.references import resolve_snapshot
from driftcheck.api.sessions import keep_session, measured_between, session_key
from driftcheck.api.snapshot import SnapshotRequest, take_snapshot
from driftcheck.baselines.record import BenchRecord, as_bench_record
from driftcheck.baselines.repeated import run_repeated
from driftcheck.errors import DriftcheckError, OptionError
from driftcheck.hosts.child import StepReporter
from driftcheck.probes.base import BenchRequest
from driftcheck.probes.runner import ProgressCallback
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.named import NamedSnapshot, NamedSnapshots
from driftcheck.store.snapshots import Store

# Three runs are the fewest whose spread means something; each more narrows the MDS further.
DEFAULT_BASELINE_RUNS = 3


@dataclass(frozen=True)
class SavedBaseline:
    """A baseline just saved: its name entry, the snapshot it points at, and who signed that snapshot."""

    entry: NamedSnapshot
    snapshot: Snapshot
    signers: Signers
    # Per benchmark, the host's between-session spreads measured once this baseline's sessions were kept.
    between_sessions: dict[str, JSONObject] = field(default_factory=dict)
    sessions: int = 0

    @property
    def bench(self) -> BenchRecord | None:
        """The benchmark record the snapshot carries, if any (what `check --against NAME` reruns)."""
        return as_bench_record(self.snapshot.probe_data("bench"))

    def to_json(self) -> dict[str, object]:
        """The name entry, the signers of its snapshot, its benchmark record (None without one), the sessions it
        was taken in and the between-session spreads measured here since."""
        return {**self.entry.to_json(), "signers": self.signers.to_json(), "bench": self.bench,
                "sessions": self.sessions, "between_sessions": self.between_sessions}


@dataclass(frozen=True)
class ShownBaseline:
    """A baseline's name entry and the snapshot it points at."""

    entry: NamedSnapshot
    snapshot: Snapshot

    def to_json(self) -> dict[str, object]:
        """What `driftcheck baseline show --format json` prints: the entry, with the snapshot's document."""
        return {**self.entry.to_json(), "snapshot": self.snapshot.document}


@dataclass(frozen=True)
class BaselineList:
    """Every baseline of a store, in name order."""

    entries: tuple[NamedSnapshot, ...]

    def to_json(self) -> list[JSONObject]:
        """What `driftcheck baseline list --format json` prints: one entry per baseline."""
        return [entry.to_json() for entry in self.entries]


def save_baseline(name: str, snapshot: str | Snapshot | None = None, *, force: bool = False,
                  label: str | None = None, python: str | None = None, bench: str | None = None,
                  runs: int = DEFAULT_BASELINE_RUNS, budget_s: float | None = None, sessions: int = 1,
                  interval_s: float = 0.0, require_trusted: bool = False, store: Store | None = None,
                  progress: ProgressCallback | None = None,
                  step_progress: StepReporter | None = None) -> SavedBaseline:
    """Name `snapshot` (a reference, a Snapshot, default: a fresh snapshot of every probe, labelled
    `baseline NAME` unless `label` says otherwise, of `python`'s packages) `name`; `force` re-points an existing
    name. `bench` runs that calibrated benchmark suite into the fresh snapshot (never into one already taken),
    `runs` independent runs within `budget_s` each; a baseline whose benchmark did not run is not saved.
    `sessions` > 1 takes the benchmark that many times in all, `interval_s` seconds apart (the first one is the
    baseline's), and keeps each as a session of the baseline's state, so checks against it count this host's
    between-session spread as measured rather than assumed.
    `require_trusted` refuses a snapshot signed by no key the user trusts (UntrustedSignerError)."""
    if snapshot is not None and bench is not None:
        raise OptionError("bench", bench, "measures now, into a fresh snapshot; it cannot be added to one "
                                          "already taken")
    _check_sessions(sessions, interval_s, bench)
    asked = BenchRequest(bench, runs, budget_s) if bench is not None else None
    store = store or Store()
    named = NamedSnapshots(store)
    if snapshot is None and not force:
        named.check_free(name)  # before the minutes a fresh snapshot with benchmarks takes
    if isinstance(snapshot, Snapshot):
        chosen = snapshot
    elif snapshot is not None:
        chosen = resolve_snapshot(snapshot, store)
    else:
        request = SnapshotRequest(label=label or f"baseline {name}", python=python, bench=asked, keep=False)
        chosen = take_snapshot(request, store=store, progress=progress, step_progress=step_progress)
    signers = signers_for({"snapshot": chosen}, roles={"snapshot": "SNAP"})
    if require_trusted:
        refuse_untrusted(signers)
    if bench is not None and not chosen.probe_data("bench"):
        # A baseline saved without the benchmarks it was asked for would make `check` skip them silently.
        outcome = chosen.document["probes"].get("bench") or {}
        raise DriftcheckError(f"baseline {name} not saved: the benchmarks did not run "
                              f"({outcome.get('status')}: {outcome.get('error')})")
    saved = SavedBaseline(named.save(name, chosen, force), chosen, signers)
    record = saved.bench
    key = session_key(record, chosen.host_name)
    if bench is None or key is None or snapshot is not None:
        return saved
    keep_session(store, key, chosen.id, chosen.id, record)
    for index in range(2, sessions + 1):
        if step_progress:
            step_progress(f"session {index}/{sessions} in {interval_s:g} s")
        time.sleep(interval_s)
        taken = run_repeated(bench, "auto", runs, budget_s, None, step_progress)
        keep_session(store, key, chosen.id, f"{chosen.id}#{index}", taken)
    return SavedBaseline(saved.entry, chosen, signers, measured_between(store, key), sessions)


def _check_sessions(sessions: int, interval_s: float, bench: str | None) -> None:
    """OptionError for sessions or an interval that cannot be taken."""
    if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 1:
        raise OptionError("sessions", repr(sessions), "give a whole number of at least 1")
    if sessions > 1 and bench is None:
        raise OptionError("sessions", str(sessions), "takes the benchmark in several sessions: give bench too")
    if isinstance(interval_s, bool) or not isinstance(interval_s, (int, float)) or not 0 <= interval_s <= 86400:
        raise OptionError("interval_s", repr(interval_s), "give seconds from 0 to 86400")


def list_baselines(*, store: Store | None = None) -> BaselineList:
    """Every baseline of `store` (default: the user's)."""
    return BaselineList(tuple(NamedSnapshots(store or Store()).entries()))


def show_baseline(name: str, *, store: Store | None = None) -> ShownBaseline:
    """The baseline `name` and its snapshot (UnknownSnapshotError when there is none by that name)."""
    named = NamedSnapshots(store or Store())
    return ShownBaseline(named.get(name), named.snapshot(name))


def remove_baseline(name: str, *, store: Store | None = None) -> NamedSnapshot:
    """Forget the baseline `name`; its snapshot stays in the store."""
    return NamedSnapshots(store or Store()).remove(name)
