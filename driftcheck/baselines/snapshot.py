"""Taking a snapshot that embeds benchmarks: the benchmarks run after the other probes.

Probes run concurrently; a benchmark sharing the CPUs with probes that hash files or start tools
would measure them too. So opt-in probes (the benchmarks) run once the rest have finished, and the
document is signed after both.
"""

from __future__ import annotations

from collections.abc import Sequence

from driftcheck.host import Host
from driftcheck.keys import KeyPair
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.runner import ProgressCallback, run_probes
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.signing import sign_document
from driftcheck.take import take_snapshot


def is_opt_in(probe: Probe) -> bool:
    """Whether `probe` is one that runs only when asked for (and after the others)."""
    return bool(getattr(probe, "opt_in", False))


def take_snapshot_then_bench(host: Host, probes: Sequence[Probe], options: ProbeOptions | None = None,
                             label: str | None = None, key: KeyPair | None = None,
                             progress: ProgressCallback | None = None) -> Snapshot:
    """Like `take_snapshot`, but the opt-in probes run alone after the others have finished."""
    quiet = [p for p in probes if not is_opt_in(p)]
    heavy = [p for p in probes if is_opt_in(p)]
    first = take_snapshot(host, quiet, options, label=label, key=None, progress=progress)
    outcomes = run_probes(host, heavy, options, progress)
    document = dict(first.document)
    taken = {**document["probes"], **{name: outcome.to_json() for name, outcome in outcomes.items()}}
    document["probes"] = {probe.name: taken[probe.name] for probe in probes}
    if key is not None:
        document = sign_document(document, key)
    return Snapshot(document, source="<new>")


def bench_options(suite: str | None, budget_s: float | None) -> dict[str, object]:
    """The ProbeOptions.extra entries that tell the bench probe which suite to run, and its budget."""
    from driftcheck.probes.bench import BENCH_BUDGET_OPTION, BENCH_OPTION

    extra: dict[str, object] = {}
    if suite:
        extra[BENCH_OPTION] = suite
    if budget_s is not None:
        extra[BENCH_BUDGET_OPTION] = budget_s
    return extra
