"""The shipped flag tables against the releases themselves (slow: the real releases are downloaded once).

Each release comes from the `engine_path` / `engine_source` fixtures (tests/serving/engines.py): its wheel from the
package index, unpacked with the light packages its argument modules import into a cache outside the venv, reused
by later runs; DRIFTCHECK_ENGINE_PATHS="sglang-0.5.23=PYTHONPATH;vllm-0.34.0=PYTHONPATH;..." names one by hand.
Without the network (and no cache) these tests are skipped, with pip's reason.

- SGLang 0.5.9's table is read from its source (its modules are not importable on a CPU machine) by
  tools/engine_flag_table.py --from-source; the result must be the shipped table.
- The tables of SGLang 0.5.23 and vLLM 0.22.0 / 0.34.0 come from their real parsers: each is built again and must
  be the shipped table, every restoring change the table can produce is run through the real parser (`--check`),
  and for vLLM the spellings of tests/serving/vllm_spellings.py are read by its `parse_args` (`--read`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.serving.flag_tables import load_table
from driftcheck.serving.launch import vllm_argv
from tests.serving.restorations import restorations
from tests.serving.vllm_spellings import CONFIG, CONFIG_WORDS, REFUSED_BY_THE_CONFIGURATION, SPELLINGS

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "engine_flag_table.py"
SHIPPED = ROOT / "driftcheck" / "serving" / "engine_flags"


def test_sglang_0_5_9_read_again_from_its_wheel(engine_source: Callable[[str], Path]) -> None:
    unpacked = engine_source("sglang-0.5.9")
    table = subprocess.run([sys.executable, str(TOOL), "sglang", "--from-source", str(unpacked)],
                           capture_output=True, text=True, check=True, timeout=120).stdout
    assert json.loads(table) == json.loads((SHIPPED / "sglang-0.5.9.json").read_text("utf-8"))


@pytest.mark.parametrize("name", ["sglang-0.5.23", "vllm-0.22.0", "vllm-0.34.0"])
def test_the_real_parser_builds_the_table_and_takes_every_restoring_change(
        name: str, tmp_path: Path, engine_path: Callable[[str], str]) -> None:
    path = engine_path(name)
    engine = name.partition("-")[0]
    env = {**os.environ, "PYTHONPATH": path}
    built = subprocess.run([sys.executable, str(TOOL), engine], capture_output=True, text=True, env=env,
                           timeout=600, cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-2000:]
    assert json.loads(built.stdout) == json.loads((SHIPPED / f"{name}.json").read_text("utf-8"))
    cases = [{"field": r.field, "value": value, "add": list(r.add), "drop": list(r.drop)}
             for value, r in restorations(load_table(name))]
    (tmp_path / "cases.json").write_text(json.dumps(cases), "utf-8")
    checked = subprocess.run([sys.executable, str(TOOL), engine, "--check", str(tmp_path / "cases.json")],
                             capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:]


@pytest.mark.parametrize("name", ["vllm-0.22.0", "vllm-0.34.0"])
def test_vllm_spellings_are_read_as_the_real_parser_reads_them(
        name: str, tmp_path: Path, engine_path: Callable[[str], str]) -> None:
    """Dotted options, -O, `=` and JSON values: driftcheck's reading of each line equals what the release's
    `FlexibleArgumentParser.parse_args` sets (a configuration compared through the parser's own type)."""
    path = engine_path(name)
    table = load_table(name)
    lines = [words for words, _ in SPELLINGS] + REFUSED_BY_THE_CONFIGURATION
    cases = [{"words": words, "fields": table.fields_of(vllm_argv(["vllm", "serve", "m", *words]))} for words in lines]
    cases.append({"words": CONFIG_WORDS, "config": CONFIG, "fields": table.fields_of(
        vllm_argv(["vllm", "serve", "m", *CONFIG_WORDS], CONFIG, table.config_false_negated))})
    (tmp_path / "cases.json").write_text(json.dumps(cases), "utf-8")
    read = subprocess.run([sys.executable, str(TOOL), "vllm", "--read", str(tmp_path / "cases.json")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}, timeout=600,
                          cwd=tmp_path)
    assert read.returncode == 0, read.stdout[-3000:] + read.stderr[-2000:]
