"""The `- Key: value` environment dumps of the Hugging Face family, one parser for the shape.

`transformers env` (`transformers-cli env`), `accelerate env`, `diffusers-cli env`, `huggingface-cli env`
(`hf env`) and `llamafactory-cli env` all print `- <key>: <value>` lines, the tool's own version first.
Keys differ by tool and generation, so each tool has a table saying what each key means: a package's
version, torch's version (with the CUDA availability in brackets), Python, the platform, the first GPU's
name, or a setting kept as a raw field. A key no table names is kept as a raw field too, never guessed.

Indented lines below a key continue its value: accelerate's default config (`- key: value` pairs) and
diffusers' `Accelerator` (one `name, memory` line per GPU, as `nvidia-smi --query-gpu` prints them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

_KEY_LINE = re.compile(r"^(?P<indent>\s*)- (?P<key>[^:\n]+?)\s*:(?:[ \t\u3000]*(?P<value>.*))?$")
# The banner every tool prints first, and a shell prompt a user copied along.
_BANNER = re.compile(r"^\s*(Copy-and-paste the text below in your GitHub issue.*|>\s*\S+(-cli)? env\s*)$")
_VERSION_TOKEN = re.compile(r"^(?P<version>\d[\w.+!-]*)(?:[\s\u3000]|$)")
_TORCH_VALUE = re.compile(r"^(?P<version>\d\S*)(?:\s+\((?P<flag>[^)]*)\))?\s*$")
_ACCELERATOR_GPU = re.compile(r"^(?P<name>[^,]+),\s*(?P<mib>\d+)\s*MiB$")

# What a key means. `pkg:<name>`: that distribution's version. Others name a fact; `field`: a setting or a
# user's answer, kept raw.
_HUB_LIBRARIES = {"fastai": "pkg:fastai", "tensorflow": "pkg:tensorflow", "torch": "torch", "jinja2": "pkg:Jinja2",
                  "graphviz": "pkg:graphviz", "keras": "pkg:keras", "pydot": "pkg:pydot", "pillow": "pkg:pillow",
                  "hf_transfer": "pkg:hf_transfer", "gradio": "pkg:gradio", "tensorboard": "pkg:tensorboard",
                  "numpy": "pkg:numpy", "pydantic": "pkg:pydantic", "aiohttp": "pkg:aiohttp", "hf_xet": "pkg:hf-xet"}
_COMMON = {"platform": "platform", "python version": "python"}
_LIBRARIES = {"huggingface_hub version": "pkg:huggingface-hub", "safetensors version": "pkg:safetensors",
              "accelerate version": "pkg:accelerate", "transformers version": "pkg:transformers",
              "datasets version": "pkg:datasets", "peft version": "pkg:peft", "trl version": "pkg:trl",
              "deepspeed version": "pkg:deepspeed", "bitsandbytes version": "pkg:bitsandbytes",
              "vllm version": "pkg:vllm", "xformers version": "pkg:xformers", "numpy version": "pkg:numpy",
              "jax version": "pkg:jax", "jaxlib version": "pkg:jaxlib",
              "tensorflow version (gpu?)": "pkg:tensorflow", "flax version (cpu?/gpu?/tpu?)": "pkg:flax",
              "gguf version": "pkg:gguf", "optimum-quanto version": "pkg:optimum-quanto",
              "torchao version": "pkg:torchao", "nvidia-modelopt version": "pkg:nvidia-modelopt"}


@dataclass(frozen=True)
class Tool:
    """One tool of the family: the first key it prints (its own version), its package, and its key table."""

    name: str
    command: str
    first_keys: tuple[str, ...]
    package: str
    keys: dict[str, str] = field(default_factory=dict)


TOOLS: tuple[Tool, ...] = (
    Tool("transformers", "transformers env", ("`transformers` version",), "transformers", {
        **_COMMON, **_LIBRARIES,
        "pytorch version (gpu?)": "torch", "pytorch version (accelerator?)": "torch", "gpu type": "gpu_type"}),
    Tool("accelerate", "accelerate env", ("`accelerate` version",), "accelerate", {
        **_COMMON, "numpy version": "pkg:numpy", "pytorch version (gpu?)": "torch", "gpu type": "gpu_type",
        "`accelerate` default config": "accelerate_config", "`accelerate` configs": "accelerate_config"}),
    Tool("diffusers", "diffusers-cli env", ("`diffusers` version", "diffusers version"), "diffusers", {
        **_COMMON, **_LIBRARIES, "pytorch version (gpu?)": "torch", "accelerator": "accelerator"}),
    Tool("huggingface_hub", "huggingface-cli env", ("huggingface_hub version",), "huggingface-hub", {
        **_COMMON, **_HUB_LIBRARIES}),
    Tool("llamafactory", "llamafactory-cli env", ("`llamafactory` version",), "llamafactory", {
        **_COMMON, **_LIBRARIES, "pytorch version": "torch", "gpu type": "gpu_type", "gpu number": "gpu_number"}),
)


@dataclass
class _Entry:
    key: str
    value: str
    block: list[str] = field(default_factory=list)


def _norm(key: str) -> str:
    """A key as the tables spell it: lower case, leading emoji dropped (`🤗 Diffusers version`)."""
    return re.sub(r"^[^\w`]+", "", key.strip()).lower()


def _tool_of(key: str) -> Tool | None:
    return next((tool for tool in TOOLS if _norm(key) in tool.first_keys), None)


def detect(text: str) -> bool:
    """The first `- Key: value` line names a tool of the family, and at least two more such lines follow."""
    lines = [m for line in text.replace("\r", "").splitlines() if (m := _KEY_LINE.match(line))]
    return len(lines) >= 3 and _tool_of(lines[0]["key"]) is not None


def starts(lines: list[str], i: int) -> bool:
    """The banner a tool prints before its dump, or (no banner above) its first key line: one naming a tool of
    the family that follows no other key line (transformers' dump lists `Huggingface_hub version` too)."""
    if re.match(r"^\s*Copy-and-paste the text below in your GitHub issue", lines[i]):
        return True
    match = _KEY_LINE.match(lines[i])
    if not match or _tool_of(match["key"]) is None:
        return False
    above = next((line for line in reversed(lines[max(0, i - 3):i]) if line.strip()), "")
    return not above.strip().startswith("Copy-and-paste") and not _KEY_LINE.match(above)


def _entries(paste: Paste) -> tuple[Tool, list[_Entry]]:
    """The key lines at the first key's indent, each with the deeper-indented lines that continue it."""
    entries: list[_Entry] = []
    indent: int | None = None
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        if _BANNER.match(line):
            paste.claim(i)
            paste.noise.append(i)
            continue
        match = _KEY_LINE.match(line)
        depth = len(line) - len(line.lstrip())
        if match and (indent is None or depth <= indent):
            indent = depth if indent is None else indent
            entries.append(_Entry(match["key"].strip(), (match["value"] or "").strip()))
            paste.claim(i)
        elif entries and _continues(entries[-1], line, depth, indent):
            entries[-1].block.append(line.strip())
            paste.claim(i)
    tool = _tool_of(entries[0].key) if entries else None
    if tool is None:
        raise ValueError("its first `- Key: value` line names no tool of the Hugging Face family")
    return tool, entries


def _continues(entry: _Entry, line: str, depth: int, indent: int | None) -> bool:
    """A line deeper than the key lines continues the last value; so does a further GPU of diffusers'
    `Accelerator`, which nvidia-smi prints at the margin."""
    if indent is not None and depth > indent:
        return True
    return _norm(entry.key) == "accelerator" and bool(_ACCELERATOR_GPU.match(line.strip()))


def _version(value: str) -> str | None:
    """The leading version of a value (`0.34.2 (a user's note)` → 0.34.2); None for `not installed`, `N/A`."""
    match = _VERSION_TOKEN.match(value.strip())
    return match["version"] if match else None


@dataclass
class _Read:
    packages: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    torch: str | None = None
    cuda_available: bool | None = None
    python: str | None = None
    platform: str | None = None
    gpu_names: list[str] = field(default_factory=list)
    gpu_memory: list[int] = field(default_factory=list)
    gpu_count: int | None = None
    fields: dict[str, str] = field(default_factory=dict)


def _torch(read: _Read, value: str) -> bool:
    """`2.2.1+cu121 (True)`, `2.5.1+cu124 (GPU)`, `2.5.1+cu124 (CUDA)`, a bare version, or `not installed`."""
    match = _TORCH_VALUE.match(value)
    if not match:
        return facts.known(value) is None or value.lower().startswith("not installed")
    read.torch = match["version"]
    flag = (match["flag"] or "").strip().lower()
    # True/False is torch.cuda.is_available(); GPU (llamafactory) and CUDA (transformers) are said only when true.
    read.cuda_available = {"true": True, "gpu": True, "cuda": True, "false": False}.get(flag)
    return True


def _read_entry(read: _Read, meaning: str, entry: _Entry) -> bool:
    """Put one entry's value where its meaning says; False when the value is not of the expected shape."""
    value = entry.value
    if meaning.startswith("pkg:"):
        version = _version(value)
        if version:
            read.packages.append((meaning[4:], version))
        elif facts.known(value) is None or value.lower().startswith("not installed"):
            read.missing.append(meaning[4:])
        else:
            return False
    elif meaning == "torch":
        if not _torch(read, value):
            return False
        if read.torch:
            read.packages.append(("torch", read.torch))
    elif meaning == "python":
        read.python = _version(value)
        return read.python is not None
    elif meaning == "platform":
        read.platform = facts.known(value)
    elif meaning == "gpu_type":
        read.gpu_names = [value] if facts.known(value) else []
    elif meaning == "gpu_number":
        read.gpu_count = int(value) if value.isdigit() else None
        return read.gpu_count is not None
    elif meaning == "accelerator":
        return _accelerator(read, entry)
    elif meaning == "accelerate_config":
        for row in entry.block:
            key, _, setting = row.lstrip("- ").partition(":")
            read.fields[f"accelerate config: {key.strip()}" if setting else "accelerate config"] = (
                setting.strip() if setting else key.strip())
    return True


def _accelerator(read: _Read, entry: _Entry) -> bool:
    """diffusers' `Accelerator`: nvidia-smi's `name, N MiB` per GPU (the first on the key's line)."""
    rows = [entry.value, *entry.block] if entry.value else list(entry.block)
    if not entry.block and facts.known(entry.value) is None:
        return True  # `NA`: nvidia-smi gave nothing, which says no GPU count either way
    gpus = [m for row in rows if (m := _ACCELERATOR_GPU.match(row))]
    if not rows or len(gpus) != len(rows):
        return False
    read.gpu_names = [m["name"].strip() for m in gpus]
    read.gpu_memory = [int(m["mib"]) for m in gpus]
    read.gpu_count = len(gpus)
    return True


def _gpu(read: _Read, source: str) -> JSONObject | None:
    if not read.gpu_names:
        return None
    gpus: JSONObject = {}
    for index, name in enumerate(read.gpu_names):
        gpu: JSONObject = {"index": index, "name": name}
        if index < len(read.gpu_memory):
            gpu["memory"] = {"total_mib": read.gpu_memory[index]}
        gpus[f"GPU{index}"] = gpu
    data: JSONObject = {"source": source, "gpus": gpus}
    if read.gpu_count is not None:
        data["gpu_count"] = read.gpu_count
    return data


def parse(text: str) -> Parsed:
    """The python, packages, torch, gpu and system facts of one Hugging Face `env` dump."""
    paste = Paste.of(text)
    tool, entries = _entries(paste)
    read = _Read()
    unread: list[str] = []
    for position, entry in enumerate(entries):
        if position == 0:
            version = _version(entry.value)
            if version is None:
                raise ValueError(f"its first line names {tool.command} but no version: {entry.key}: {entry.value}")
            read.packages.append((tool.package, version))
            continue
        meaning = tool.keys.get(_norm(entry.key), "field")
        if meaning == "field" or not _read_entry(read, meaning, entry):
            read.fields[entry.key] = "\n".join([entry.value, *entry.block]).strip()
            if meaning != "field":
                unread.append(entry.key)
    source = FORMAT.name
    platform = facts.platform_fields(read.platform)
    linux_release = platform.get("release") if platform and platform.get("system") == "Linux" else None
    torch = facts.torch_data(read.torch, cuda=facts.torch_version_cuda(read.torch),
                             cuda_available=read.cuda_available, device_count=read.gpu_count)
    probes: dict[str, JSONObject | None] = {
        "python": facts.python_data(read.python, read.platform) if read.python else None,
        "packages": facts.packages_data(read.packages, None),
        "torch": torch,
        "gpu": _gpu(read, source),
        "system": facts.system_data(None, linux_release, {}, {}),
    }
    if read.missing:
        read.fields["not installed"] = ", ".join(read.missing)
    if unread:
        read.fields["unread values"] = ", ".join(unread)
    # Only the GPUs diffusers lists from nvidia-smi are all of them; one `GPU type` names the first.
    complete = ["probes.gpu.data.gpus"] if read.gpu_count is not None and len(read.gpu_names) == read.gpu_count \
        else []
    return Parsed(probes={name: data for name, data in probes.items() if data}, variant=tool.command,
                  fields=read.fields, unclaimed=paste.unclaimed(), noise=paste.noise_lines(), complete=complete)


FORMAT = Format("hf-env", "transformers / accelerate / diffusers-cli / huggingface-cli / llamafactory-cli env",
                "huggingface", detect, parse, starts,
                start_hint=r"\s*(?:Copy-and-paste|- [^:\n]+?\s*:)")
