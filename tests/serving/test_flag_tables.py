"""The flag tables of SGLang and vLLM releases (driftcheck/serving/engine_flags, written from each release's own
parser by tools/engine_flag_table.py): launch lines read as fields, fixes spelled for the release B runs."""

from __future__ import annotations

import json

import pytest

from driftcheck.serving.flag_tables import load_table, shipped_versions, table_for
from driftcheck.serving.launch import sglang_human_readable_int, vllm_argv
from tests.serving.restorations import restorations

TABLES = ["sglang-0.5.9", "sglang-0.5.23", "vllm-0.22.0", "vllm-0.34.0"]


def test_each_table_names_its_release_and_how_it_was_read() -> None:
    for name in TABLES:
        table = load_table(name)
        assert f"{table.engine}-{table.version}" == name
    assert load_table("sglang-0.5.23").source == "argparse.ArgumentParser"
    assert load_table("vllm-0.34.0").source == "vllm.utils.argparse_utils.FlexibleArgumentParser"
    assert "ast" in load_table("sglang-0.5.9").source  # its argument module does not import on a CPU machine
    assert shipped_versions("sglang") == ["0.5.9", "0.5.23"]
    # B's release, else the newest shipped release before it, else the oldest shipped one
    assert table_for("sglang", "0.5.23").version == "0.5.23"
    assert table_for("sglang", "0.5.22").version == "0.5.9"
    assert table_for("vllm", "0.40.1").version == "0.34.0"
    assert table_for("sglang", "0.0.0.dev1+g753da2753").version == "0.5.9"
    assert table_for("openai-compatible", "1.0") is None


def test_sglang_0_5_23_refuses_the_spellings_of_older_fixes() -> None:
    """As SGLang 0.5.23's parser does: CUDA-graph settings are per phase, the context length is --context-length."""
    new, old = load_table("sglang-0.5.23").parser(), load_table("sglang-0.5.9").parser()
    with pytest.raises(ValueError, match="ambiguous option: --cuda-graph-max-bs"):
        new.parse_known_args(["--cuda-graph-max-bs", "160"])
    assert new.parse_known_args(["--max-model-len", "4096"])[1] == ["--max-model-len", "4096"]  # unrecognized
    assert old.parse_known_args(["--cuda-graph-max-bs", "160"])[0].cuda_graph_max_bs == 160
    assert load_table("sglang-0.5.23").restoring("cuda_graph_max_bs_decode", 160).text == \
        "with --cuda-graph-max-bs-decode 160"
    assert load_table("sglang-0.5.23").restoring("disable_decode_cuda_graph", False).text == \
        "without --disable-decode-cuda-graph"
    # "not given" is said by leaving the flag out, never `--speculative-num-steps none`
    assert load_table("sglang-0.5.23").restoring("speculative_num_steps", None).text == \
        "without --speculative-num-steps"


def test_vllm_negates_prefix_caching_as_each_release_does() -> None:
    assert load_table("vllm-0.22.0").restoring("enable_prefix_caching", False).text == "with --no-enable-prefix-caching"
    assert load_table("vllm-0.34.0").restoring("enable_prefix_caching", False).text == "with --disable-prefix-caching"


@pytest.mark.parametrize("name", TABLES)
def test_every_restoring_change_sets_the_field_to_a_value(name: str) -> None:
    """Each change a fix can propose parses on that release's flags and gives the field A's value; a flag left
    out leaves the field at its default, which is A's value."""
    table = load_table(name)
    parser = table.parser()
    cases = restorations(table)
    assert len(cases) > 150
    for value, restoration in cases:
        spec = table.spec(restoration.field)
        assert spec is not None
        if restoration.add:
            namespace, unknown = parser.parse_known_args(list(restoration.add))
            assert unknown == [], (restoration, unknown)
            assert getattr(namespace, restoration.field) == value, restoration
        else:
            assert spec.default == value, restoration
            assert all(option in spec.flags for option in restoration.drop)


def test_launch_lines_read_as_fields_with_short_flags_and_abbreviations() -> None:
    vllm = table_for("vllm", "0.34.0")
    assert vllm.fields_of(["vllm", "serve", "m", "-tp", "8", "-q", "fp8", "--disable-prefix-caching", "-sc",
                           '{"method": "eagle3"}']) == {
        "tensor_parallel_size": 8, "quantization": "fp8", "enable_prefix_caching": False,
        "speculative_config": {"method": "eagle3"}}
    # `--max_num_seqs` is vLLM's own rewriting (underscores to dashes, -O3), done before the table reads it
    assert "max_num_seqs" not in vllm.fields_of(["vllm", "serve", "m", "--max_num_seqs=64"])
    fields = vllm.fields_of(vllm_argv(["vllm", "serve", "m", "-tp", "8", "--max_num_seqs=64", "-O3"]))
    assert fields == {"tensor_parallel_size": 8, "max_num_seqs": 64, "optimization_level": 3}
    sglang = table_for("sglang", "0.5.23")
    assert sglang.fields_of(["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "4",
                             "--disable-decode-cuda-graph", "--cuda-graph-max-bs", "160"]) == {
        "model_path": "m", "tp_size": 4, "disable_decode_cuda_graph": True}  # the ambiguous flag sets nothing


def test_sglang_human_readable_integers_are_not_vllm_ones() -> None:
    """sglang/srt/utils/common.py of 0.5.23 (`human_readable_int`): SI suffixes decimal, IEC suffixes binary, `1K`
    refused; vLLM reads `1M` as 2**20. The same text gives each engine's own number."""
    assert [sglang_human_readable_int(text) for text in ("1M", "25.6k", "1Ki", "2Mi", " 7 ", "1K", "1.5Ki", "x")] == \
        [1_000_000, 25_600, 1024, 2 * 2**20, 7, None, None, None]
    sglang = table_for("sglang", "0.5.23")
    assert sglang.fields_of(["python", "-m", "sglang.launch_server", "--context-length", "1M",
                             "--max-total-tokens", "64Ki"]) == {"context_length": 1_000_000, "max_total_tokens": 65536}
    vllm = table_for("vllm", "0.34.0")
    assert vllm.fields_of(["vllm", "serve", "m", "--max-num-batched-tokens", "1M"]) == {
        "max_num_batched_tokens": 2**20}


def test_a_vllm_config_file_stands_where_it_was_named() -> None:
    """vllm/utils/argparse_utils.py of 0.34.0 (`load_config_file`): keys become flags, true a bare flag, a
    mapping its JSON; the command line's own flags come after and win."""
    config = {"tensor-parallel-size": 4, "enforce-eager": True, "compilation-config": {"mode": 3}}
    argv = vllm_argv(["vllm", "serve", "m", "--config", "c.yaml", "-tp", "8"], config)
    assert argv == ["vllm", "serve", "m", "--tensor-parallel-size", "4", "--enforce-eager",
                    "--compilation-config", json.dumps({"mode": 3}), "-tp", "8"]
    fields = table_for("vllm", "0.34.0").fields_of(argv)
    assert fields["tensor_parallel_size"] == 8 and fields["enforce_eager"] is True
