"""Roots that need the relevance table: a library wheel's root is its library, a hashed file's root is its
distribution's or, for a file of no distribution, the library it is; causes of one root become one."""

from __future__ import annotations

import pytest

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.engine import merged_by_root
from driftcheck.analysis.explain.model import Explanation
from driftcheck.analysis.explain.relevance import relevance_table
from driftcheck.analysis.explain.roots import root_of
from driftcheck.analysis.rules import default_catalog
from driftcheck.snapshot.paths import parse_path


def _root(path: str, rule_id: str = "") -> str | None:
    change = Change(parse_path(path), "changed", "1", "2", "other")
    rule = default_catalog().rule(rule_id) if rule_id else next(r for r in default_catalog().rules if not r.merge)
    return root_of(rule, change, relevance_table())


@pytest.mark.parametrize(("path", "root"), [
    ("probes.packages.data.packages.nvidia-nccl-cu12.version", "library:NCCL"),
    ("probes.packages.data.packages.Flash_Attn.version", "package:flash-attn"),
    ('probes.kernels.data.files["nvidia-nccl-cu12:nvidia/nccl/lib/libnccl.so.2"].sha256', "library:NCCL"),
    ('probes.kernels.data.files["system:/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9"]', "library:cuDNN"),
    ('probes.kernels.data.files["system:/usr/lib/x86_64-linux-gnu/libcuda.so.1"]', "driver"),
    ('probes.kernels.data.files["system:/usr/lib/libfoo.so"]', None),
    ("probes.torch.data.cuda_wheels.nvidia-nccl-cu12.version", "library:NCCL"),
    ("probes.gpu.data.cuda_driver_version", "driver"),
])
def test_root_of_resolves_packages_and_files(path: str, root: str | None) -> None:
    assert _root(path) == root


def test_a_merging_rule_is_its_own_root() -> None:
    merging = next(rule for rule in default_catalog().rules if rule.merge)
    assert _root("probes.env.data.vars.X", merging.id) == f"rule:{merging.id}"


def _cause(rule: str, path: str, confidence: float) -> Explanation:
    return Explanation(rule, "driver_version", rule, (path,), confidence, "fix", root="driver")


def test_the_chosen_fact_speaks_for_its_root_before_a_more_confident_one() -> None:
    merged = merged_by_root([_cause("cuda-driver", "probes.gpu.data.cuda_driver_version", 0.9),
                             _cause("driver-version", "probes.gpu.data.driver_version", 0.6)])
    assert [(e.rule, e.merged, e.confidence) for e in merged] == [("driver-version", ("cuda-driver",), 0.9)]
