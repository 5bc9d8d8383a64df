"""Which options of a trial (a confirmation's interleaved runs) can go together, and their defaults.

Apart from `confirm`, whose trial runner, run store and system knobs `explain` would otherwise import on
every call just to check its options before any work.
"""

from __future__ import annotations

from driftcheck.errors import OptionError, UsageError

# How long a trial waits for the server it started to answer at its `ready` URL, by default.
DEFAULT_READY_TIMEOUT_S = 120.0


def check_trial_options(server_command: bool, ready: bool, wall: bool, figure: bool, max_pairs: int) -> None:
    """Refuse trial options that cannot go together: a server without the URL that says it is up (or the
    reverse), wall time with a figure of the output, fewer than 2 rounds."""
    if server_command != ready:
        raise UsageError("--server-cmd and --ready go together: the server, and the URL that answers once it is up")
    if wall and figure:
        raise UsageError("--wall compares wall time; leave out --metric/--figure")
    if max_pairs < 2:
        raise OptionError("max_pairs", str(max_pairs), "a trial needs at least 2 rounds")
