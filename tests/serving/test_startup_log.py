"""The startup lines of real vLLM and SGLang logs (tests/data/servers/logs, SOURCE) read as settings."""

from __future__ import annotations

import json

from driftcheck.serving.startup_log import STARTUP_PIECES, is_startup_line, read_startup_log
from tests.servers import SERVERS_DATA

LOGS = SERVERS_DATA / "logs"
# Keys of SGLang's /server_info that are not server arguments (driftcheck/serving/engine.py `_SGLANG_NOT_ARGS`).
_NOT_ARGS = {"internal_states", "version", "status", "max_total_num_tokens", "max_req_input_len"}


def _log(name: str) -> str:
    return (LOGS / name).read_text("utf-8")


def test_vllm_0_11_non_default_args_and_version() -> None:
    start = read_startup_log(_log("vllm-0.11.0-issue-28910.log"))
    assert start is not None
    assert (start.engine, start.version, start.complete, start.as_text) == ("vllm", "0.11.0", False, ())
    assert start.settings == {
        "enable_auto_tool_choice": True, "tool_call_parser": "hermes",
        "model": "/home/cheng/model/Qwen3-30B-A3B-Instruct-2507-FP8", "trust_remote_code": True,
        "max_model_len": 131072, "served_model_name": ["Qwen3-30B-A3B-Instruct-2507"], "tensor_parallel_size": 4,
        "max_num_batched_tokens": 32768, "max_num_seqs": 10}


def test_vllm_development_build_version_without_process_prefix() -> None:
    start = read_startup_log(_log("vllm-0.10.2-pr-24162.log"))
    assert start is not None
    assert start.version == "0.10.2.dev378+g4d7fe40fc.d20250829"
    assert start.settings["tensor_parallel_size"] == 2 and start.settings["model_tag"].endswith("Qwen2.5-0.5B/")


def test_sglang_dataclass_repr_holds_every_argument_the_server_reports() -> None:
    """The `server_args=ServerArgs(...)` line of one SGLang build and the /server_info of a server of the same
    build (one page of SGLang's documentation, rendered by its CI): the same argument names, so the rules
    that read `server_args.<field>` read either."""
    start = read_startup_log(_log("sglang-docs-native-api.log"))
    assert start is not None
    assert (start.engine, start.version, start.complete, start.as_text) == ("sglang", None, True, ())
    info = json.loads(_log("sglang-docs-native-api.server_info.json"))
    assert set(start.settings) == set(info) - _NOT_ARGS and len(start.settings) == 349
    assert start.settings["cuda_graph_bs"] == [1, 2, 4] and start.settings["disable_cuda_graph"] is True
    assert start.settings["speculative_attention_mode"] == "prefill" and start.settings["tp_size"] == 1
    # the two servers of that page were started with different flags: the values are each start's own
    assert (start.settings["log_level"], info["log_level"]) == ("info", "warning")


def test_vllm_0_34_logo_in_colour_and_plain_version_line() -> None:
    # vllm/entrypoints/common/startup.py of 0.34.0, `log_version_and_model`: the logo's second line with the
    # colour formatter's escapes ("o" \033[93m, "b" \033[94m, "w" \033[1m, "r" \033[0m), and the plain message
    # when the logo is turned off.
    logo = (" \033[93m▄▄\033[0m \033[94m▄█\033[0m \033[1m█     █     █ ▀▄▀ █\033[0m  version \033[1m%s\033[0m")
    args = "non-default args: {'model_tag': 'm', 'tensor_parallel_size': 8}"
    coloured = read_startup_log(f"(APIServer pid=7) INFO 12-01 10:00:00 [startup.py:38] {logo % '0.34.0'}\n"
                                f"(APIServer pid=7) INFO 12-01 10:00:00 [startup.py:96] {args}\n")
    plain = read_startup_log("INFO [startup.py:38] vLLM server version 0.34.0, serving model m\n"
                             f"INFO [startup.py:96] {args}\n")
    assert coloured is not None and plain is not None
    assert coloured.version == plain.version == "0.34.0" and coloured.settings == plain.settings
    assert is_startup_line(logo % "0.34.0") and not is_startup_line("INFO Resolved architecture: X")


