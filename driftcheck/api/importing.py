"""`import_reports`: a partial snapshot (origin `imported`) built from the text reports users paste."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from driftcheck.errors import UsageError
from driftcheck.reports.importer import import_texts, read_text
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

# The name standard input goes by among the files.
STDIN = "-"


def import_reports(files: Sequence[str | Path], *, label: str | None = None, sign: bool = False,
                   stdin: str | None = None, keep: bool = True, store: Store | None = None) -> Snapshot:
    """The snapshot of pasted reports, nvidia-smi outputs or whole issue bodies in `files` (`-` stands for
    `stdin`, the text read from standard input, once at most), combined as one machine's; signed with the
    user's key only with `sign` (a signature vouches for facts driftcheck did not observe) and kept in
    `store` (default: the user's) unless `keep=False`."""
    if sum(1 for path in files if str(path) == STDIN) > 1:
        raise UsageError("standard input (-) can be read once")
    texts = [("<stdin>", "stdin", _stdin(stdin)) if str(path) == STDIN else (str(path), Path(path).name,
                                                                               read_text(Path(path)))
             for path in files]
    snapshot = import_texts(texts, label=label, key=load_signing_key() if sign else None)
    if keep:
        (store or Store()).add(snapshot)
    return snapshot


def _stdin(text: str | None) -> str:
    if text is None:
        raise UsageError("- names standard input, and none was given")
    return text
