"""driftcheck: signed snapshots of a GPU machine, and why its performance moved between two of them.

The library's face: `take_snapshot`, `load`, `diff`, `explain`. The CLI (`driftcheck.cli`) is a thin layer on it.
"""

__version__ = "0.1.0"

from driftcheck.snapshot.diff import diff_snapshots as diff  # noqa: E402
from driftcheck.snapshot.explain import explain  # noqa: E402
from driftcheck.snapshot.resolve import resolve_snapshot as load  # noqa: E402
from driftcheck.take import take_snapshot  # noqa: E402

__all__ = ["__version__", "diff", "explain", "load", "take_snapshot"]
