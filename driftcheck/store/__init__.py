"""The local store: one SQLite file holding snapshots (as compressed deltas), named baselines, run
records and the hash cache, its schema owned by `driftcheck.store.database`, and its garbage collector.
It knows the document (`driftcheck.snapshot`) and nothing above it.
"""