def test_values_that_are_not_literals_are_kept_as_text() -> None:
    # An enum in a CompilationConfig dump, a LoRAModulePath (vllm 0.13's reprs, as real logs show them), and a
    # configuration vLLM 0.11 printed as JSON (`null`, `true`).
    line = ("INFO [utils.py:233] non-default args: {'compilation_config': {'mode': <CompilationMode.VLLM_COMPILE: 3>, "
            "'cudagraph_capture_sizes': [1, 2, 4]}, 'lora_modules': [LoRAModulePath(name='a', path='b', "
            "base_model_name=None)], 'speculative_config': {\"method\": \"ngram\", \"prompt_lookup_max\": null}, "
            "'max_num_seqs': 8}")
    start = read_startup_log(line)
    assert start is not None
    assert start.settings["compilation_config"] == {"mode": "<CompilationMode.VLLM_COMPILE: 3>",
                                                    "cudagraph_capture_sizes": [1, 2, 4]}
    assert start.settings["lora_modules"] == ["LoRAModulePath(name='a', path='b', base_model_name=None)"]
    assert start.settings["speculative_config"] == {"method": "ngram", "prompt_lookup_max": None}
    assert start.settings["max_num_seqs"] == 8
    assert start.as_text == ("compilation_config.mode", "lora_modules.0")


def test_sglang_0_5_23_dict_form() -> None:
    # sglang/srt/entrypoints/engine.py of 0.5.23: f"server_args={_server_args_for_logging(server_args)}", the
    # dict repr of `resolved_dict()` (no public log of 0.5.23 was found; the line is made as that code makes it).
    line = ("[2026-11-02 10:00:00] server_args={'model_path': 'm', 'tp_size': 8, 'cuda_graph_config': "
            "{'decode': {'max_bs': 160, 'backend': 'full'}}, 'api_key': None}")
    start = read_startup_log(line)
    assert start is not None and start.engine == "sglang" and start.complete
    assert start.settings["cuda_graph_config"] == {"decode": {"max_bs": 160, "backend": "full"}}
    assert start.settings["tp_size"] == 8


def test_the_last_start_in_an_appended_log_wins() -> None:
    first, second = _log("vllm-0.11.0-issue-28910.log"), _log("vllm-0.10.2-pr-24162.log")
    start = read_startup_log(first + second)
    assert start is not None and start.version.startswith("0.10.2") and start.settings["tensor_parallel_size"] == 2


def test_lines_that_hold_no_start() -> None:
    assert read_startup_log("INFO Starting vLLM API server on http://0.0.0.0:8000\n") is None
    # a line cut off before its closing brace (a truncated paste) is not read as settings
    assert read_startup_log("INFO non-default args: {'model': 'm', 'tensor_parallel_size': 4") is None
    assert read_startup_log("[2026-01-01] server_args=ServerArgs(model_path='m', tp_size=") is None


def test_every_startup_line_of_the_real_logs_passes_the_byte_filter_a_host_reads_with() -> None:
    # The filter runs before decoding (on the far side for SSH): a startup line it let pass by would be lost.
    coloured = "\x1b[1;36m(APIServer pid=1)\x1b[0m INFO non-default\x1b[0m args: {'tensor_parallel_size': 2}"
    lines = [line for path in sorted(LOGS.glob("*.log")) for line in path.read_text("utf-8").splitlines()]
    startup = [line for line in [*lines, coloured] if is_startup_line(line)]
    assert len(startup) >= 5 and coloured in startup
    assert all(STARTUP_PIECES.search(line.encode("utf-8")) for line in startup)
    passed = [line for line in lines if STARTUP_PIECES.search(line.encode("utf-8"))]
    assert len(passed) < len(lines) / 2  # and it leaves most of a log where it is
