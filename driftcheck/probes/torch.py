"""`torch` probe: the build of the target interpreter's torch, and with --deep what it sees at runtime.

Importing torch costs a second or more (most of what `collect_env` spends) and can hang or crash on a
broken CUDA setup, so by default the probe reads what files already say: `torch/version.py` (version,
git commit, CUDA/HIP it was built for) and the versions of the nvidia-* wheels torch loads its cuDNN
and NCCL from. `--deep` imports torch, in the target interpreter inside an isolated child process, for
what only the running library knows: CUDA availability, devices, arch list, backend flags, build config.
"""

from __future__ import annotations

import re

from driftcheck.hosts import Host, ScriptCall
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty

_BUILD_SETTING = re.compile(r",\s*(?=[A-Z][A-Z0-9_]*=)")


def cudnn_version_string(value: object) -> str | None:
    """cuDNN's version as `major.minor.patch` from torch's integer (8902, 90100) or a wheel's `9.1.0.70`."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        # cuDNN 9 packs major*10000 + minor*100 + patch; cuDNN 8 and older packed major*1000.
        major, rest = divmod(value, 10000) if value >= 10000 else divmod(value, 1000)
        return f"{major}.{rest // 100}.{rest % 100}"
    return ".".join(str(value).split(".")[:3])


def nccl_version_string(value: object) -> str | None:
    """NCCL's version as `major.minor.patch` from torch's tuple (2, 21, 5), its old int 2708, or a wheel's."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return ".".join(str(part) for part in value[:3])
    if isinstance(value, int) and not isinstance(value, bool):
        # NCCL >= 2.9 packs major*10000 + minor*100 + patch; before it, major*1000 + minor*100 + patch.
        major, rest = divmod(value, 10000) if value >= 10000 else divmod(value, 1000)
        return f"{major}.{rest // 100}.{rest % 100}"
    return ".".join(str(value).split(".")[:3])


def _wheel_version(wheels: dict[str, str], prefix: str) -> str | None:
    matches = [version for name, version in sorted(wheels.items()) if name.startswith(prefix)]
    return matches[0] if matches else None


def parse_config_show(text: str | None) -> JSONObject:
    """`torch.__config__.show()` as fields: `key: value` lines, free-text features, and build settings."""
    if not text:
        return {}
    config: JSONObject = {}
    features: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("- "):
            continue
        item = stripped[2:].strip()
        key, sep, value = item.partition(":")
        if sep and key == "Build settings":
            settings = {}
            for part in _BUILD_SETTING.split(value.strip().rstrip(",")):
                name, eq, setting = part.partition("=")
                if eq:
                    settings[name.strip()] = setting.strip()
            config["build_settings"] = settings
        elif sep and len(key) <= 40:
            config[key.strip()] = value.strip()
        else:
            features.append(item)
    config["features"] = features
    return config


class TorchProbe(Probe):
    name = "torch"
    description = "torch build: version, git commit, CUDA/cuDNN/NCCL versions; runtime facts with --deep"
    timeout_s = 90.0
    isolated = True

    def isolated_with(self, options: ProbeOptions) -> bool:
        # Only --deep imports torch, which can hang or crash; reading torch's files is as safe as any probe's.
        return options.deep

    def _call(self, options: ProbeOptions) -> ScriptCall:
        return ScriptCall("torch_facts", ("--deep",) if options.deep else (), self.timeout_s - 5)

    def interpreter_calls(self, host: Host, options: ProbeOptions) -> list[ScriptCall]:
        # An import of torch stays out of the run shared with the other probes: it may crash that run.
        return [] if options.deep else [self._call(options)]

    def gather(self, host: Host, options: ProbeOptions) -> JSONValue:
        call = self._call(options)
        return host.python(call.script_name, call.args, timeout_s=call.timeout_s)

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict) or "installed" not in raw:
            raise ValueError("torch_facts printed no torch facts")
        if not raw["installed"]:
            raise ProbeUnavailable(f"torch is not installed for {raw.get('interpreter') or 'the target python'}")
        if raw.get("import_error"):
            raise RuntimeError(f"torch is installed but fails to import: {raw['import_error']}")
        files = object_or_empty(raw.get("version_py"))
        wheels = {name: str(version) for name, version in object_or_empty(raw.get("cuda_wheels")).items()}
        deep = found if isinstance(found := raw.get("deep"), dict) else None
        data: JSONObject = {
            "location": raw.get("location"),
            "version": files.get("__version__") or raw.get("dist_version"),
            "git_version": files.get("git_version"),
            "debug": files.get("debug"),
            "cuda_version": files.get("cuda"),
            "hip_version": files.get("hip"),
            "cudnn_version": cudnn_version_string(_wheel_version(wheels, "nvidia-cudnn-")),
            "nccl_version": nccl_version_string(_wheel_version(wheels, "nvidia-nccl-")),
            "cuda_wheels": wheels,
            "deep": deep is not None,
            "cuda_available": None,
            "device_count": None,
            "devices": None,
            "arch_list": None,
            "backends": None,
            "config": None,
        }
        if deep is not None:
            # What the imported library reports wins over what the files said: it is what actually loaded.
            data.update({
                "version": deep.get("version") or data["version"],
                "git_version": deep.get("git_version") or data["git_version"],
                "cuda_version": deep.get("cuda") if deep.get("cuda") is not None else data["cuda_version"],
                "hip_version": deep.get("hip") if deep.get("hip") is not None else data["hip_version"],
                "cudnn_version": cudnn_version_string(deep.get("cudnn")) or data["cudnn_version"],
                "nccl_version": nccl_version_string(deep.get("nccl")) or data["nccl_version"],
                "cuda_available": deep.get("cuda_available"),
                "device_count": deep.get("device_count"),
                "devices": dict(object_or_empty(deep.get("devices"))),
                "arch_list": list(list_or_empty(deep.get("arch_list"))),
                "backends": dict(object_or_empty(deep.get("backends"))),
                "config": parse_config_show(_text(deep.get("config_show"))),
            })
        return data


def _text(value: JSONValue) -> str | None:
    return value if isinstance(value, str) else None
