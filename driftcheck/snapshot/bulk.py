"""Bulk work on large documents without the cyclic garbage collector.

Reading, diffing and explaining two snapshots allocates millions of small objects (one dict or tuple per
fact) and frees none of them in cycles: JSON data has no reference cycles. The collector still scans the
whole heap at every full collection, and full collections come more often as the heap grows, so with it
running the time of `diff` grew faster than the number of facts (100,000 environment variables took
55 s, 1,000,000 did not end in 15 minutes). Pausing it for the duration keeps the work linear;
reference counting still frees everything, and the previous state is restored afterwards.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector off (re-entrant: an inner pause leaves an outer one alone)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def without_gc(function: Callable[P, R]) -> Callable[P, R]:
    """Decorate a bulk function of acyclic data so it runs under `paused_gc`."""
    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused_gc():
            return function(*args, **kwargs)
    return wrapper
