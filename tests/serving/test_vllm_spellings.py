"""vLLM's own spellings of its arguments (driftcheck.serving.launch.vllm_argv, then the release's flag table):
dotted nested options, `-O`, `--flag=value`, JSON values, read as the field and value vLLM 0.22.0 and 0.34.0
set. The same cases go through the real parsers in tests/serving/test_flag_tables_real.py."""

from __future__ import annotations

import json

import pytest

from driftcheck.serving.flag_tables import load_table
from driftcheck.serving.launch import human_readable_int, vllm_argv
from driftcheck.snapshot.jsontypes import JSONObject
from tests.serving.vllm_spellings import CONFIG, CONFIG_FIELDS, CONFIG_WORDS, REFUSED_BY_THE_CONFIGURATION, SPELLINGS

RELEASES = ["vllm-0.22.0", "vllm-0.34.0"]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(("words", "fields"), SPELLINGS, ids=[" ".join(words) for words, _ in SPELLINGS])
def test_each_spelling_sets_the_field_vllm_sets(release: str, words: list[str], fields: JSONObject) -> None:
    assert load_table(release).fields_of(vllm_argv(["vllm", "serve", "m", *words])) == fields


@pytest.mark.parametrize("release", RELEASES)
def test_spellings_the_configuration_refuses_set_nothing(release: str) -> None:
    for words in REFUSED_BY_THE_CONFIGURATION:
        assert load_table(release).fields_of(vllm_argv(["vllm", "serve", "m", *words])) == {}, words


def test_dotted_options_become_one_mapping_per_spelling_at_the_end() -> None:
    argv = vllm_argv(["vllm", "serve", "m", "-cc.mode", "3", "--port", "8001", "-cc.pass_config.fuse_norm_quant=true",
                      "--speculative_config.method", "ngram"])
    assert argv == ["vllm", "serve", "m", "--port", "8001",
                    "-cc", json.dumps({"mode": 3, "pass_config": {"fuse_norm_quant": True}}),
                    "--speculative-config", json.dumps({"method": "ngram"})]
    # a dot only in an `=` value is no dotted option; a dotted option with no value is left as it stands
    assert vllm_argv(["--model=org/m-1.5", "--served-model-name", "a.b", "-cc.mode"]) == \
        ["--model=org/m-1.5", "--served-model-name", "a.b", "-cc.mode"]


def test_human_readable_integers_as_vllm_reads_them() -> None:
    assert [human_readable_int(text) for text in ("1k", "25.6k", "1K", "2M", " 7 ", "1.5K", "auto")] == \
        [1000, 25600, 1024, 2 * 2**20, 7, None, None]


@pytest.mark.parametrize("release", RELEASES)
def test_the_optimization_level_is_restored_as_the_level_vllm_holds(release: str) -> None:
    """The parser keeps `-O3` as the text "3" and VllmConfig holds OptimizationLevel 3: the table says so
    (`resolves`), so A's level 2 is restored by a flag whose value resolves to 2, and 7 by none."""
    table = load_table(release)
    assert table.restoring("optimization_level", 2).text == "with --optimization-level 2"  # type: ignore[union-attr]
    namespace, unknown = table.parser().parse_known_args(["--optimization-level", "2"])
    assert unknown == [] and namespace.optimization_level == 2
    assert table.restoring("optimization_level", "3") is None  # the text is not what the engine holds
    assert table.restoring("optimization_level", 7) is None


@pytest.mark.parametrize("release", RELEASES)
def test_a_config_file_is_read_as_the_release_reads_it(release: str) -> None:
    table = load_table(release)
    argv = vllm_argv(["vllm", "serve", "m", *CONFIG_WORDS], CONFIG, table.config_false_negated)
    assert table.fields_of(argv) == CONFIG_FIELDS[release]
