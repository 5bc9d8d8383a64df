"""Taking a snapshot: run the chosen probes on a host and wrap their outcomes in a signed document."""

from __future__ import annotations

from collections.abc import Sequence

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.runner import ProgressCallback, run_probes
from driftcheck.snapshot.keys import KeyPair
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.signing import sign_document


def take_snapshot(host: Host, probes: Sequence[Probe], options: ProbeOptions | None = None,
                  label: str | None = None, key: KeyPair | None = None, origin: str | None = None,
                  progress: ProgressCallback | None = None) -> Snapshot:
    """Probe `host` and return the snapshot, signed with `key` when one is given.

    Probes marked `runs_alone` (benchmarks) run after the others have finished: sharing the CPUs with
    probes that hash files or start tools, they would measure that work too.
    """
    outcomes = run_probes(host, [p for p in probes if not p.runs_alone], options, progress)
    alone = [p for p in probes if p.runs_alone]
    if alone:
        outcomes.update(run_probes(host, alone, options, progress))
    # Report order follows the probe list, not completion order, so two snapshots read alike.
    probes_json = {probe.name: outcomes[probe.name].to_json() for probe in probes}
    document = new_document(host.describe(), probes_json, label=label,
                            origin=origin or ("replayed" if host.capabilities.recorded else "probed"))
    if key is not None:
        document = sign_document(document, key)
    return Snapshot(document, source="<new>")
