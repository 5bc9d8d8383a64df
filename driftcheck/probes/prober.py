"""Taking a snapshot, the one way: a `Prober` runs the chosen probes on its host and wraps their outcomes
in a signed document. The API (`driftcheck.take_snapshot`, `check`), `run`, `fleet` and `record` all
build one, so a snapshot is taken, redacted, signed and kept the same way whoever asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from driftcheck.hosts import Host
from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.background import Background
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.kernels import HashProgress, attach_hash_progress
from driftcheck.probes.record import RecordResult, record
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import ProgressCallback, run_probes
from driftcheck.snapshot.keys import KeyPair, load_redaction_secret, load_signing_key
from driftcheck.snapshot.model import Snapshot, new_document
from driftcheck.snapshot.signing import sign_document
from driftcheck.store.snapshots import Store


def signing_key_loading() -> Background[KeyPair]:
    """The user's signing key, loaded in a thread of its own once started (importing cryptography and reading the
    key file take 6-8 ms): begun when a snapshot's first probe has answered, by then its probes wait on the target
    interpreter, and the load costs the snapshot nothing. What loading raised is raised where it is signed."""
    return Background(load_signing_key, "signing-key")


@dataclass
class Prober:
    """What taking a snapshot needs: the host, the redactor of secrets, the key to sign with (None: unsigned;
    or `key_loading`, the key still being loaded), the store to keep snapshots in (None: kept nowhere), the
    user's probe options and progress reporters."""

    host: Host
    redactor: Redactor
    key: KeyPair | None = None
    store: Store | None = None
    options: ProbeOptions = field(default_factory=ProbeOptions)
    progress: ProgressCallback | None = None
    hash_progress: HashProgress | None = None
    step_progress: Callable[[str], None] | None = None  # steps inside a long probe (a benchmark's runs)
    key_loading: Background[KeyPair] | None = None

    @classmethod
    def for_user(cls, host: Host, options: ProbeOptions | None = None, *, sign: bool = True,
                 store: Store | None = None, progress: ProgressCallback | None = None,
                 hash_progress: HashProgress | None = None,
                 step_progress: Callable[[str], None] | None = None) -> Prober:
        """A prober with the user's redaction secret and, when `sign`, signing key (both made on first use)."""
        return cls(host, Redactor(load_redaction_secret()), load_signing_key() if sign else None, store,
                   options or ProbeOptions(), progress, hash_progress, step_progress)

    def probes(self, only: Sequence[str] | None = None, skip: Sequence[str] | None = None,
               cheap_only: bool = False) -> list[Probe]:
        """Fresh instances of the probes to take: `only` (else the default set, the cheap one with
        `cheap_only`) minus `skip`, plus what the options ask for; unknown names are a UsageError."""
        chosen = select_probes(builtin_probes(self.redactor), list(only) if only else None,
                               list(skip) if skip else None, cheap_only=cheap_only, options=self.options)
        attach_hash_progress(chosen, self.hash_progress)
        for probe in chosen:
            probe.steps = self.step_progress
        return chosen

    def snapshot(self, probes: Sequence[Probe] | None = None, label: str | None = None,
                 origin: str | None = None) -> Snapshot:
        """Probe the host with `probes` (default: `self.probes()`) and return the snapshot, signed when the
        prober has a key and kept in its store when it has one.

        Probes marked `runs_alone` (benchmarks) run after the others have finished: sharing the CPUs with
        probes that hash files or start tools, they would measure that work too.
        """
        probes = self.probes() if probes is None else probes
        outcomes = run_probes(self.host, [p for p in probes if not p.runs_alone], self.options, self.progress)
        alone = [p for p in probes if p.runs_alone]
        if alone:
            outcomes.update(run_probes(self.host, alone, self.options, self.progress))
        # Report order follows the probe list, not completion order, so two snapshots read alike.
        probes_json = {probe.name: outcomes[probe.name].to_json() for probe in probes}
        # A label is free text a user typed (often a command line): it enters the signed document scrubbed.
        label = self.redactor.text(label) if label is not None else None
        document = new_document(self.host.describe(), probes_json, label=label,
                                origin=origin or ("replayed" if self.host.capabilities.recorded else "probed"))
        key = self.signing_key()
        if key is not None:
            document = sign_document(document, key)
        taken = Snapshot(document, source="<new>")
        if self.store is not None:
            self.store.add(taken)
        return taken

    def signing_key(self) -> KeyPair | None:
        """The key snapshots are signed with: `key`, else the one `key_loading` loads (waited for), else None."""
        if self.key is None and self.key_loading is not None:
            return self.key_loading.result()
        return self.key

    def record(self, directory: Path, probes: Sequence[Probe] | None = None) -> RecordResult:
        """Save what `probes` (default: `self.probes()`) read on the host, redacted, to the empty `directory`."""
        return record(directory, self.host, self.probes() if probes is None else probes, self.redactor,
                      self.options, self.progress)
