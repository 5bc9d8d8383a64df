"""Write what vLLM 0.34.0's OpenAI server started with `VLLM_SERVER_DEV_MODE=1` answers, for a few launch lines,
computed by the release's own code (tests/data/servers/vllm-0.34.0/dev-*/).

Run with the unpacked wheel and the light packages its modules import on the path (torch's CPU build and transformers
come from the environment):

    PYTHONPATH=UNPACKED_WHEEL:LIGHT_DEPS python make_vllm_dev_replies.py OUT_DIR

What the server answers, as vLLM 0.34.0 writes it:
- /server_info and /server_info?config_format=json: `show_server_info` of
  vllm/entrypoints/serve/dev/server_info/api_router.py, called as the router calls it on an app whose
  `state.vllm_config` is the configuration `vllm serve` builds (vllm/entrypoints/launchers/api_server/entry.py:
  `AsyncEngineArgs.from_cli_args(args).create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)`).
- /version, /v1/models, /metrics: as ../make_vllm_replies.py writes them, from this configuration
  (`max_model_len` of its model_config, the `vllm:cache_config_info` gauge of its cache_config).

Substituted, because this runs on a machine without a GPU and with torch's CPU build:
- the platform: vLLM's own CUDA platform class (`NonNvmlCudaPlatform`, what vllm/platforms/cuda.py picks where
  NVML does not start), with the four device facts it would ask torch.cuda fixed to a 4-GPU H100 machine
  (compute capability 9.0, the name "NVIDIA H100 80GB HBM3", 80 GiB, 4 devices);
- `vllm._C_stable_libtorch`, the compiled custom-op library cuda.py imports to register kernels (built against
  CUDA torch; no kernel runs here), by an empty module.
- the model: no weights and no download; its configuration is ../qwen3-8b-config.json (Qwen/Qwen3-8B's config.json
  as copied in kohya-ss/musubi-tuner src/musubi_tuner/zimage/zimage_utils.py, commit 2a1eac8b, `QWEN3_8B_CONFIG_JSON`),
  laid out as `Qwen/Qwen3-8B/config.json` in a scratch folder the script works in, which vLLM reads as the model
  `Qwen/Qwen3-8B` (so the configuration names the model as the launch line does).
What only a GPU run decides (num_gpu_blocks after profiling) stays unset, as before the engine core reports it.
`system_env` is vLLM's `collect_env` of the machine that ran this script (a real server reports its own), less how
that machine is hosted (`scrubbed`), and
`instance_id` is drawn per start, as on a real server.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

os.environ["VLLM_SERVER_DEV_MODE"] = "1"
# A CUDA build's own value (vllm/envs.py's default); make_vllm_replies, imported below, would set "cpu".
os.environ["VLLM_TARGET_DEVICE"] = "cuda"
sys.modules["vllm._C_stable_libtorch"] = types.ModuleType("vllm._C_stable_libtorch")

import vllm.platforms  # noqa: E402
from vllm.platforms.cuda import NonNvmlCudaPlatform  # noqa: E402
from vllm.platforms.interface import DeviceCapability  # noqa: E402


class H100Platform(NonNvmlCudaPlatform):
    """vLLM's CUDA platform, with the device facts torch.cuda would give on a 4-GPU H100 machine."""

    @classmethod
    def get_device_capability(cls, device_id: int = 0) -> DeviceCapability:
        return DeviceCapability(major=9, minor=0)

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return "NVIDIA H100 80GB HBM3"

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return 80 * 1024**3

    @classmethod
    def device_count(cls) -> int:
        return 4


# Set before the modules below import `current_platform` (they keep the one they found).
vllm.platforms.current_platform = H100Platform()

import prometheus_client  # noqa: E402
from vllm.engine.arg_utils import AsyncEngineArgs  # noqa: E402
from vllm.entrypoints.serve.dev.server_info.api_router import show_server_info  # noqa: E402
from vllm.entrypoints.serve.engine.protocol import ModelCard, ModelList, ModelPermission  # noqa: E402
from vllm.usage.usage_lib import UsageContext  # noqa: E402
from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402
from vllm.v1.metrics.loggers import PrometheusStatLogger  # noqa: E402
from vllm.version import __version__  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_vllm_replies import BASE, MODEL, _Logger  # noqa: E402

STARTS = {
    "dev-start-a": BASE,
    "dev-start-b": BASE,  # the same flags, restarted
    "dev-kv-cache-fp8": BASE + ["--kv-cache-dtype", "fp8"],
}


class _Request:
    """What `show_server_info` reads of its request: `app.state.vllm_config`."""

    def __init__(self, vllm_config: Any) -> None:
        self.app = types.SimpleNamespace(state=types.SimpleNamespace(vllm_config=vllm_config))


# What collect_env says of the machine that ran this script and nothing a test reads: how it is hosted (its kernel
# build in the platform string, its CPU and hypervisor in lscpu's table), scrubbed before the answer is kept.
SCRUBBED_SYSTEM_ENV = {"python_platform": "Linux-x86_64-with-glibc2.36", "cpu_info": "(scrubbed: the recording machine)"}


def scrubbed(body: str) -> str:
    """The /server_info answer `body` with the recording machine's hosting facts replaced (SCRUBBED_SYSTEM_ENV)."""
    reply = json.loads(body)
    reply["system_env"].update((key, value) for key, value in SCRUBBED_SYSTEM_ENV.items() if key in reply["system_env"])
    return json.dumps(reply)


def _answer(vllm_config: Any, config_format: str) -> str:
    response = asyncio.run(show_server_info(_Request(vllm_config), config_format=config_format))  # type: ignore[arg-type]
    return scrubbed(bytes(response.body).decode())


def replies(words: list[str]) -> dict[str, str]:
    """Every endpoint's answer of a dev-mode server started with `vllm serve MODEL WORDS`: file name -> body."""
    parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser())
    args = AsyncEngineArgs.from_cli_args(parser.parse_args(["--model", MODEL, *words]))
    config = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
    models = ModelList(data=[ModelCard(id=MODEL, max_model_len=config.model_config.max_model_len, root=MODEL,
                                       permission=[ModelPermission()])])
    registry = prometheus_client.CollectorRegistry()
    PrometheusStatLogger.log_metrics_info(_Logger(registry), "cache_config", config.cache_config)  # type: ignore[arg-type]
    return {"server_info.text.json": _answer(config, "text"),
            "server_info.config_json.json": _answer(config, "json"),
            "version.json": json.dumps({"version": __version__}),
            "models.json": json.dumps(models.model_dump()),
            "metrics.txt": prometheus_client.generate_latest(registry).decode()}


def main(out: Path) -> None:
    out = out.resolve()
    scratch = Path(tempfile.mkdtemp(prefix="vllm-dev-replies-"))
    model = scratch / MODEL / "config.json"
    model.parent.mkdir(parents=True)
    shutil.copyfile(Path(__file__).resolve().parent / "qwen3-8b-config.json", model)
    os.chdir(scratch)  # vLLM finds the model `Qwen/Qwen3-8B` as this folder's subfolder
    try:
        _write(out)
    finally:
        shutil.rmtree(scratch)


def _write(out: Path) -> None:
    for name, words in STARTS.items():
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for file, text in replies(words).items():
            (folder / file).write_text(text + ("" if text.endswith("\n") else "\n"), "utf-8")
        (folder / "argv").write_text(" ".join(["VLLM_SERVER_DEV_MODE=1", "vllm", "serve", MODEL, *words]) + "\n",
                                     "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
