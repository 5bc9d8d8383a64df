"""The snapshot document: model, canonical JSON, signing, store, resolution, diff.

Calling the package, `driftcheck.snapshot(label=...)`, takes a snapshot: see `driftcheck.api.snapshot`.
"""

from driftcheck.callable_module import make_callable

make_callable(__name__, "driftcheck.api", "snapshot")
