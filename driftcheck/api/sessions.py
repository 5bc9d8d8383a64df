"""Between-session spreads, orchestrated: read from the sessions the store keeps for a host before a check judges
its record, carried in that record, and added to when a record of an unchanged state is taken (a baseline's
sessions, a check that passed). The arithmetic is `driftcheck.stats.sessions`, the reading of records
`driftcheck.analysis.sessions`; this module only moves records in and out of the store.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from driftcheck.analysis.sessions import between_sessions
from driftcheck.baselines.record import BenchRecord, as_bench_record
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.keys import KeyPair
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.signing import sign_document
from driftcheck.store.sessions import SessionKey, add_session, sessions_of
from driftcheck.store.snapshots import Store


def session_key(record: Mapping[str, object] | None, host: str) -> SessionKey | None:
    """Whose sessions a benchmark record belongs to (its host, suite and device); None without both."""
    if record is None or not record.get("suite") or not record.get("device"):
        return None
    return SessionKey(host, str(record["suite"]), str(record["device"]))


def measured_between(store: Store, key: SessionKey) -> dict[str, JSONObject]:
    """Per benchmark, the between-session spreads the store's sessions for `key` measure (figures with too few
    sessions left out)."""
    return between_sessions(sessions_of(store, key))


def with_between(snapshot: Snapshot, store: Store, key: SessionKey | None, signing_key: KeyPair | None) -> Snapshot:
    """`snapshot` with the between-session spreads measured so far in its benchmark record (`between_sessions`,
    empty where none is measured: every verdict then says its default is assumed); re-signed with
    `signing_key` when there is one. `snapshot` itself when it holds no benchmark results."""
    record = as_bench_record(snapshot.probe_data("bench"))
    if record is None or key is None:
        return snapshot
    document = copy.deepcopy(snapshot.document)
    document["probes"]["bench"]["data"]["between_sessions"] = measured_between(store, key)
    if signing_key is not None:
        document = sign_document(document, signing_key)
    return Snapshot(document, snapshot.source)


def keep_session(store: Store, key: SessionKey, state: str, session: str, record: BenchRecord | None) -> int:
    """Keep `record`'s runs as session `session` of the unchanged state `state`; how many benchmarks were kept."""
    if record is None or not record.get("results"):
        return 0
    return add_session(store, key, state, session, record["results"])


def keep_passed_check(store: Store, reference: Snapshot, fresh: Snapshot) -> int:
    """After a check that found nothing: the reference's record and the fresh one as two sessions of the
    reference's state (the reference's only once). Nothing when the two were taken on different hosts (that is
    a spread between machines, not sessions) or either lacks benchmark results."""
    before, after = as_bench_record(reference.probe_data("bench")), as_bench_record(fresh.probe_data("bench"))
    key = session_key(after, fresh.host_name)
    if key is None or before is None or reference.host_name != fresh.host_name \
            or session_key(before, reference.host_name) != key:
        return 0
    return (keep_session(store, key, reference.id, reference.id, before)
            + keep_session(store, key, reference.id, fresh.id, after))
