"""Write what SGLang 0.5.9's HTTP server answers on /server_info (= /get_server_info), /model_info
(= /get_model_info) and /v1/models for a few launch lines, computed by SGLang's own code.

Run from a scratch directory holding the model's configuration at ./Qwen/Qwen3-8B/config.json, with the
unpacked sglang-0.5.9 wheel and the light packages its modules import on the path:

    HF_HUB_OFFLINE=1 PYTHONPATH=UNPACKED_WHEEL:LIGHT_DEPS python make_replies.py OUT_DIR

sglang/srt/entrypoints/http_server.py of 0.5.9 answers
- /server_info: `{**dataclasses.asdict(server_args), **scheduler_info, "internal_states": ..., "version":
  __version__}` (server_args without its `model_config`); /get_server_info the same (deprecated alias);
- /model_info: model_path, tokenizer_path, is_generation, preferred_sampling_params, weight_version,
  has_image_understanding, has_audio_understanding, model_type, architectures of the model config;
  /get_model_info the same;
- /v1/models: `ModelList(data=[ModelCard(id=served_model_name, root=served_model_name,
  max_model_len=model_config.context_len)])`.
Here `server_args` comes from `prepare_server_args(argv)`, the launcher's own function, and the model config from
`ModelConfig.from_server_args`, on a CPU machine: torchvision imports as an inert stand-in (see
`_TorchvisionStandIn`), `get_device()` is answered "cuda" (what it returns on the GPU
machine the server runs on; on a CPU it raises), and what only a GPU run knows is not written (the scheduler's
limits, each DP rank's internal state: `internal_states` is empty; GPU-memory-derived defaults are as the
launcher leaves them without a GPU's memory size). `created` of /v1/models is this run's time.
"""

from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import json
import sys
import types
from pathlib import Path

import transformers.utils.import_utils

# transformers decides now, before the stand-in below exists, that torchvision is not installed.
assert not transformers.utils.import_utils.is_torchvision_available()


class _Placeholder(type):
    """Any name of the torchvision stand-in: a class whose attributes and calls are placeholders too."""

    def __getattr__(cls, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        return cls

    def __call__(cls, *args: object, **kwargs: object) -> object:
        return cls


class _TorchvisionStandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """SGLang 0.5.9's multimodal helpers (sglang/srt/multimodal/internvl_utils.py, imported by its configs
    package) import torchvision at module level, and torchvision's PyPI wheels need a CUDA build of torch. None
    of it runs when server arguments are resolved: torchvision and its submodules import as placeholders."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "torchvision" or fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda name: _Placeholder("placeholder", (), {})  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


sys.meta_path.insert(0, _TorchvisionStandIn())

import sglang.srt.server_args as server_args_module  # noqa: E402
from sglang.srt.configs.model_config import ModelConfig  # noqa: E402
from sglang.srt.entrypoints.openai.protocol import ModelCard, ModelList  # noqa: E402
from sglang.version import __version__  # noqa: E402

server_args_module.get_device = lambda device_id=None: "cuda"  # the GPU machine's answer, see the docstring

BASE = ["--model-path", "Qwen/Qwen3-8B", "--tp-size", "4"]
STARTS = {
    "start-a": BASE,
    "start-b": BASE,  # the same flags, restarted
    "cuda-graph-off": BASE + ["--disable-cuda-graph"],
}


def replies(argv: list[str]) -> dict[str, object]:
    """The answers of a server started with `argv`, by file name."""
    server_args = server_args_module.prepare_server_args(argv)
    model_config = ModelConfig.from_server_args(server_args)
    info = dataclasses.asdict(server_args)
    info.pop("model_config", None)
    info.update({"internal_states": [], "version": __version__})
    model_info = {
        "model_path": server_args.model_path, "tokenizer_path": server_args.tokenizer_path,
        "is_generation": model_config.is_generation,
        "preferred_sampling_params": server_args.preferred_sampling_params,
        "weight_version": server_args.weight_version,
        "has_image_understanding": model_config.is_image_understandable_model,
        "has_audio_understanding": model_config.is_audio_understandable_model,
        "model_type": getattr(model_config.hf_config, "model_type", None),
        "architectures": getattr(model_config.hf_config, "architectures", None),
    }
    name = server_args.served_model_name
    models = ModelList(data=[ModelCard(id=name, root=name, max_model_len=model_config.context_len)])
    return {"server_info.json": info, "model_info.json": model_info, "models.json": models.model_dump()}


def main(out: Path) -> None:
    for name, argv in STARTS.items():
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        for file, document in replies(argv).items():
            (folder / file).write_text(json.dumps(document, sort_keys=True, default=str) + "\n", "utf-8")
        (folder / "argv").write_text(" ".join(["python3", "-m", "sglang.launch_server", *argv]) + "\n", "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
