"""One change, all its causes: a set-valued change goes to every rule that explains a member, a rule whose
fix would change nothing does not rank, and a reboot is the context of the facts it reset, not a rival.

Each case is the real base snapshot of tests/data/pairs (base.json) with one edit, in the shapes the probes
write (docs/data-shapes.md).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.model import Explained
from driftcheck.snapshot.model import Snapshot
from tests.between import steady_between

BASE = Path(__file__).resolve().parent.parent / "data" / "pairs" / "base.json"
G0 = "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"
Doc = dict[str, Any]


def _pair(prepare: Callable[[Doc], None], edit: Callable[[Doc], None]) -> Explained:
    base = json.loads(BASE.read_text("utf-8"))
    prepare(base)
    a, b = copy.deepcopy(base), copy.deepcopy(base)
    edit(b)
    return explain(diff_snapshots(Snapshot(a, source="a"), Snapshot(b, source="b")))


def _gpu(doc: Doc) -> Doc:
    return doc["probes"]["gpu"]["data"]["gpus"][G0]


def _system(doc: Doc) -> Doc:
    return doc["probes"]["system"]["data"]


def _limit_140(doc: Doc) -> None:
    _gpu(doc)["power"].update(limit_w=140.0, enforced_limit_w=140.0)
    _gpu(doc)["clock_event_reasons"] = []


def test_a_throttle_set_that_gained_two_reasons_has_both_causes() -> None:
    # The limit is 140 W on both sides: raising it "to 140" changes nothing; the heat is the cause.
    result = _pair(_limit_140, lambda b: _gpu(b).update(clock_event_reasons=["sw_power_cap", "hw_thermal_slowdown"]))
    ranked = [e.rule for e in result.explanations]
    assert ranked[0] == "gpu-hw-thermal-slowdown", ranked
    assert "gpu-power-cap-throttle" not in ranked
    note = next(n for n in result.notes if n.rule == "gpu-power-cap-throttle")
    assert "would change nothing" in note.title


def test_the_power_cap_ranks_when_its_fix_restores_a_higher_limit() -> None:
    def lowered(b: Doc) -> None:
        _gpu(b)["power"].update(limit_w=100.0, enforced_limit_w=100.0)
        _gpu(b)["clock_event_reasons"] = ["sw_power_cap", "sw_thermal_slowdown"]

    result = _pair(_limit_140, lowered)
    ranked = [e.rule for e in result.explanations]
    # One change of the set, two causes of it, besides the limit itself.
    assert {"gpu-power-cap-throttle", "gpu-sw-thermal-slowdown", "gpu-power-limit-lowered"} <= set(ranked), ranked


def _pool(pages: int) -> Callable[[Doc], None]:
    def edit(doc: Doc) -> None:
        _system(doc)["hugepages"] = {"default_size_kib": 2048, "sizes": {"2048kB": {"pages": pages, "free": pages}}}
    return edit


def test_a_reboot_is_the_context_of_the_huge_page_pool_it_reset() -> None:
    def rebooted(b: Doc) -> None:
        _pool(0)(b)
        _system(b)["boot_id"] = "3f1d6a0e-7c55-4b7e-9d8e-5a2f0c9b1e44"

    result = _pair(_pool(1024), rebooted)
    ranked = [e.rule for e in result.explanations]
    assert ranked and ranked[0] == "hugepages", ranked
    assert "rebooted" not in ranked
    assert "rebooted" in [n.rule for n in result.notes]
    assert "reset by the reboot" in result.explanations[0].title
    assert result.explanations[0].fix.startswith("echo 1024 | sudo tee /sys/kernel/mm/hugepages/hugepages-2048kB/")


def test_a_reboot_alone_still_says_so_as_context_not_as_a_cause() -> None:
    # A reboot where nothing else changed is the null corpus's case: `check` must pass, the reader still learns it.
    result = _pair(lambda doc: None, lambda b: _system(b).update(boot_id="3f1d6a0e-7c55-4b7e-9d8e-5a2f0c9b1e44"))
    assert result.explanations == []
    assert [n.rule for n in result.notes] == ["rebooted"] and result.rebooted


# --- a framework and the library it bundles both moved ------------------------------------------------

INCIDENTS = Path(__file__).resolve().parent.parent / "data" / "incidents"
_SCALED = ("median", "p10", "p90", "mad", "ci_low", "ci_high", "min", "max")


def _scaled(value: Any, factor: float) -> Any:
    """A benchmark result with every throughput figure scaled by `factor` (its spread kept)."""
    if isinstance(value, dict):
        return {k: (v * factor if k in _SCALED and isinstance(v, (int, float)) else
                    [x * factor for x in v] if k == "samples" else _scaled(v, factor)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scaled(item, factor) for item in value]
    return value


def test_the_bundled_library_ranks_by_its_own_benchmark_above_the_framework() -> None:
    # torch 2.1.2 -> 2.2.0 brought NCCL 2.18.1 -> 2.19.3 (pytorch/pytorch#117748): the all-reduce fell and,
    # as it does under tensor parallelism, the end-to-end decode with it. The decode fall is NCCL's too.
    folder = INCIDENTS / "hard-nccl-2.19-nvlstree-vs-torch"
    a, b = (json.loads((folder / name).read_text("utf-8")) for name in ("a.json", "b.json"))
    results = b["probes"]["bench"]["data"]["results"]
    results["decode_graph_tok_per_s"] = _scaled(results["decode_graph_tok_per_s"], 0.8)
    # On a host whose sessions were measured not to differ (tests/between.py): this test is of ranking by the
    # verdicts, not of the between-session spread a verdict against the past now counts.
    b["probes"]["bench"]["data"]["between_sessions"] = steady_between(*results)
    result = explain(diff_snapshots(Snapshot(a, source="a"), Snapshot(b, source="b")))
    assert {row["name"] for row in result.bench if row.get("direction") == "slower"} >= {
        "decode_graph_tok_per_s", "allreduce_256mib_8gpu_busbw_gbps"}
    first = result.explanations[0]
    assert first.root == "library:NCCL", [(e.title, e.confidence) for e in result.explanations[:3]]
    torch = next(e for e in result.explanations if e.root == "package:torch")
    assert torch.confidence < first.confidence
