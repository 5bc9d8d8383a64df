"""`driftcheck bench` and `driftcheck snapshot --bench`, run as the user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.probes import builtin_probes, select_probes
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.redact import Redactor
from tests.baselines.test_serving import server  # noqa: F401 - fixture
from tests.conftest import REPO_ROOT

# Every test here runs a benchmark suite or serving measurement through the CLI.
pytestmark = pytest.mark.slow

QUICK_CPU = {"launch_eager_us_per_op", "gemm_fp32_1024_gflops", "skinny_gemm_fp32_b4_h4096_gbps",
             "device_copy_64mib_gbps", "decode_eager_tok_per_s", "decode_eager_ms_per_token"}


def test_quick_suite_json_on_cpu(cli_process: Callable[..., object]) -> None:
    done = cli_process("bench", "--suite", "quick", "--device", "cpu", "--format", "json", "--budget-s", "2")
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    data = json.loads(done.stdout)  # type: ignore[attr-defined]
    assert data["suite"] == "quick" and data["device"] == "cpu"
    assert set(data["results"]) | set(data["skipped"]) == QUICK_CPU
    assert len(data["results"]) >= 4
    for name, result in data["results"].items():
        assert result["n"] == len(result["samples"]) >= 3, name
        assert result["ci_low"] <= result["median"] <= result["ci_high"], name
        assert result["cv"] >= 0 and result["p10"] <= result["p90"], name
        assert result["unit"] and result["calibration"]["stopped"] in ("converged", "budget", "max_samples")
        assert "cpu_mhz" in result["clocks_before"] and "cpu_mhz" in result["clocks_after"]
    decode = data["results"].get("decode_eager_tok_per_s")
    if decode:
        ms = data["results"]["decode_eager_ms_per_token"]
        assert abs(ms["median"] - 1000.0 / decode["median"]) / ms["median"] < 0.05


def test_text_output_and_unknown_options(cli: Callable[..., object]) -> None:
    done = cli("bench", "--device", "cpu", "--budget-s", "0.5", "--only", "launch")
    assert done.returncode == 0  # type: ignore[attr-defined]
    lines = done.stdout.splitlines()  # type: ignore[attr-defined]
    assert lines[1].split()[:3] == ["benchmark", "median", "unit"]
    assert lines[2].startswith("launch_eager_us_per_op") and " us " in lines[2]
    bad = cli("bench", "--budget-s", "-1")
    assert bad.returncode == 2 and "--budget-s" in bad.stderr and "must be positive" in bad.stderr  # type: ignore[attr-defined]


def test_without_torch_one_line_error_with_install_hint() -> None:
    code = "import sys; sys.modules['torch'] = None\nfrom driftcheck.cli import main\nsys.exit(main(['bench']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "pip install torch==" in done.stderr and "driftcheck[bench]" in done.stderr


def test_sglang_model_without_sglang_is_one_line(cli: Callable[..., object]) -> None:
    done = cli("bench", "--sglang-model", "/models/llama")
    assert done.returncode == 2  # type: ignore[attr-defined]
    assert "needs sglang" in done.stderr and done.stderr.count("\n") == 1  # type: ignore[attr-defined]


def test_server_json(cli: Callable[..., object], server: tuple[str, object], tmp_path: Path) -> None:  # noqa: F811
    url, _ = server
    out = tmp_path / "serving.json"
    args = ("bench", "--server", url, "--requests", "2", "--concurrency", "2", "--output-tokens", "3",
            "--format", "json", "-o", str(out))
    done = cli(*args)
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    data = json.loads(done.stdout)  # type: ignore[attr-defined]
    assert {"serving_c1_ttft_ms", "serving_c2_output_tok_per_s"} <= set(data["results"])
    assert json.loads(out.read_text()) == data
    again = cli(*args)
    assert again.returncode == 2 and "--force" in again.stderr  # type: ignore[attr-defined]


def test_bench_probe_is_opt_in() -> None:
    probes = builtin_probes(Redactor(b"k" * 32))
    assert "bench" not in [p.name for p in select_probes(probes)]
    assert [p.name for p in select_probes(probes, ["bench"])] == ["bench"]
    assert "bench" not in [p.name for p in select_probes(probes, cheap_only=True)]
    asked = ProbeOptions(bench=BenchRequest("quick"))
    assert "bench" in [p.name for p in select_probes(probes, options=asked)]
    assert [p.name for p in select_probes(probes, ["env"], options=asked)] == ["env", "bench"]


def test_snapshot_with_bench_verifies_and_diff_hides_bench(cli_process: Callable[..., object],
                                                           tmp_path: Path) -> None:
    snaps = []
    for index in range(2):
        path = tmp_path / f"snap{index}.json"
        done = cli_process("snapshot", "--probe", "env", "--bench", "quick", "--budget-s", "1.5", "-q",
                           "-o", str(path))
        assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
        snaps.append(path)
    document = json.loads(snaps[0].read_text())
    assert set(document["probes"]) == {"env", "bench"}
    bench = document["probes"]["bench"]
    assert bench["status"] == "ok", bench["error"]
    assert bench["data"]["suite"] == "quick" and len(bench["data"]["results"]) >= 3
    verified = cli_process("verify", str(snaps[0]))
    assert verified.returncode == 0, verified.stdout  # type: ignore[attr-defined]
    diff = cli_process("diff", str(snaps[0]), str(snaps[1]), "--format", "json")
    report = json.loads(diff.stdout)  # type: ignore[attr-defined]
    assert not [c for c in report["changes"] if c["path"].startswith("probes.bench")]
    everything = json.loads(cli_process("diff", str(snaps[0]), str(snaps[1]), "--format", "json",  # type: ignore
                                        "--all").stdout)
    assert [c for c in everything["changes"] if c["path"].startswith("probes.bench.data.results")]


def test_cuda_requested_without_a_gpu_is_one_line(cli: Callable[..., object]) -> None:
    done = cli("bench", "--device", "cuda")
    assert done.returncode == 2  # type: ignore[attr-defined]
    assert "no CUDA device" in done.stderr and done.stderr.count("\n") == 1  # type: ignore[attr-defined]


def test_bad_server_arguments_are_one_line(cli: Callable[..., object]) -> None:
    for args, message in ((("--server", "127.0.0.1:30000"), "expected an http(s)://HOST[:PORT] URL"),
                          (("--server", "http://127.0.0.1:9", "--concurrency", "0"),
                           "--concurrency must be at least 1"),
                          (("--server", "http://127.0.0.1:9"), "cannot reach http://127.0.0.1:9")):
        done = cli("bench", *args)
        assert done.returncode == 2, args  # type: ignore[attr-defined]
        assert message in done.stderr and done.stderr.count("\n") == 1  # type: ignore[attr-defined]
