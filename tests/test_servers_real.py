"""The replayed releases of tests/servers.py computed again by the releases' own code (slow: the releases come
from the `engine_path` fixture, as for tests/serving/test_flag_tables_real.py; SGLang 0.5.9, whose modules need a
CUDA build of torchvision, only when DRIFTCHECK_ENGINE_PATHS="sglang-0.5.9=PYTHONPATH" names it, else skipped).
What a start draws (a model card's creation time and permission id, SGLang's random seed) aside, every answer must
be the committed one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.servers import SERVERS_DATA

pytestmark = pytest.mark.slow


def _drawn_aside(document: Any) -> Any:
    """The document without what each start draws anew."""
    if isinstance(document, dict):
        return {key: _drawn_aside(value) for key, value in document.items()
                if key not in ("created", "random_seed") and not (key == "id" and str(value).startswith("modelperm-"))}
    if isinstance(document, list):
        return [_drawn_aside(item) for item in document]
    return document


def _same_answers(made: Path, committed: Path, skip: tuple[str, ...] = ()) -> None:
    starts = sorted(path.name for path in committed.iterdir() if path.is_dir() and not path.name.startswith(skip))
    assert starts and sorted(path.name for path in made.iterdir()) == starts
    for start in starts:
        for file in sorted((committed / start).iterdir()):
            new = (made / start / file.name).read_text("utf-8")
            if file.suffix == ".json":
                assert _drawn_aside(json.loads(new)) == _drawn_aside(json.loads(file.read_text("utf-8"))), file
            else:
                assert new == file.read_text("utf-8"), file


@pytest.mark.parametrize("release", ["vllm-0.22.0", "vllm-0.34.0"])
def test_vllm_replies_are_what_the_release_computes(release: str, tmp_path: Path,
                                                    engine_path: Callable[[str], str]) -> None:
    path = engine_path(release)
    done = subprocess.run([sys.executable, str(SERVERS_DATA / "make_vllm_replies.py"), str(tmp_path / "out")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # 0.34.0's folder also holds the dev-mode starts (dev-*), made by make_vllm_dev_replies.py, which is not run
    # here: vLLM inspects the model class in a subprocess of its own, without that script's stand-ins, and on a
    # machine whose vLLM cache holds no inspection of it that subprocess fails (its SOURCE says so).
    _same_answers(tmp_path / "out", SERVERS_DATA / release, skip=("dev-",))


def test_sglang_0_5_9_replies_are_what_the_release_computes(tmp_path: Path,
                                                           engine_path: Callable[[str], str]) -> None:
    path = engine_path("sglang-0.5.9")
    transformers = pytest.importorskip("transformers")
    # The model's configuration, as SOURCE says: transformers' Qwen3Config where Qwen/Qwen3-8B would be.
    transformers.Qwen3Config(architectures=["Qwen3ForCausalLM"]).save_pretrained(tmp_path / "Qwen" / "Qwen3-8B")
    done = subprocess.run([sys.executable, str(SERVERS_DATA / "sglang-0.5.9" / "make_replies.py"),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    _same_answers(tmp_path / "out", SERVERS_DATA / "sglang-0.5.9")
