"""`explain` on two snapshots of a server whose settings changed (recorded SGLang and vLLM answers, replayed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.servers import SERVERS_DATA, recorded_routes

Replay = Callable[[dict[str, Any]], str]


def _sglang_info(**changes: Any) -> dict[str, Any]:
    info = json.loads((SERVERS_DATA / "sglang-docs-native-api" / "get_server_info.json").read_text())
    info.update(changes)
    # A rank repeats the arguments it was given.
    info["internal_states"][0].update({k: v for k, v in changes.items() if k in info["internal_states"][0]})
    return info


def _explain(cli: Any, replay_server: Replay, scenario: str, before: dict[str, Any], after: dict[str, Any],
             ) -> dict[str, Any]:
    for label, overrides in (("A", before), ("B", after)):
        url = replay_server(recorded_routes(scenario, **overrides))
        done = cli("snapshot", "--probe", "python", "--server", url, "--label", label, "-q")
        assert done.returncode == 0, done.stderr
    done = cli("explain", "@prev", "@latest", "--format", "json")
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def test_sglang_settings_are_ranked_with_the_flag_that_restores_a(cli: Any, replay_server: Replay) -> None:
    before = _sglang_info(cuda_graph_max_bs=160, speculative_algorithm="EAGLE", speculative_num_steps=3,
                          mem_fraction_static=0.88)
    after = _sglang_info(port=30001, random_seed=1234)  # as recorded: no speculation, max bs 4, 0.836
    report = _explain(cli, replay_server, "sglang-docs-native-api", {"get_server_info.json": before},
                      {"get_server_info.json": after})
    fixes = {e["rule"]: e["fix"] for e in report["explanations"]}
    # 160 -> 4 is a lowered maximum: SGLang's tuning guide gives it a direction (rules.yaml)
    assert fixes["server-cuda-graph-max-bs-lowered"] == "restart the server with --cuda-graph-max-bs 160"
    assert fixes["server-speculative-algorithm"].startswith("restart the server with --speculative-algorithm EAGLE")
    # Speculative decoding turned off is one change: its steps are evidence of the algorithm's cause, not a
    # second explanation (issue 29: "speculative decoding turned on" was told once per speculative argument).
    speculative = next(e for e in report["explanations"] if e["rule"] == "server-speculative-algorithm")
    assert "probes.server.data.server_args.speculative_num_steps" in speculative["evidence"]
    assert "server-speculative-num-steps" not in fixes
    assert fixes["server-mem-fraction-lowered"] == "restart the server with --mem-fraction-static 0.88"
    ranked = [e["rule"] for e in report["explanations"]]
    assert ranked.index("server-speculative-algorithm") < ranked.index("server-mem-fraction-lowered")
    assert all(rule.startswith("server-") for rule in ranked), ranked  # nothing left to the catch-all
    # Where it listened and the seed it drew are not causes.
    paths = {c["path"] for c in report["changes"]}
    assert "probes.server.data.server_args.port" not in paths and "probes.server.data.url" not in paths


def test_switches_and_defaults_read_the_right_way_round(cli: Any, replay_server: Replay) -> None:
    before = _sglang_info(disable_cuda_graph=False, attention_backend=None, quantization=None, tp_size=2)
    after = _sglang_info(disable_cuda_graph=True, attention_backend="triton", quantization="fp8", tp_size=1)
    report = _explain(cli, replay_server, "sglang-docs-native-api", {"get_server_info.json": before},
                      {"get_server_info.json": after})
    by_rule = {e["rule"]: e for e in report["explanations"]}
    assert by_rule["server-cuda-graph-disabled"]["fix"] == "restart the server without --disable-cuda-graph"
    assert by_rule["server-quantization-none-on-a"]["fix"] == "restart the server without --quantization"
    assert by_rule["server-tp-size"]["fix"] == "restart the server with --tp-size 2"
    assert "A let the server choose" in by_rule["server-attention-backend-default-on-a"]["fix"]


def test_vllm_cache_config(cli: Any, replay_server: Replay) -> None:
    text = (SERVERS_DATA / "vllm-pr3100" / "metrics.txt").read_text()
    routes_a = recorded_routes("vllm-pr3100")
    routes_b = {**routes_a, "/metrics": (200, "text/plain", text.replace('gpu_memory_utilization="0.9"',
                                                                          'gpu_memory_utilization="0.8"')
                                         .replace('num_gpu_blocks="24188"', 'num_gpu_blocks="19000"').encode())}
    for label, routes in (("A", routes_a), ("B", routes_b)):
        done = cli("snapshot", "--probe", "python", "--server", replay_server(routes), "--label", label, "-q")
        assert done.returncode == 0, done.stderr
    report = json.loads(cli("explain", "@prev", "@latest", "--format", "json").stdout)
    fixes = {e["rule"]: e["fix"] for e in report["explanations"]}
    assert fixes["server-vllm-gauge-memory-lowered"] == "restart the server with --gpu-memory-utilization 0.9"
    assert "server-vllm-gpu-blocks" in fixes


def test_argument_blocks_join_before_the_catch_all() -> None:
    from driftcheck.analysis.rules import default_catalog, parse_catalog
    from driftcheck.errors import RuleCatalogError

    ids = [rule.id for rule in default_catalog().rules]
    assert ids[-1] == "other-change" and ids.index("server-argument") < ids.index("other-change")
    base = {"rules": [{"id": "all", "category": "other", "inherit_category": True, "match": "**", "title": "t",
                       "fix": "f"}]}
    extra = [{"id": "x", "category": "other", "match": "probes.x", "title": "t", "fix": "f"}]
    assert [r.id for r in parse_catalog({**base, "x_rules": extra}).rules] == ["x", "all"]
    try:
        parse_catalog({**base, "x_rules": {"id": "x"}})
    except RuleCatalogError as exc:
        assert "`x_rules` is a list of rules" in str(exc)
    else:
        raise AssertionError("a block that is not a list must be refused")
