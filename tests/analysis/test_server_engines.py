"""Today's engines explained: SGLang 0.5.23's /server_info as its own code computes it
(tests/data/servers/sglang-0.5.23, make_server_info.py) and vLLM 0.34.0 read from its launch line and its
dev-mode /server_info; every fix checked against the flag table of the release B runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.rules import default_catalog
from driftcheck.probes.redact import Redactor
from driftcheck.probes.server import ServerProbe
from driftcheck.serving.flag_tables import table_for
from driftcheck.snapshot.model import read_snapshot_file
from tests.servers import SERVERS_DATA, server_snapshot_pair

BASE = json.loads((SERVERS_DATA.parent / "pairs" / "base.json").read_text("utf-8"))
SGLANG = SERVERS_DATA / "sglang-0.5.23"


def _reply(body: Any, status: int = 200) -> dict[str, Any]:
    text = body if isinstance(body, str) else json.dumps(body)
    return {"status": status, "content_type": "application/json", "server": "uvicorn", "body": text}


def _launch(argv: list[str]) -> dict[str, Any]:
    return {"found": True, "why": None, "cmdline": argv, "flags": {}}


def _server_data(replies: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    probe = ServerProbe(Redactor(b"test-secret"))
    return probe.parse({"url": "http://127.0.0.1:30000", "replies": replies, "launch": _launch(argv)})


def _sglang(name: str, **settings: Any) -> dict[str, Any]:
    """A recorded start of SGLang 0.5.23, with `settings` given as flags: on its launch line and in what it
    resolved."""
    argv = (SGLANG / f"{name}.argv").read_text().split()
    info = json.loads((SGLANG / f"{name}.json").read_text())
    table = table_for("sglang", "0.5.23")
    assert table is not None
    for field, value in settings.items():
        spec = table.spec(field)
        assert spec is not None
        info[field] = value
        argv += [spec.flag, str(value)]
    return _server_data({"/server_info": _reply(info)}, argv)


def _explained(tmp_path: Path, a: dict[str, Any], b: dict[str, Any]) -> Any:
    return explain(diff_snapshots(*server_snapshot_pair(tmp_path, a, b)))




def _accepted(engine: str, version: str, fix: str, field: str, value: Any) -> bool:
    """The fix's restoring change is the one B's release's table gives for A's value, and that change parses."""
    table = table_for(engine, version)
    assert table is not None
    restoration = table.restoring(field, value)
    assert restoration is not None and fix.endswith(restoration.text), (fix, restoration)
    if restoration.add:
        namespace, unknown = table.parser().parse_known_args(list(restoration.add))
        return not unknown and getattr(namespace, field) == value
    return table.spec(field) is not None and table.spec(field).default == value  # type: ignore[union-attr]


def test_two_identical_sglang_starts_have_no_cause(tmp_path: Path) -> None:
    a, b = _sglang("start-a"), _sglang("start-b")
    assert a["context"]["startup_time"]["load_weight"] == 12.5 and b["context"]["startup_time"]["load_weight"] == 19
    assert a["launch"]["flags"] == {"model_path": "Qwen/Qwen3-8B", "tp_size": 4}
    result = _explained(tmp_path, a, b)
    assert result.explanations == [] and result.notes == []  # exit 0: no relevant difference
    diff = diff_snapshots(*server_snapshot_pair(tmp_path, a, b))
    assert diff.changes == []
    assert "probes.server.data.context.startup_time.load_weight" in {change.path for change in diff.readings}


def test_sglang_decode_cuda_graphs_turned_off_ranks_first_with_a_fix_0_5_23_accepts(tmp_path: Path) -> None:
    result = _explained(tmp_path, _sglang("start-a"), _sglang("decode-cuda-graph-off"))
    top = result.explanations[0]
    assert top.rule == "server-phase-cuda-graph-disabled" and top.confidence >= 0.8
    assert top.fix == "restart the server without --disable-decode-cuda-graph"
    assert _accepted("sglang", "0.5.23", top.fix, "disable_decode_cuda_graph", False)
    # the flag on the launch line and the argument it set are one change, told once
    assert len(result.explanations) == 1
    assert set(top.evidence) == {"probes.server.data.server_args.disable_decode_cuda_graph",
                                 "probes.server.data.launch.flags.disable_decode_cuda_graph"}


def test_sglang_speculative_attention_mode_ranks_first(tmp_path: Path) -> None:
    result = _explained(tmp_path, _sglang("speculative-prefill"), _sglang("speculative-decode"))
    top = result.explanations[0]
    assert top.rule == "server-speculative-shape"
    assert top.fix == "restart the server with --speculative-attention-mode prefill"
    assert _accepted("sglang", "0.5.23", top.fix, "speculative_attention_mode", "prefill")
    assert len(result.explanations) == 1


def test_speculative_decoding_turned_on_is_told_once(tmp_path: Path) -> None:
    result = _explained(tmp_path, _sglang("start-a"), _sglang("speculative-prefill"))
    speculative = [e for e in result.explanations if "speculative" in e.rule]
    assert [e.rule for e in speculative] == ["server-speculative-off-on-a"], [e.to_json() for e in speculative]
    assert "--speculative-num-steps none" not in speculative[0].fix
    assert speculative[0].fix.startswith("restart the server without --speculative-algorithm")


# vLLM 0.34.0: `/version` and `/v1/models` (owned_by vllm) answer; its launch line names the settings.
def _vllm(argv: list[str], dev_config: dict[str, Any] | None = None) -> dict[str, Any]:
    replies = {"/v1/models": _reply({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm",
                                                                 "root": "m", "max_model_len": 8192}]}),
               "/version": _reply({"version": "0.34.0"})}
    if dev_config is not None:
        # vllm/entrypoints/serve/dev/server_info/api_router.py (0.34.0): text by default, JSON sections on request
        replies["/server_info"] = _reply({"vllm_config": "model='m', ...", "vllm_env": {}, "system_env": {}})
        replies["/server_info?config_format=json"] = _reply({"vllm_config": dev_config, "vllm_env": {},
                                                             "system_env": {}})
    return _server_data(replies, argv)


def test_vllm_short_tensor_parallel_flag_ranks_first(tmp_path: Path) -> None:
    a, b = _vllm(["vllm", "serve", "m", "-tp", "4"]), _vllm(["vllm", "serve", "m", "-tp", "8"])
    assert a["engine"] == "vllm" and a["launch"]["flags"] == {"tensor_parallel_size": 4}
    result = _explained(tmp_path, a, b)
    top = result.explanations[0]
    assert top.fix == "restart the server with --tensor-parallel-size 4"
    assert _accepted("vllm", "0.34.0", top.fix, "tensor_parallel_size", 4)


def test_vllm_in_dev_mode_is_vllm_and_its_kv_cache_dtype_ranks_first(tmp_path: Path) -> None:
    parallel = {"tensor_parallel_size": 1}
    a = _vllm(["vllm", "serve", "m"], {"cache_config": {"cache_dtype": "auto", "block_size": 16},
                                       "parallel_config": parallel})
    b = _vllm(["vllm", "serve", "m", "--kv-cache-dtype", "fp8"],
              {"cache_config": {"cache_dtype": "fp8", "block_size": 16}, "parallel_config": parallel})
    assert a["engine"] == "vllm"  # /server_info answered, and what it holds is vLLM's
    assert a["server_args"]["kv_cache_dtype"] == "auto" and a["server_args"]["block_size"] == 16
    result = _explained(tmp_path, a, b)
    top = result.explanations[0]
    assert top.rule == "server-kv-cache-dtype"
    assert top.fix == "restart the server with --kv-cache-dtype auto"
    assert _accepted("vllm", "0.34.0", top.fix, "kv_cache_dtype", "auto")
    assert len(result.explanations) == 1  # the flag and the setting it made: one change


# Directions claimed from the engines' own tuning guides (rules.yaml cites them): a lowered KV pool or batch cap
# is slower; a raised one stays undirected.
def _direction(rule_id: str) -> str:
    return default_catalog().rule(rule_id).direction


def test_sglang_memory_fraction_lowered_is_slower_and_raised_is_undirected(tmp_path: Path) -> None:
    lowered = _explained(tmp_path, _sglang("start-a", mem_fraction_static=0.85),
                         _sglang("start-b", mem_fraction_static=0.7))
    top = lowered.explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-mem-fraction-lowered", "slower")
    assert top.fix == "restart the server with --mem-fraction-static 0.85"
    assert _accepted("sglang", "0.5.23", top.fix, "mem_fraction_static", 0.85)
    raised = _explained(tmp_path, _sglang("start-a", mem_fraction_static=0.7),
                        _sglang("start-b", mem_fraction_static=0.85))
    assert raised.explanations[0].rule == "server-mem-fraction" and _direction("server-mem-fraction") == "either"


def test_sglang_batch_caps_lowered_are_slower(tmp_path: Path) -> None:
    for field, before, after in (("max_running_requests", 256, 64), ("max_total_tokens", 400000, 100000)):
        result = _explained(tmp_path, _sglang("start-a", **{field: before}),
                            _sglang("start-b", **{field: after}))
        top = result.explanations[0]
        assert _direction(top.rule) == "slower" and top.rule.endswith("-lowered"), (field, top.rule)
        assert _accepted("sglang", "0.5.23", top.fix, field, before)


def test_vllm_memory_utilization_lowered_is_slower(tmp_path: Path) -> None:
    a = _vllm(["vllm", "serve", "m", "--gpu-memory-utilization", "0.9"])
    b = _vllm(["vllm", "serve", "m", "--gpu-memory-utilization", "0.6"])
    top = _explained(tmp_path, a, b).explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-vllm-memory-lowered", "slower")
    assert top.fix == "restart the server with --gpu-memory-utilization 0.9"
    assert _accepted("vllm", "0.34.0", top.fix, "gpu_memory_utilization", 0.9)


def test_vllm_async_scheduling_turned_off_is_slower(tmp_path: Path) -> None:
    a = _vllm(["vllm", "serve", "m", "--async-scheduling"])
    b = _vllm(["vllm", "serve", "m", "--no-async-scheduling"])
    top = _explained(tmp_path, a, b).explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-vllm-async-scheduling-off", "slower")
    assert _accepted("vllm", "0.34.0", top.fix, "async_scheduling", True)


# Directions from the engines' own words, added for issue 29 item 2 (rules.yaml quotes each source): one-sided,
# and only where the words give one.
def _sglang_switch(name: str, field: str, on: bool) -> dict[str, Any]:
    """A start of SGLang 0.5.23 with the boolean `field` given as its flag (on) or left off."""
    argv = (SGLANG / f"{name}.argv").read_text().split()
    info = json.loads((SGLANG / f"{name}.json").read_text())
    table = table_for("sglang", "0.5.23")
    assert table is not None and table.spec(field) is not None
    info[field] = on
    if on:
        argv.append(table.spec(field).flag)  # type: ignore[union-attr]
    return _server_data({"/server_info": _reply(info)}, argv)


def test_sglang_decode_cuda_graph_max_bs_lowered_is_slower_and_raised_is_undirected(tmp_path: Path) -> None:
    lowered = _explained(tmp_path, _sglang("start-a", cuda_graph_max_bs_decode=256),
                         _sglang("start-b", cuda_graph_max_bs_decode=32))
    top = lowered.explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-cuda-graph-max-bs-lowered", "slower")
    assert "above 32 run without CUDA graphs" in top.title
    assert _accepted("sglang", "0.5.23", top.fix, "cuda_graph_max_bs_decode", 256)
    assert len(lowered.explanations) == 1  # the flag and the argument it set: one change
    raised = _explained(tmp_path, _sglang("start-a", cuda_graph_max_bs_decode=32),
                        _sglang("start-b", cuda_graph_max_bs_decode=256))
    assert raised.explanations[0].rule == "server-phase-cuda-graph-setting"
    assert _direction("server-phase-cuda-graph-setting") == "either"
    # the prefill phase's maximum: the guide speaks of decode batches only
    prefill = _explained(tmp_path, _sglang("start-a", cuda_graph_max_bs_prefill=256),
                         _sglang("start-b", cuda_graph_max_bs_prefill=32))
    assert prefill.explanations[0].rule == "server-phase-cuda-graph-setting"


def test_sglang_chunked_prefill_lowered_is_slower_but_turned_off_is_undirected(tmp_path: Path) -> None:
    lowered = _explained(tmp_path, _sglang("start-a", chunked_prefill_size=8192),
                         _sglang("start-b", chunked_prefill_size=2048))
    top = lowered.explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-chunked-prefill-lowered", "slower")
    assert top.title.endswith("slower prefill of long prompts")
    assert _accepted("sglang", "0.5.23", top.fix, "chunked_prefill_size", 8192)
    # -1 is "disabling chunked prefill", not a smaller chunk: the guide gives no direction for it
    off = _explained(tmp_path, _sglang("start-a", chunked_prefill_size=8192),
                     _sglang("start-b", chunked_prefill_size=-1))
    assert off.explanations[0].rule != "server-chunked-prefill-lowered"
    assert _direction(off.explanations[0].rule) == "either"


def test_sglang_symmetric_memory_turned_off_is_slower_and_turned_on_is_undirected(tmp_path: Path) -> None:
    off = _explained(tmp_path, _sglang_switch("start-a", "enable_symm_mem", True),
                     _sglang_switch("start-b", "enable_symm_mem", False))
    top = off.explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-symm-mem-off", "slower")
    assert top.fix == "restart the server with --enable-symm-mem"
    assert _accepted("sglang", "0.5.23", top.fix, "enable_symm_mem", True)
    on = _explained(tmp_path, _sglang_switch("start-a", "enable_symm_mem", False),
                    _sglang_switch("start-b", "enable_symm_mem", True))
    assert _direction(on.explanations[0].rule) == "either"


def test_vllm_chunked_prefill_turned_off_is_slower(tmp_path: Path) -> None:
    a = _vllm(["vllm", "serve", "m", "--enable-chunked-prefill"])
    b = _vllm(["vllm", "serve", "m", "--disable-chunked-prefill"])  # 0.34.0's spelling (0.22.0: --no-enable-...)
    top = _explained(tmp_path, a, b).explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-vllm-chunked-prefill-off", "slower")
    assert top.fix == "restart the server with --enable-chunked-prefill"
    assert _accepted("vllm", "0.34.0", top.fix, "enable_chunked_prefill", True)
    # V1's default is on ("always enabled by default"): the flag only given on B is the same change, undone by
    # dropping it
    top = _explained(tmp_path, _vllm(["vllm", "serve", "m"]), b).explanations[0]
    assert top.rule == "server-vllm-chunked-prefill-off"
    assert "without" in top.fix and "--disable-chunked-prefill" in top.fix


def test_vllm_batched_tokens_lowered_stays_undirected(tmp_path: Path) -> None:
    """vLLM's guide: smaller budgets give better inter-token latency, larger ones better TTFT: no one direction."""
    a = _vllm(["vllm", "serve", "m", "--max-num-batched-tokens", "16384"])
    b = _vllm(["vllm", "serve", "m", "--max-num-batched-tokens", "2048"])
    top = _explained(tmp_path, a, b).explanations[0]
    assert _direction(top.rule) == "either", top.rule
    assert _accepted("vllm", "0.34.0", top.fix, "max_num_batched_tokens", 16384)


