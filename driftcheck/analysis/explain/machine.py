"""What the machine has, for relevance: a knob only GPU software reads matters little where neither side
has a GPU (CUDA_VISIBLE_DEVICES and NCCL_P2P_DISABLE on a CPU host, beside OMP_NUM_THREADS)."""

from __future__ import annotations

from driftcheck.analysis.rules import Rule
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.model import Snapshot

# How much of its prior a GPU-only knob keeps where neither side has a GPU: below the noise floor for every
# rule of the catalog, so it is shown but never outranks what can matter there.
NO_GPU_WEIGHT = 0.1
NO_GPU_WHY = "neither side has a GPU: only GPU software reads this"


def has_gpu(snapshot: Snapshot) -> bool | None:
    """Whether `snapshot`'s machine has a GPU: False when its gpu probe found no driver or no GPU, None when
    it did not say (the probe was not taken, or failed)."""
    outcome = snapshot.document["probes"].get("gpu")
    if not isinstance(outcome, dict):
        return None
    if outcome.get("status") == "unavailable":
        return False
    data = snapshot.probe_data("gpu")
    if data is None:
        return None
    return bool(data.get("gpus")) or bool(data.get("gpu_count"))


def gpu_knob(rule: Rule, captures: dict[str, str]) -> bool:
    """Whether the change a rule claimed is a knob only GPU software reads (the rule says so, or the
    variable belongs to a `gpu_only` env family)."""
    return rule.gpu_only or ("var" in captures and name_catalog().gpu_only_variable(captures["var"]))


def machine_weight(rule: Rule, captures: dict[str, str], a: Snapshot, b: Snapshot) -> float:
    """The share of its prior a cause keeps on this machine: NO_GPU_WEIGHT for a GPU-only knob where both
    sides say they have no GPU, else 1."""
    if gpu_knob(rule, captures) and has_gpu(a) is False and has_gpu(b) is False:
        return NO_GPU_WEIGHT
    return 1.0
