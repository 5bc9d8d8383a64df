"""vLLM command-line spellings and the fields its parser sets from them, for vLLM 0.22.0 and 0.34.0.

What `FlexibleArgumentParser.parse_args` (vllm/utils/argparse_utils.py, the same rewriting in both releases)
does before argparse: underscores in a name become dashes, `-O3` / `-O 3` / `-O=3` are the optimization level,
dotted options set one key of a nested configuration (merged per spelling, put at the end: argparse keeps the
last), `+` makes a list. The expected fields were checked against both real parsers
(tests/serving/test_flag_tables_real.py runs them again when the releases are given).
"""

from __future__ import annotations

from driftcheck.snapshot.jsontypes import JSONObject

SPELLINGS: list[tuple[list[str], JSONObject]] = [
    # dotted nested arguments, long and short, `=` or a separate value, merged per spelling
    (["--compilation-config.mode", "3"], {"compilation_config": {"mode": 3}}),
    (["-cc.mode=3"], {"compilation_config": {"mode": 3}}),
    (["--compilation_config.mode", "3", "--compilation-config.cudagraph_mode", "FULL_AND_PIECEWISE"],
     {"compilation_config": {"mode": 3, "cudagraph_mode": "FULL_AND_PIECEWISE"}}),
    (["-cc.cudagraph_capture_sizes+", "1,2,4", "-cc.cudagraph_capture_sizes+=8"],
     {"compilation_config": {"cudagraph_capture_sizes": ["1", "2", "4", "8"]}}),
    (["-cc.max_cudagraph_capture_size", "1k"], {"compilation_config": {"max_cudagraph_capture_size": 1000}}),
    (["--speculative-config.method", "ngram", "--speculative-config.num_speculative_tokens", "4"],
     {"speculative_config": {"method": "ngram", "num_speculative_tokens": 4}}),
    (["-sc.method=ngram"], {"speculative_config": {"method": "ngram"}}),
    (["-ac.backend", "FLASH_ATTN"], {"attention_config": {"backend": "FLASH_ATTN"}}),
    # JSON values, with `=` or not
    (["--compilation-config", '{"mode":3}'], {"compilation_config": {"mode": 3}}),
    (['--compilation-config={"mode": 3, "cudagraph_mode": "PIECEWISE"}'],
     {"compilation_config": {"mode": 3, "cudagraph_mode": "PIECEWISE"}}),
    (["-sc", '{"method": "ngram", "num_speculative_tokens": 2}'],
     {"speculative_config": {"method": "ngram", "num_speculative_tokens": 2}}),
    # a dotted option is put after the whole mapping and replaces it; so does another spelling of the same
    (["--compilation-config", '{"mode":3}', "-cc.cudagraph_mode", "NONE"],
     {"compilation_config": {"cudagraph_mode": "NONE"}}),
    (["-sc.method=ngram", "--speculative_config.num_speculative_tokens", "4"],
     {"speculative_config": {"num_speculative_tokens": 4}}),
    # the optimization level: the parser keeps the text, the configuration holds the level
    (["-O3"], {"optimization_level": 3}),
    (["-O", "1"], {"optimization_level": 1}),
    (["-O=0"], {"optimization_level": 0}),
    (["--optimization_level=2", "-tp", "2"], {"optimization_level": 2, "tensor_parallel_size": 2}),
    # `--flag=value`, underscores, a short flag with `=`
    (["-tp=4", "--max_num_seqs=64", "--gpu-memory-utilization=0.8"],
     {"tensor_parallel_size": 4, "max_num_seqs": 64, "gpu_memory_utilization": 0.8}),
    (["--kv_cache_dtype", "fp8", "--block-size=32"], {"kv_cache_dtype": "fp8", "block_size": 32}),
    # human-readable integers where the argument's type is vLLM's human_readable_int(_or_auto)
    (["--max-num-batched-tokens", "8k", "--max-model-len=32K"],
     {"max_num_batched_tokens": 8000, "max_model_len": 32768}),
    (["--max-model-len", "auto"], {"max_model_len": -1}),
]

# Spellings the releases' parsers take but their configuration refuses: `-O.x` is the optimization level ".x"
# (before 0.22 `-O` was the compilation config), which VllmConfig rejects; the server does not start.
REFUSED_BY_THE_CONFIGURATION: list[list[str]] = [["-O.mode=3"], ["-O.mode", "3"], ["-O7"]]

# `--config config.yaml` (keys as flags where the file is named, the command line after it wins), per release: a
# false key is `--no-key` in 0.34.0 and left out in 0.22.0 (`load_config_file`).
CONFIG = {"tensor_parallel_size": 4, "enable-prefix-caching": False, "compilation-config": {"mode": 3},
          "max_num_seqs": 32}
CONFIG_WORDS = ["--config", "config.yaml", "-tp", "8"]
CONFIG_FIELDS: dict[str, JSONObject] = {
    "vllm-0.22.0": {"tensor_parallel_size": 8, "compilation_config": {"mode": 3}, "max_num_seqs": 32},
    "vllm-0.34.0": {"tensor_parallel_size": 8, "enable_prefix_caching": False, "compilation_config": {"mode": 3},
                    "max_num_seqs": 32},
}
