"""Coverage of the serving engines' throughput/latency settings by the explain rules, per pinned release.

For each release whose flag table driftcheck ships (driftcheck/serving/engine_flags/), and each setting of
issue 29's two lists (SGLang's and vLLM's; the field names as that release's parser spells them), it prints:
- present: the release's parser has the field;
- rule: a rule of driftcheck/analysis/rules.yaml claims a change of it (`server_args.<field>`), other than the
  catch-all;
- direction: some rule claims a change of it as `slower` or `faster` (under its conditions: a lowered memory
  fraction, a CUDA graph turned off); `either` where the engine's own words give no direction, or the effect
  depends on the workload (a parallel size, a schedule policy, a quantization);
- fix accepted: the restoring change of a sample value (its default, else its first choice) parses on the
  release's own parser table and sets the field to that value.
It lists the fields without a direction by name, each with why none is claimed (WHY_NO_DIRECTION: what the
engine's own help or guide says of it, with its source), so the gap is plain and a missing reason shows.

Run from the repository root: `python benchmarks/server_coverage.py [--json]`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftcheck.analysis.rules import Catalog, default_catalog  # noqa: E402
from driftcheck.serving.flag_tables import FlagTable, load_table, shipped_versions  # noqa: E402
from driftcheck.snapshot.jsontypes import JSONValue  # noqa: E402
from driftcheck.snapshot.paths import parse_path  # noqa: E402

# Issue 29's lists, as the releases' parsers name the fields (a release lacks what it does not have yet: SGLang
# 0.5.9 has no per-phase CUDA-graph settings, 0.5.23 no longer the unphased ones).
SGLANG = (
    "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
    "speculative_attention_mode", "speculative_draft_model_path", "speculative_draft_attention_backend",
    "cuda_graph_max_bs", "cuda_graph_bs", "disable_cuda_graph", "cuda_graph_max_bs_decode",
    "cuda_graph_max_bs_prefill", "cuda_graph_bs_decode", "cuda_graph_bs_prefill", "cuda_graph_backend_decode",
    "cuda_graph_backend_prefill", "disable_decode_cuda_graph", "disable_prefill_cuda_graph", "enable_torch_compile",
    "attention_backend", "prefill_attention_backend", "decode_attention_backend", "sampling_backend",
    "moe_runner_backend", "moe_a2a_backend", "deepep_mode", "fp8_gemm_runner_backend", "fp4_gemm_runner_backend",
    "mem_fraction_static", "chunked_prefill_size", "max_running_requests", "max_total_tokens", "schedule_policy",
    "schedule_conservativeness", "page_size", "disable_radix_cache", "disable_overlap_schedule",
    "enable_two_batch_overlap", "tp_size", "dp_size", "ep_size", "pp_size", "enable_dp_attention", "quantization",
    "kv_cache_dtype", "dtype", "disable_custom_all_reduce", "enable_symm_mem", "enable_nccl_nvls", "enable_eplb",
    "context_length",
)
VLLM = (
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "max_num_seqs",
    "max_num_batched_tokens", "enable_chunked_prefill", "enforce_eager", "compilation_config",
    "cudagraph_capture_sizes", "optimization_level", "speculative_config", "attention_backend", "quantization",
    "kv_cache_dtype", "block_size", "enable_prefix_caching", "gpu_memory_utilization", "async_scheduling",
    "max_model_len",
)
CATCH_ALL = {"server-argument", "server-argument-other-release", "server-default-changed"}

# Why a field has no direction: what the engine's own words say of it. "no direction" where its help only says
# what the setting is; "trade-off" or "workload-dependent" where its guide names a gain on one side and a cost on
# the other, or says when to turn it either way. Sources: SGLang's help strings (sglang/srt/server_args.py of the
# 0.5.9 wheel, sglang/srt/arg_groups/fields/*.py of the 0.5.23 wheel, the same words in both where quoted) and its
# tuning guide (docs/advanced_features/hyperparameter_tuning.md, sgl-project/sglang at 21ff1af); vLLM's config
# docstrings (vllm/config/*.py of the 0.22.0 and 0.34.0 wheels, which are its --help) and its optimization guide
# (docs/configuration/optimization.md, vllm-project/vllm at 00620f91). A direction the words do give is a rule in
# driftcheck/analysis/rules.yaml, not a line here.
_SG_HELP = "SGLang's help"
_SG_GUIDE = "SGLang's tuning guide"
_VL_DOC = "vLLM's docstring"
_VL_GUIDE = "vLLM's optimization guide"
WHY_NO_DIRECTION: dict[str, dict[str, str]] = {
    "sglang": {
        "speculative_algorithm": f"no direction: {_SG_HELP} \"Speculative algorithm.\"",
        "speculative_num_steps": f"no direction: {_SG_HELP} \"The number of steps sampled from draft model in "
                                 "Speculative Decoding.\"",
        "speculative_eagle_topk": f"no direction: {_SG_HELP} \"The number of tokens sampled from the draft model in "
                                  "eagle2 each step.\"",
        "speculative_num_draft_tokens": f"no direction: {_SG_HELP} \"The number of tokens sampled from the draft "
                                        "model in Speculative Decoding.\"",
        "speculative_attention_mode": f"no direction: {_SG_HELP} \"Attention backend for speculative decoding "
                                      "operations ... 'prefill' (default) or 'decode'.\"",
        "speculative_draft_model_path": f"no direction: {_SG_HELP} \"The path of the draft model weights.\"",
        "speculative_draft_attention_backend": f"no direction: {_SG_HELP} \"Attention backend for speculative "
                                               "decoding drafting.\"",
        "cuda_graph_bs": f"no direction for a list: {_SG_HELP} \"Set the list of batch sizes for cuda graph.\" "
                         "(the guide speaks of the maximum only)",
        "cuda_graph_bs_decode": f"no direction for a list: {_SG_HELP} \"Explicit list of batch sizes to capture for "
                                "the decode cuda graph.\" (the guide speaks of the maximum only)",
        "cuda_graph_bs_prefill": f"no direction for a list: {_SG_HELP} \"Explicit list of batch sizes to capture "
                                 "for the prefill cuda graph.\"",
        "cuda_graph_max_bs_prefill": f"no direction: {_SG_HELP} \"Maximum batch size captured for the prefill cuda "
                                     "graph.\" (the guide's words are about decode batches)",
        "attention_backend": f"no direction: {_SG_HELP} \"Choose the kernels for attention layers.\"",
        "prefill_attention_backend": f"no direction: {_SG_HELP} \"Choose the kernels for prefill attention "
                                     "layers\"",
        "decode_attention_backend": f"no direction: {_SG_HELP} \"Choose the kernels for decode attention layers\"",
        "sampling_backend": f"no direction: {_SG_HELP} \"Choose the kernels for sampling layers.\"",
        "moe_runner_backend": f"no direction: {_SG_HELP} \"Choose the runner backend for MoE.\"",
        "moe_a2a_backend": f"no direction: {_SG_HELP} \"Choose the backend for MoE A2A.\"",
        "deepep_mode": f"workload-dependent: {_SG_HELP} \"`auto` ... means `low_latency` for decode batch and "
                       "`normal` for prefill batch\"",
        "fp8_gemm_runner_backend": f"no direction: {_SG_HELP} \"Choose the runner backend for Blockwise FP8 GEMM "
                                   "operations\" ('auto' selects by hardware)",
        "fp4_gemm_runner_backend": f"no direction: {_SG_HELP} \"Choose the runner backend for NVFP4 GEMM "
                                   "operations\"",
        "schedule_policy": f"workload-dependent: {_SG_GUIDE} \"If the workload has many shared prefixes, try "
                           "`--schedule-policy lpm` ... encourage more cache hits but introduces more scheduling "
                           "overhead\"",
        "schedule_conservativeness": f"workload-dependent: {_SG_GUIDE} decrease it when \"token usage < 0.9 and "
                                     "#queue-req > 0\", increase it when requests are retracted frequently",
        "page_size": f"no direction: {_SG_HELP} \"The number of tokens in a page.\"",
        "enable_two_batch_overlap": f"no direction: {_SG_HELP} \"Enabling two micro batches to overlap.\"",
        "tp_size": f"conditional: {_SG_GUIDE} \"When there is enough GPU memory, always favor data parallelism for "
                   "throughput\" (throughput only; one size does not say what the other did)",
        "dp_size": f"conditional: {_SG_GUIDE} \"Data parallelism is better for throughput. When there is enough GPU "
                   "memory ...\" (throughput only; with --enable-dp-attention dp_size splits attention instead)",
        "ep_size": f"no direction: {_SG_HELP} \"The expert parallelism size.\"; the guide only says \"Try other "
                   "parallelism strategies\"",
        "pp_size": f"no direction: {_SG_HELP} \"The pipeline parallelism size.\"",
        "enable_dp_attention": f"no direction: {_SG_GUIDE} only says \"Try ... DP attention for deepseek models\"",
        "quantization": f"no direction: {_SG_HELP} \"The quantization method.\"; the guide only says \"Try other "
                        "quantization\"",
        "kv_cache_dtype": f"no direction: {_SG_HELP} \"Data type for kv cache storage.\"",
        "dtype": f"no direction: {_SG_HELP} \"Data type for model weights and activations.\"",
        "enable_nccl_nvls": f"workload-dependent: {_SG_HELP} \"Enable NCCL NVLS for prefill heavy requests when "
                            "available.\"",
        "enable_eplb": f"no direction: {_SG_HELP} \"Enable EPLB algorithm\"",
        "context_length": f"no direction: {_SG_HELP} \"The model's maximum context length.\"",
    },
    "vllm": {
        "tensor_parallel_size": f"trade-off: {_VL_GUIDE} \"Increase tensor_parallel_size ... more memory available "
                                "for KV cache. However, increasing this value may cause excessive synchronization "
                                "overhead.\"",
        "pipeline_parallel_size": f"trade-off: {_VL_GUIDE} \"Increase pipeline_parallel_size ... more memory "
                                  "available for KV cache. However, increasing this value may cause latency "
                                  "penalties.\"",
        "data_parallel_size": f"no direction: {_VL_DOC} \"Number of data parallel groups.\"",
        "enable_expert_parallel": f"no direction: {_VL_DOC} \"Use expert parallelism instead of tensor parallelism "
                                  "for MoE layers.\"",
        "max_num_seqs": f"no direction: {_VL_DOC} \"Maximum number of sequences to be processed in a single "
                        "iteration.\"; the guide lowers it only against preemption",
        "max_num_batched_tokens": f"trade-off: {_VL_GUIDE} \"Smaller values (e.g., 2048) achieve better "
                                  "inter-token latency (ITL)\"; \"Higher values achieve better time to first token "
                                  "(TTFT)\"",
        "compilation_config": f"no one direction for a nested configuration: {_VL_DOC} of cudagraph_mode "
                              "\"Generally for performance FULL_AND_PIECEWISE is better\" names a default, and "
                              "--enforce-eager's rule tells CUDA graphs turned off",
        "cudagraph_capture_sizes": f"no direction: {_VL_DOC} \"Sizes to capture cudagraph.\"",
        "speculative_config": f"no direction: {_VL_DOC} \"Speculative decoding configuration.\"",
        "attention_backend": f"no direction: {_VL_DOC} \"Attention backend to use. Use \\\"auto\\\" or None for "
                             "automatic selection.\"",
        "quantization": f"no direction: {_VL_DOC} \"Method used to quantize the weights.\"",
        "kv_cache_dtype": f"no direction: {_VL_DOC} \"Data type for kv cache storage. If \\\"auto\\\", will use "
                          "model data type.\"",
        "block_size": f"no direction: {_VL_DOC} \"Size of a contiguous cache block in number of tokens.\"",
        "max_model_len": f"no direction: {_VL_DOC} \"Model context length (prompt and output).\"",
    },
}


def claiming_rules(catalog: Catalog, field: str) -> list[str]:
    """Every rule that may claim a change of `server_args.<field>` (conditions aside), in catalog order."""
    parts = parse_path(f"probes.server.data.server_args.{field}")
    return [rule.id for rule in catalog.rules_for(parts, "changed")
            if rule.id not in CATCH_ALL and rule.match(parts, "changed") is not None]


def sample(table: FlagTable, field: str) -> JSONValue:
    spec = table.spec(field)
    if spec is None:
        return None
    if spec.default is not None:
        return spec.default
    return spec.choices[0] if spec.choices else None


def fix_accepted(table: FlagTable, field: str) -> bool:
    """The restoring change of a sample value parses on the release's table and sets the field to it."""
    value = sample(table, field)
    restoration = table.restoring(field, value)
    if restoration is None:
        return False
    if not restoration.add:
        spec = table.spec(field)
        return spec is not None and spec.default == value
    namespace, unknown = table.parser().parse_known_args(list(restoration.add))
    return not unknown and getattr(namespace, field, object()) == value


