"""Write what a vLLM release's OpenAI server answers on /version, /v1/models and /metrics for a few launch
lines, computed by that release's own code. vLLM 0.22.0 and 0.34.0 (tests/data/servers/vllm-<version>/).

Run with the unpacked wheel and the light packages its argument and metrics modules import on the path, on the
CPU platform (VLLM_TARGET_DEVICE=cpu; 0.22.0 finds it through a `vllm.platform_plugins` entry point):

    PYTHONPATH=UNPACKED_WHEEL:LIGHT_DEPS python make_vllm_replies.py OUT_DIR

- /version: `{"version": VLLM_VERSION}` (vllm/entrypoints/serve/instrumentator/basic.py `show_version` of 0.34.0,
  vllm/entrypoints/openai/api_server.py of 0.22.0).
- /v1/models: `OpenAIServingModels.show_available_models` builds `ModelList([ModelCard(id=served name,
  max_model_len=model_config.max_model_len, root=model path, permission=[ModelPermission()])])` and the router
  answers its `model_dump()`; here the same classes, with the launch line's `--max-model-len` (the model's own
  config is not downloaded). `created` and the permission id are this run's.
- /metrics: only the configuration gauge. `PrometheusStatLogger.log_metrics_info("cache_config", cache_config)`
  (vllm/v1/metrics/loggers.py) is run as it is, on a gauge class bound to a fresh registry, and the registry is
  written by prometheus_client's `generate_latest` as vLLM's /metrics does. The CacheConfig is built from the
  launch line's engine arguments through vLLM's own parser (`AsyncEngineArgs.add_cli_args`, `from_cli_args`):
  each argument whose `add_argument(**cache_kwargs[name])` comes from CacheConfig sets that field. What only a
  GPU run decides (num_gpu_blocks after profiling, the platform's block size) is left as the CPU platform
  leaves it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

import prometheus_client  # noqa: E402
from vllm.config import CacheConfig  # noqa: E402
from vllm.engine.arg_utils import AsyncEngineArgs  # noqa: E402
from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: E402
from vllm.v1.metrics.loggers import PrometheusStatLogger  # noqa: E402
from vllm.version import __version__  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
from engine_flag_table import vllm_config_paths  # noqa: E402

try:  # 0.34.0
    from vllm.entrypoints.serve.engine.protocol import ModelCard, ModelList, ModelPermission
except ImportError:  # 0.22.0
    from vllm.entrypoints.openai.engine.protocol import ModelCard, ModelList, ModelPermission

MODEL = "Qwen/Qwen3-8B"
BASE = ["-tp", "4", "--max-model-len", "32768"]
STARTS = {
    "start-a": BASE,
    "start-b": BASE,  # the same flags, restarted
    "memory-lowered": BASE + ["--gpu-memory-utilization", "0.8"],
    "kv-cache-fp8": BASE + ["--kv-cache-dtype", "fp8"],
}
def cache_config(parser: FlexibleArgumentParser, args: AsyncEngineArgs) -> CacheConfig:
    """The CacheConfig the engine arguments make: each argument added with `**cache_kwargs[field]` (found as
    tools/engine_flag_table.py finds every argument's configuration path) sets that field."""
    paths = vllm_config_paths(parser)
    # An argument left unset (None) is resolved later by create_engine_config: CacheConfig keeps its default.
    return CacheConfig(**{path.partition(".")[2]: getattr(args, dest) for dest, path in paths.items()
                          if path.startswith("cache_config.") and getattr(args, dest, None) is not None})


class _Logger:
    """What `log_metrics_info` reads of its PrometheusStatLogger: the gauge class and the engine indexes."""

    def __init__(self, registry: prometheus_client.CollectorRegistry) -> None:
        def gauge(**kwargs: object) -> prometheus_client.Gauge:
            kwargs.pop("multiprocess_mode", None)
            return prometheus_client.Gauge(registry=registry, **kwargs)  # type: ignore[arg-type]

        self._gauge_cls = gauge
        self.engine_indexes = [0]


def replies(words: list[str]) -> dict[str, str]:
    """/version, /v1/models and /metrics of a server started with `vllm serve MODEL WORDS`."""
    parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser())
    args = AsyncEngineArgs.from_cli_args(parser.parse_args(["--model", MODEL, *words]))
    models = ModelList(data=[ModelCard(id=MODEL, max_model_len=args.max_model_len, root=MODEL,
                                       permission=[ModelPermission()])])
    registry = prometheus_client.CollectorRegistry()
    PrometheusStatLogger.log_metrics_info(_Logger(registry), "cache_config", cache_config(parser, args))  # type: ignore[arg-type]
    return {"version.json": json.dumps({"version": __version__}),
            "models.json": json.dumps(models.model_dump()),
            "metrics.txt": prometheus_client.generate_latest(registry).decode()}


def main(out: Path) -> None:
    for name, words in STARTS.items():
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for file, text in replies(words).items():
            (folder / file).write_text(text + ("" if text.endswith("\n") else "\n"), "utf-8")
        (folder / "argv").write_text(" ".join(["vllm", "serve", MODEL, *words]) + "\n", "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
