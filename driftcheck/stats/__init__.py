"""Statistics, pure: summaries of repeated measurements (`summary`) and the tests behind every verdict
(`comparison`: paired trials, pooled checks against the past, control normalisation; `sessions`: the
between-session spread; `prediction`: whether one host lies outside the others of a fleet).

Nothing here does I/O or knows a snapshot, a store or a process; every layer that judges figures reads these.
"""

# Rounds of a trial unless the user says otherwise (`try`, `explain --confirm`, `bisect`, TrialPlan). Here, not in
# `comparison`, so that a command line declaring the option (explain's, on every call) does not import the tests.
DEFAULT_MAX_PAIRS = 24