def coverage(name: str, catalog: Catalog) -> dict[str, object]:
    table = load_table(name)
    wanted = SGLANG if table.engine == "sglang" else VLLM
    present = [field for field in wanted if table.spec(field) is not None]
    rows = {}
    for field in present:
        rules = claiming_rules(catalog, field)
        directions = sorted({catalog.rule(rule).direction for rule in rules} - {"either"})
        rows[field] = {"rules": rules, "directions": directions, "fix_accepted": fix_accepted(table, field)}
    return {
        "release": name, "fields": len(present),
        "with_rule": sum(bool(row["rules"]) for row in rows.values()),
        "with_direction": sum(bool(row["directions"]) for row in rows.values()),
        "fix_accepted": sum(bool(row["fix_accepted"]) for row in rows.values()),
        "all_three": sum(bool(row["rules"] and row["directions"] and row["fix_accepted"]) for row in rows.values()),
        "without_direction": {field: WHY_NO_DIRECTION[table.engine].get(field, "no reason recorded")
                              for field, row in rows.items() if not row["directions"]},
        "not_accepted": [field for field, row in rows.items() if not row["fix_accepted"]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    catalog = default_catalog()
    names = [f"{engine}-{version}" for engine in ("sglang", "vllm") for version in shipped_versions(engine)]
    figures = [coverage(name, catalog) for name in names]
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{'release':<16}{'fields':>8}{'rule':>8}{'direction':>11}{'fix ok':>8}{'all 3':>7}")
    for row in figures:
        print(f"{row['release']:<16}{row['fields']:>8}{row['with_rule']:>8}{row['with_direction']:>11}"
              f"{row['fix_accepted']:>8}{row['all_three']:>7}")
    for row in figures:
        without = row["without_direction"]
        assert isinstance(without, dict)
        print(f"\n{row['release']}: no direction claimed for {len(without) or 'none'}")
        for field, why in without.items():
            print(f"  {field}: {why}")
        if row["not_accepted"]:
            print(f"  restoring change not accepted: {', '.join(row['not_accepted'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
