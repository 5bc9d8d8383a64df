"""The snapshot document: its model, canonical JSON, signing, the path language of its facts, the fact
table, and the user's keys. The lowest layer above `driftcheck.errors`: it imports nothing else of
driftcheck, so every other layer can read a snapshot.
"""
