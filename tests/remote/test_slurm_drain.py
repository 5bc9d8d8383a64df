"""The drain reason and the reading of a node's state, without Slurm (the real one: test_slurm_health.py).

The states are those `sinfo --format %T` printed for the test cluster's node (Slurm 22.05.8: `idle`, `drained`,
`idle*` after a resume while the node had not answered yet; with an `srun sleep` running, `mixed`, and
`draining` once drained)."""

from __future__ import annotations

import pytest

from driftcheck.remote.slurm_drain import REASON_MAX_CHARS, NodeState, drain_reason


def test_the_reason_is_one_line_with_driftchecks_prefix_and_bounded() -> None:
    assert drain_reason("OMP_NUM_THREADS unset -> 1") == "driftcheck: OMP_NUM_THREADS unset -> 1"
    assert drain_reason("two\nlines\tand  tabs") == "driftcheck: two lines and tabs"
    long = drain_reason("torch 2.13.0 -> 2.14.0 " * 20)
    assert len(long) == REASON_MAX_CHARS and long.endswith("...")


@pytest.mark.parametrize(("state", "reason", "drained", "ours"), [
    ("idle", "", False, False),
    ("idle*", "", False, False),
    ("mixed", "", False, False),
    ("drained", "driftcheck: OMP_NUM_THREADS unset -> 1", True, True),
    ("draining", "driftcheck: NCCL_P2P_DISABLE=1 set", True, True),
    ("drained", "disk replacement", True, False),
    # a reason that only mentions driftcheck is someone else's
    ("drained", "waiting for driftcheck: see ticket", True, False),
    # an idle node keeps no drain of ours even when an old reason is shown
    ("idle", "driftcheck: old", False, False),
])
def test_only_a_drain_with_driftchecks_prefix_is_ours(state: str, reason: str, drained: bool, ours: bool) -> None:
    node = NodeState("gpu01", state, reason)
    assert node.drained is drained and node.drained_by_driftcheck is ours
