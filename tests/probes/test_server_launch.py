"""The launch command line of a serving engine: which flags the user gave (driftcheck.serving.launch), found
by the server probe among the processes of this machine, and a probe that cannot look says why."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.redact import Redactor
from driftcheck.probes.server import ServerProbe
from driftcheck.serving.launch import engine_of, launch_flags, listening_port
from tests.nvidia.helpers import make_replay

# The launch lines of the engines' own documentation: SGLang's README/quick start
# (https://docs.sglang.io/docs/basic_usage/send_request: `python3 -m sglang.launch_server --model-path
# qwen/qwen2.5-0.5b-instruct --host 0.0.0.0`) and vLLM's OpenAI-compatible server page
# (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html:
# `vllm serve NousResearch/Meta-Llama-3-8B-Instruct --dtype auto --api-key token-abc123`).
SGLANG_DOCS = ["python3", "-m", "sglang.launch_server", "--model-path", "qwen/qwen2.5-0.5b-instruct",
               "--host", "0.0.0.0"]
VLLM_DOCS = ["vllm", "serve", "NousResearch/Meta-Llama-3-8B-Instruct", "--dtype", "auto", "--api-key",
             "token-abc123"]


def test_the_flags_of_the_documented_launch_lines() -> None:
    assert engine_of(SGLANG_DOCS) == ("sglang", 30000)
    assert launch_flags(SGLANG_DOCS) == {"model_path": "qwen/qwen2.5-0.5b-instruct", "host": "0.0.0.0"}
    assert listening_port(SGLANG_DOCS, 30000) == 30000  # no --port: the engine's default
    assert engine_of(VLLM_DOCS) == ("vllm", 8000)
    assert launch_flags(VLLM_DOCS) == {"dtype": "auto", "api_key": "token-abc123"}
    # `--flag=value`, a bare switch, and a command line that starts no engine
    assert launch_flags(["x", "--enable-torch-compile", "--port=30001", "--tp", "2"]) == {
        "enable_torch_compile": True, "port": "30001", "tp": "2"}
    assert engine_of(["python3", "-m", "http.server", "8000"]) is None
    assert engine_of(["python3", "bench_sglang_serving.py", "--port", "30000"]) is None


@pytest.fixture
def sglang_like(tmp_path: Path) -> Iterator[int]:
    """A real process started as `python -m sglang.launch_server ... --port N`: the module is a stand-in
    that waits on stdin (no SGLang here), the command line and /proc entries are real."""
    package = tmp_path / "sglang"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "launch_server.py").write_text("import sys\nprint('ready', flush=True)\nsys.stdin.readline()\n")
    argv = [sys.executable, "-m", "sglang.launch_server", "--model-path", "qwen/qwen2.5-0.5b-instruct",
            "--chunked-prefill-size", "4096", "--api-key", "topsecret", "--port", "39417"]
    child = subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    try:
        yield 39417
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_the_probe_finds_the_engine_listening_on_the_port(sglang_like: int) -> None:
    probe = ServerProbe(Redactor(b"test-secret"))
    launch = probe._launch(LocalHost(), f"http://127.0.0.1:{sglang_like}")
    assert launch["found"] is True and launch["why"] is None
    flags = launch["flags"]
    assert flags["model_path"] == "qwen/qwen2.5-0.5b-instruct" and flags["chunked_prefill_size"] == "4096"
    assert flags["port"] == str(sglang_like)
    assert "topsecret" not in str(launch)  # the key is digested, never kept
    other = probe._launch(LocalHost(), "http://127.0.0.1:39418")
    assert other["found"] is False and "--port 39418" in other["why"]


def test_a_host_the_probe_cannot_look_into_says_why(tmp_path: Path) -> None:
    probe = ServerProbe(Redactor(b"test-secret"))
    launch = probe._launch(ReplayHost(make_replay(tmp_path / "rec")), "http://10.0.0.5:30000")
    assert launch == {"found": False, "why": "the launch command line is read on the server's machine only, not over "
                      "replay", "cmdline": None, "flags": None}
    # Raw material of an older driftcheck has no launch entry: said, not guessed.
    parsed = probe.parse({"url": "http://10.0.0.5:30000", "replies": {}})
    assert parsed["launch"]["found"] is False and "not recorded" in parsed["launch"]["why"]


def test_a_config_file_is_read_where_the_server_reads_it(tmp_path: Path) -> None:
    probe = ServerProbe(Redactor(b"test-secret"))
    good = tmp_path / "serve.yaml"
    good.write_text("max-num-seqs: 128\nenforce-eager: true\napi-key: topsecret\n")
    read = probe._config_file(LocalHost(), "1", str(good))
    assert read["why"] is None and read["settings"]["max-num-seqs"] == 128  # type: ignore[index]
    assert read["settings"]["enforce-eager"] is True and "topsecret" not in str(read)  # type: ignore[index]
    broken = tmp_path / "broken.yaml"
    broken.write_text("max-num-seqs: [128\n")
    assert probe._config_file(LocalHost(), "1", str(broken))["why"].startswith("ParserError")  # type: ignore[union-attr]
    assert probe._config_file(LocalHost(), "1", str(tmp_path / "absent.yaml"))["why"].startswith("FileNotFoundError")  # type: ignore[union-attr]
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    assert probe._config_file(LocalHost(), "1", str(listed)) == {"path": str(listed), "settings": None,
                                                                "why": "not a YAML mapping"}