def test_vllm_optimization_level_lowered_is_restored_with_a_level_the_release_takes(tmp_path: Path) -> None:
    """`-O3` is the text "3" to vLLM's parser and the level 3 to its configuration: the fix names the level, and
    the release's table (which knows both) reads it back as 3. A server that reports the level (dev mode: 2,
    the default) is restored the same way."""
    top = _explained(tmp_path, _vllm(["vllm", "serve", "m", "-O3"]), _vllm(["vllm", "serve", "m", "-O", "0"])) \
        .explanations[0]
    assert (top.rule, _direction(top.rule)) == ("server-vllm-optimization-lowered", "slower")
    assert top.fix == "restart the server with --optimization-level 3"
    assert _accepted("vllm", "0.34.0", top.fix, "optimization_level", 3)
    pair = SERVERS_DATA.parent / "pairs" / "server-vllm-optimization-lowered"
    a, b = (read_snapshot_file(pair / f"{side}.json") for side in ("a", "b"))
    top = explain(diff_snapshots(a, b)).explanations[0]
    assert top.fix == "restart the server with --optimization-level 2"
    assert _accepted("vllm", "0.34.0", top.fix, "optimization_level", 2)


def test_vllm_dev_mode_optimization_level_is_a_setting_and_its_instance_id_is_not(tmp_path: Path) -> None:
    """VllmConfig's own fields sit at the top of dev-mode /server_info (PydanticVllmConfig.dump_python of
    0.34.0): the optimization level is an argument's (--optimization-level), the instance id is drawn per start."""
    a = _vllm(["vllm", "serve", "m"], {"optimization_level": 2, "instance_id": "a1b2", "cache_config": {}})
    b = _vllm(["vllm", "serve", "m"], {"optimization_level": 0, "instance_id": "c3d4", "cache_config": {}})
    assert a["server_args"] == {"optimization_level": 2}
    top = _explained(tmp_path, a, b).explanations[0]
    # the same launch line on both sides: the engine chose another level, a default that changed
    assert (top.rule, top.fix) == ("server-default-changed",
                                  "set it as A resolved it: restart the server with --optimization-level 2")
    assert _accepted("vllm", "0.34.0", top.fix, "optimization_level", 2)
