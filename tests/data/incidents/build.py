"""Rebuild the snapshot pairs of the incident corpus (see README.md) from real base recordings.

Run from the repository root: `python tests/data/incidents/build.py [SLUG ...]`. It needs this checkout's
driftcheck importable (the pairs are built through its command line). Each side of a pair is made of:

- the host facts (`system`, `env`, `nccl`, `python`, `process`): `driftcheck snapshot --replay` of an edited
  copy of the recording tests/data/hosts/debian12-vm-docker-cpufreq-performance (a real Debian 12 container;
  the governor incident replays the recorded powersave variant);
- the GPUs and links (`gpu`, `pcie`): `driftcheck import` of an edited copy of a real 8x H100 80GB HBM3
  `nvidia-smi -q` (tests/data/nvidia/text, driver 535.161.08) and the real `nvidia-smi topo -m` of an 8x H100
  (tests/data/nvidia/topo, vllm-project/vllm#5563);
- the interpreter (`packages`, `kernels`, `torch`): the package set of a real vLLM 0.9.1 environment (the pip
  list of the `collect_env` report in vllm-project/vllm#20862) with the incident's versions, written in the
  shapes of docs/data-shapes.md. Neither recording holds those wheels, so the digests of their compiled files
  (`build_id`, `kernels.files.*.sha256`) and torch's `git_version` are derived from name, version and path: a
  version change changes them, as it does on a real machine, and nothing else does;
- where the incident needs it, facts no CLI input carries are set in the JSON: sysfs ACS control registers,
  and the embedded `bench` results (made with driftcheck's own summary statistics from seeded samples around
  the stated medians).

The built a.json/b.json are committed, so tests never rebuild. Redaction digests are keyed by a fixed secret
and every timestamp is fixed, so a rebuild only changes what an edit changed (and probe durations).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
NVIDIA = ROOT / "tests" / "data" / "nvidia"
BASE_RECORDING = "debian12-vm-docker-cpufreq-performance"
POWERSAVE_RECORDING = "debian12-vm-docker-cpufreq-powersave"
SMI_TEXT = NVIDIA / "text" / "q_h100-80gb-hbm3-x8_535.161.08.txt"
TOPO_TEXT = NVIDIA / "topo" / "h100-80gb-hbm3-x8_535.161.08_nv18_nic10_vllm-5563.txt"
SITE = "/opt/ml-env/lib/python3.11/site-packages"
CREATED = {"a": "2025-11-20T09:00:00+00:00", "b": "2025-11-21T09:00:00+00:00"}
SECRET = hashlib.sha256(b"driftcheck incident corpus").digest()

Doc = dict[str, Any]

# ---- the interpreter: a real vLLM 0.9.1 environment -------------------------------------------------

# name -> (version, compiled files). Versions of the ML stack from the pip list of vllm-project/vllm#20862;
# the rest are ordinary dependencies of such an environment at the same time (mid 2025).
BASE_PACKAGES: dict[str, tuple[str, int]] = {
    "torch": ("2.7.0+cu128", 412), "torchvision": ("0.22.0+cu128", 9), "torchaudio": ("2.7.0+cu128", 6),
    "triton": ("3.3.0", 14), "vllm": ("0.9.1", 11), "xformers": ("0.0.30", 31), "numpy": ("2.2.6", 18),
    "transformers": ("4.52.4", 0), "pyzmq": ("26.4.0", 2), "flashinfer-python": ("0.2.6.post1", 0),
    "nvidia-cublas-cu12": ("12.8.3.14", 3), "nvidia-cuda-cupti-cu12": ("12.8.57", 4),
    "nvidia-cuda-nvrtc-cu12": ("12.8.61", 3), "nvidia-cuda-runtime-cu12": ("12.8.57", 2),
    "nvidia-cudnn-cu12": ("9.7.1.26", 8), "nvidia-cufft-cu12": ("11.3.3.41", 2), "nvidia-cufile-cu12": ("1.13.0.11", 3),
    "nvidia-curand-cu12": ("10.3.9.55", 1), "nvidia-cusolver-cu12": ("11.7.2.55", 2),
    "nvidia-cusparse-cu12": ("12.5.7.53", 1), "nvidia-cusparselt-cu12": ("0.6.3", 1), "nvidia-nccl-cu12": ("2.26.2", 1),
    "nvidia-nvjitlink-cu12": ("12.8.61", 1), "nvidia-nvtx-cu12": ("12.8.55", 1),
    "certifi": ("2025.4.26", 0), "urllib3": ("2.4.0", 0), "six": ("1.17.0", 0), "idna": ("3.10", 0),
    "charset-normalizer": ("3.4.2", 3), "requests": ("2.32.3", 0), "packaging": ("25.0", 0),
    "filelock": ("3.18.0", 0), "tqdm": ("4.67.1", 0), "typing-extensions": ("4.14.0", 0), "pyyaml": ("6.0.2", 1),
    "jinja2": ("3.1.6", 0), "markupsafe": ("3.0.2", 1), "fsspec": ("2025.5.1", 0), "networkx": ("3.4.2", 0),
    "sympy": ("1.14.0", 0), "mpmath": ("1.3.0", 0), "psutil": ("7.0.0", 1), "pydantic": ("2.11.5", 0),
    "pydantic-core": ("2.33.2", 1), "safetensors": ("0.5.3", 1), "tokenizers": ("0.21.1", 1),
    "huggingface-hub": ("0.32.4", 0), "regex": ("2024.11.6", 1), "aiohttp": ("3.12.9", 4), "fastapi": ("0.115.12", 0),
    "uvicorn": ("0.34.3", 0), "starlette": ("0.46.2", 0), "sentencepiece": ("0.2.0", 1), "protobuf": ("5.29.5", 0),
    "msgspec": ("0.19.0", 1), "xgrammar": ("0.1.19", 2), "cloudpickle": ("3.1.1", 0),
    "prometheus-client": ("0.22.1", 0),
    "pip": ("25.1.1", 0), "setuptools": ("79.0.1", 0),
}
# Packages some incidents add to the base set: how many compiled files their wheels hold.
EXTRA_COMPILED = {"flashinfer-cubin": 412, "flashinfer-jit-cache": 96}
DISPLAY_NAMES = {"pyyaml": "PyYAML", "markupsafe": "MarkupSafe", "jinja2": "Jinja2",
                 "typing-extensions": "typing_extensions"}
# The compiled files `kernels` hashes for the packages that decide inference speed: dist -> [(path, size)].
KERNEL_FILES: dict[str, list[tuple[str, int]]] = {
    "torch": [("torch/lib/libtorch_cuda.so", 1_006_834_688), ("torch/_C.cpython-311-x86_64-linux-gnu.so", 37_920)],
    "triton": [("triton/_C/libtriton.so", 473_186_304)],
    "vllm": [("vllm/_C.abi3.so", 351_447_040), ("vllm/_moe_C.abi3.so", 97_845_248)],
    "xformers": [("xformers/_C.so", 52_346_880)],
    "nvidia-nccl-cu12": [("nvidia/nccl/lib/libnccl.so.2", 245_891_072)],
    "nvidia-cublas-cu12": [("nvidia/cublas/lib/libcublas.so.12", 107_473_920),
                           ("nvidia/cublas/lib/libcublasLt.so.12", 751_771_648)],
    "nvidia-cudnn-cu12": [("nvidia/cudnn/lib/libcudnn.so.9", 112_345_088),
                          ("nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9", 589_766_656)],
    "nvidia-cuda-runtime-cu12": [("nvidia/cuda_runtime/lib/libcudart.so.12", 728_800)],
    "flashinfer-python": [],
}
LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _wheel_tags(name: str, compiled: int) -> list[str]:
    if not compiled:
        return ["py3-none-any"]
    if name.startswith("nvidia-") or name in ("triton", "vllm"):
        return ["py3-none-manylinux_2_28_x86_64" if name.startswith("nvidia-") else "cp311-cp311-manylinux_2_28_x86_64"]
    return ["cp311-cp311-manylinux_2_17_x86_64", "cp311-cp311-manylinux2014_x86_64"]


def packages_data(versions: dict[str, str | None]) -> tuple[Doc, Doc, Doc]:
    """`packages`, `kernels` and `torch` probe data for the base set with `versions` applied (None removes)."""
    chosen: dict[str, tuple[str, int]] = dict(BASE_PACKAGES)
    for name, version in versions.items():
        if version is None:
            chosen.pop(name, None)
        else:
            chosen[name] = (version, chosen.get(name, (version, EXTRA_COMPILED.get(name, 0)))[1])
    records = {}
    for name, (version, compiled) in sorted(chosen.items()):
        build = "sha256:" + _digest("record", name, version) if compiled else None
        records[name] = {"name": DISPLAY_NAMES.get(name, name), "version": version, "location": SITE,
                         "installer": "pip", "editable": False, "direct_url": None,
                         "wheel_tags": _wheel_tags(name, compiled), "build_id": build, "compiled_files": compiled}
    packages = {"interpreter": "/opt/ml-env/bin/python", "packages": records, "duplicates": {}, "conda": None}
    files = {}
    for dist, entries in KERNEL_FILES.items():
        if dist not in chosen:
            continue
        for path, size in entries:
            files[f"{dist}:{path}"] = {"path": path, "size_bytes": size,
                                       "sha256": _digest("file", dist, chosen[dist][0], path), "record_match": True}
    kernels = {"files": files, "modified_in_place": {},
               "jit_caches": {"triton": {"path": "/root/.triton/cache", "files": 0, "bytes": 0,
                                         "listing_digest": hashlib.sha256(b"").hexdigest()},
                              "torch_inductor": None, "flashinfer": None, "cuda_compute_cache": None,
                              "vllm": None, "deep_gemm": None}}
    wheels = {name: version for name, (version, _) in sorted(chosen.items()) if name.startswith("nvidia-")}
    torch_version = chosen.get("torch", (None, 0))[0]
    # torch/version.py names the commit the wheel was built from; like the file digests, derived from the version.
    git_version = _digest("git", torch_version)[:40] if torch_version else None
    torch = {"location": f"{SITE}/torch", "version": torch_version, "git_version": git_version, "debug": False,
             "cuda_version": _torch_cuda(torch_version), "hip_version": None,
             "cudnn_version": _three(wheels.get("nvidia-cudnn-cu12")),
             "nccl_version": _three(wheels.get("nvidia-nccl-cu12")),
             "cuda_wheels": wheels, "deep": False, "cuda_available": None, "device_count": None, "devices": None,
             "arch_list": None, "backends": None, "config": None}
    return packages, kernels, torch


def _three(version: str | None) -> str | None:
    return ".".join(version.split(".")[:3]) if version else None


def _torch_cuda(version: str | None) -> str | None:
    match = re.search(r"\+cu(\d+)(\d)$", version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def with_kernel_file(kernels: Doc, dist: str, path: str, version: str, size: int) -> None:
    """Record one more compiled file of `dist` (a system library when `dist` is `system`)."""
    key = f"{dist}:{path}"
    kernels["files"][key] = {"path": path, "size_bytes": size, "sha256": _digest("file", dist, version, path),
                             "record_match": None if dist == "system" else True}


# ---- the GPUs: an edited `nvidia-smi -q` --------------------------------------------------------------

def _gpu_blocks(text: str) -> list[tuple[int, int]]:
    starts = [m.start() for m in re.finditer(r"^GPU [0-9A-F]{8}:", text, re.M)]
    return list(zip(starts, [*starts[1:], len(text)], strict=True))


def smi_set(field: str, value: str, gpus: list[int] | None = None, section: str | None = None,
            nth: int = 0) -> Callable[[str], str]:
    """An edit of `nvidia-smi -q`: `field : value` on the given GPUs (all when None). `section` limits the edit
    to the lines after a section header (e.g. `MIG Mode`); `nth` picks which occurrence in the block."""
    pattern = re.compile(rf"^(\s*{re.escape(field)}\s*: ).*$", re.M)

    def edit(text: str) -> str:
        out, last = [], 0
        for index, (start, end) in enumerate(_gpu_blocks(text)):
            out.append(text[last:start])
            block = text[start:end]
            if gpus is None or index in gpus:
                offset = 0
                if section is not None:
                    found = re.search(rf"^\s*{re.escape(section)}\s*$", block, re.M)
                    if found is None:
                        raise ValueError(f"no section {section!r} in GPU block {index}")
                    offset = found.end()
                matches = list(pattern.finditer(block, offset))
                if len(matches) <= nth:
                    raise ValueError(f"no field {field!r} in GPU block {index}")
                m = matches[nth]
                block = block[:m.start()] + m.group(1) + value + block[m.end():]
            out.append(block)
            last = end
        out.append(text[last:])
        return "".join(out)
    return edit


def smi_header(field: str, value: str) -> Callable[[str], str]:
    """An edit of the header of `nvidia-smi -q` (driver and CUDA version)."""
    def edit(text: str) -> str:
        new, count = re.subn(rf"^({re.escape(field)}\s*: ).*$", lambda m: m.group(1) + value, text, count=1, flags=re.M)
        if not count:
            raise ValueError(f"no header field {field!r}")
        return new
    return edit


def smi_processes(gpus: list[int], name: str, memory_mib: int, pid: int) -> Callable[[str], str]:
    """Another compute process on the given GPUs (the `Processes` section nvidia-smi prints)."""
    def edit(text: str) -> str:
        out, last = [], 0
        for index, (start, end) in enumerate(_gpu_blocks(text)):
            out.append(text[last:start])
            block = text[start:end]
            if index in gpus:
                entry = ("    Processes\n"
                         "        GPU instance ID                   : N/A\n"
                         "        Compute instance ID               : N/A\n"
                         f"        Process ID                        : {pid}\n"
                         "            Type                          : C\n"
                         f"            Name                          : {name}\n"
                         f"            Used GPU Memory               : {memory_mib} MiB\n")
                block = re.sub(r"^    Processes\s*: None\n", entry, block, count=1, flags=re.M)
            out.append(block)
            last = end
        out.append(text[last:])
        return "".join(out)
    return edit


# ---- one side of a pair --------------------------------------------------------------------------------

@dataclass
class Side:
    """What one snapshot of a pair differs by from the base (each field optional)."""

    recording: str = BASE_RECORDING
    environ: dict[str, str | None] = field(default_factory=dict)
    files: dict[str, str | None] = field(default_factory=dict)
    dirs: dict[str, list[str]] = field(default_factory=dict)
    modules: dict[str, str | None] = field(default_factory=dict)
    smi: list[Callable[[str], str]] = field(default_factory=list)
    packages: dict[str, str | None] = field(default_factory=dict)
    nccl_dist: str | None = None
    patch: list[Callable[[Doc], None]] = field(default_factory=list)
    bench: dict[str, float] | None = None

    def merged(self, other: Side) -> Side:
        """This side with `other`'s edits on top (lists appended, maps updated)."""
        return Side(recording=other.recording if other.recording != BASE_RECORDING else self.recording,
                    environ={**self.environ, **other.environ}, files={**self.files, **other.files},
                    dirs={**self.dirs, **other.dirs},
                    modules={**self.modules, **other.modules}, smi=[*self.smi, *other.smi],
                    packages={**self.packages, **other.packages}, nccl_dist=other.nccl_dist or self.nccl_dist,
                    patch=[*self.patch, *other.patch], bench=other.bench if other.bench is not None else self.bench)


BASE_MODULES: dict[str, str | None] = {
    "nvidia": "535.161.08", "nvidia_uvm": "535.161.08", "nvidia_modeset": "535.161.08", "nvidia_drm": "535.161.08",
    "ib_core": "", "ib_uverbs": "", "mlx5_core": "23.10-1.1.9", "mlx5_ib": "", "rdma_cm": "", "nv_peer_mem": "1.3-0"}
BASE_ENVIRON = {"HOSTNAME": "gpu-node-17", "PATH": "/opt/ml-env/bin:/usr/local/bin:/usr/bin:/bin",
                "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "eth0",
                "HF_HOME": "/data/hf", "VLLM_WORKER_MULTIPROC_METHOD": "spawn"}


def _edit_recording(src: Path, dst: Path, side: Side) -> None:
    shutil.copytree(src, dst)
    host = json.loads((dst / "host.json").read_text())
    environ = dict(host["environ"])
    for name, value in {**BASE_ENVIRON, **side.environ}.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    host["environ"] = dict(sorted(environ.items()))
    # A module maps to its version, "" when loaded without a version file, None when not loaded.
    modules = {**BASE_MODULES, **side.modules}
    loaded = {name: version for name, version in modules.items() if version is not None}
    gone = {name for name, version in modules.items() if version is None}
    host["dirs"]["/sys/module"] = sorted((set(host["dirs"]["/sys/module"]) - gone) | set(loaded))
    for name, version in loaded.items():
        path = f"/sys/module/{name}/version"
        if version:
            host["missing"].pop(path, None)
            _write(dst, path, version + "\n")
        else:
            host["missing"][path] = {"error": "FileNotFoundError",
                                     "message": f"[Errno 2] No such file or directory: '{path}'"}
    if side.nccl_dist:
        entries = [e for e in host["dirs"][SITE] if not e.startswith("nvidia_nccl_cu")]
        host["dirs"][SITE] = sorted([*entries, side.nccl_dist])
    for path, names in side.dirs.items():
        host["dirs"][path] = list(names)
    for path, content in side.files.items():
        if content is None:
            (dst / "files" / path.lstrip("/")).unlink(missing_ok=True)
            host["missing"][path] = {"error": "FileNotFoundError",
                                     "message": f"[Errno 2] No such file or directory: '{path}'"}
        else:
            host["missing"].pop(path, None)
            _write(dst, path, content)
    (dst / "host.json").write_text(json.dumps(host, indent=1, sort_keys=True))


def _write(root: Path, path: str, content: str) -> None:
    target = root / "files" / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)


# Within one build, an identical recording or nvidia-smi output is replayed or imported once.
_REPLAYED: dict[str, str] = {}
_IMPORTED: dict[str, str] = {}


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _cli(home: Path, *args: str, ok: tuple[int, ...] = (0,)) -> str:
    env = {**os.environ, "DRIFTCHECK_HOME": str(home), "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "driftcheck", *args], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode not in ok:
        raise RuntimeError(f"driftcheck {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def build_side(side: Side, which: str, work: Path) -> Doc:
    """One snapshot: replay of the edited recording, import of the edited nvidia-smi output, the interpreter."""
    home = work / "home"
    home.mkdir(exist_ok=True)
    (home / "redaction.secret").write_bytes(SECRET)
    recording = work / f"rec-{which}"
    _edit_recording(HOSTS / side.recording, recording, side)
    key = _tree_digest(recording)
    if key not in _REPLAYED:
        host_json = work / f"host-{which}.json"
        _cli(home, "snapshot", "--replay", str(recording), "--no-sign", "--no-store", "-q", "-o", str(host_json),
             "--label", f"side {which}")
        _REPLAYED[key] = host_json.read_text()
    smi = SMI_TEXT.read_text()
    for edit in side.smi:
        smi = edit(smi)
    if smi not in _IMPORTED:
        smi_file = work / f"nvidia-smi-q-{which}.txt"
        smi_file.write_text(smi)
        gpu_json = work / f"gpu-{which}.json"
        _cli(home, "import", str(smi_file), str(TOPO_TEXT), "--no-store", "-o", str(gpu_json))
        _IMPORTED[smi] = gpu_json.read_text()
    doc = json.loads(_REPLAYED[key])
    imported = json.loads(_IMPORTED[smi])
    for probe in ("gpu", "pcie"):
        doc["probes"][probe] = imported["probes"][probe]
    packages, kernels, torch = packages_data(side.packages)
    driver = doc["probes"]["gpu"]["data"]["driver_version"]
    with_kernel_file(kernels, "system", LIBCUDA, driver, 62)
    for name, data in (("packages", packages), ("kernels", kernels), ("torch", torch)):
        doc["probes"][name] = {"status": "ok", "data": data, "error": None, "duration_s": 0.4}
    _align_nccl(doc)
    doc["created_at"] = CREATED[which]
    doc["label"] = {"a": "before", "b": "after"}[which]
    if side.bench is not None:
        doc["probes"]["bench"] = {"status": "ok", "data": bench_data(side.bench, which), "error": None,
                                  "duration_s": 31.5}
    for patch in side.patch:
        patch(doc)
    return doc


def _align_nccl(doc: Doc) -> None:
    """The NCCL library the nccl probe reports is the interpreter's nvidia-nccl wheel of this side."""
    nccl = doc["probes"]["nccl"]["data"]
    version = doc["probes"]["packages"]["data"]["packages"].get("nvidia-nccl-cu12", {}).get("version")
    if nccl is None or version is None:
        return
    path = f"{SITE}/nvidia/nccl/lib/libnccl.so.2"
    nccl["libraries"] = {path: {"version": version, "source": "wheel"}}
    nccl["library"] = {"path": path, "version": version, "source": "wheel"}


# ---- embedded benchmark results ------------------------------------------------------------------------

BENCH_UNITS = {"gemm_bf16_8192_tflops": ("TFLOP/s", True), "skinny_gemm_bf16_b1_h8192_gbps": ("GB/s", True),
               "device_copy_1024mib_gbps": ("GB/s", True), "allreduce_256mib_8gpu_busbw_gbps": ("GB/s", True),
               "launch_eager_us_per_op": ("us", False), "decode_graph_tok_per_s": ("tok/s", True)}
# Medians of a healthy 8x H100 SXM node (of the order of its datasheet and of published nccl-tests runs).
BENCH_BASE = {"gemm_bf16_8192_tflops": 712.0, "skinny_gemm_bf16_b1_h8192_gbps": 2870.0,
              "device_copy_1024mib_gbps": 2640.0, "allreduce_256mib_8gpu_busbw_gbps": 362.0,
              "launch_eager_us_per_op": 4.6, "decode_graph_tok_per_s": 251.0}


def bench_data(medians: dict[str, float], which: str) -> Doc:
    """The `bench` probe data of a quick-suite run with these medians (samples seeded by name and side)."""
    from driftcheck.stats.summary import summarize

    results = {}
    for name, median in sorted(medians.items()):
        unit, higher = BENCH_UNITS[name]
        rng = random.Random(f"{name}:{which}:{median}")
        samples = [round(median * (1 + rng.gauss(0, 0.004)), 4) for _ in range(15)]
        summary = summarize(samples).to_json()
        results[name] = {"unit": unit, "higher_is_better": higher, **summary, "samples": samples, "params": {},
                         "gpu_index": 0, "calibration": {"warmup_n": 5, "inner": 10, "stopped": "converged",
                                                         "elapsed_s": 2.1},
                         "clocks_before": {}, "clocks_after": {}, "efficiency": None}
    return {"suite": "quick", "device": "cuda", "device_name": "NVIDIA H100 80GB HBM3", "torch_version": "2.7.0+cu128",
            "threads": 2, "budget_s": 30.0, "elapsed_s": 29.4, "reference": None, "skipped": [],
            "machine_load": {"cpus": 2, "other_cpu_cores": 0.05, "load_1m": 0.3}, "warnings": [], "results": results}


def bench(**moved: float) -> dict[str, float]:
    """Bench medians: the healthy base with the named results scaled (0.6 = fell to 60%)."""
    return {name: round(value * moved.get(name, 1.0), 3) for name, value in BENCH_BASE.items()}


# ---- JSON patches for facts no CLI input carries ---------------------------------------------------------

def acs(enabled: bool) -> Callable[[Doc], None]:
    """sysfs link facts of the 8 GPUs with the ACS Control register of their upstream ports."""
    def patch(doc: Doc) -> None:
        pcie = doc["probes"]["pcie"]["data"]
        sysfs = {}
        for record in sorted(pcie["gpus"].values(), key=lambda r: r["index"]):
            bdf = str(record["pci_bus_id"]).lower()[4:]
            sysfs[bdf] = {"current_link_speed": "32.0 GT/s PCIe", "current_link_width": 16,
                          "max_link_speed": "32.0 GT/s PCIe", "max_link_width": 16,
                          "acs_ctl": "0x005d" if enabled else "0x0000"}
        pcie["sysfs"] = sysfs
    return patch


# ---- the incidents ------------------------------------------------------------------------------------

@dataclass
class Incident:
    """One real regression: its report, what changed, what must be blamed, and how the pair is built."""

    slug: str
    summary: str
    sources: list[str]
    symptom: str
    changed: str
    category: str
    evidence: list[str]
    b: Side
    herrings: list[tuple[str, Side]]
    a: Side = field(default_factory=Side)
    also_accept: list[str] = field(default_factory=list)
    hard: str | None = None
    modeled: str | None = None
    platform: str | None = None


P = "probes"
ENV = f"{P}.env.data.vars"
NCCL_ENV = f"{P}.nccl.data.env"
PKG = f"{P}.packages.data.packages"
GPU0 = "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"


def env_paths(name: str) -> list[str]:
    return [f"{ENV}.{name}", f"{NCCL_ENV}.{name}"] if name.startswith("NCCL_") else [f"{ENV}.{name}"]


def pkg_path(name: str, leaf: str = "version") -> str:
    return f"{PKG}.{name}.{leaf}"


def gpu_path(leaf: str, uuid: str = GPU0, probe: str = "gpu") -> str:
    return f"{P}.{probe}.data.gpus.{uuid}.{leaf}"


# Harmless changes, as in real life: each is (description, edit of B); the A value is the base.
def herring_pkg(name: str, after: str) -> tuple[str, Side]:
    return f"{name} {BASE_PACKAGES[name][0]} -> {after} (pure-Python utility)", Side(packages={name: after})


def herring_env(name: str, after: str | None) -> tuple[str, Side]:
    return f"{name} {BASE_ENVIRON.get(name, 'unset')} -> {after or 'unset'}", Side(environ={name: after})


def herring_idle_temp(delta: int) -> tuple[str, Side]:
    return (f"GPU temperatures read at idle {delta:+d} C",
            Side(smi=[smi_set("GPU Current Temp", f"{29 + delta} C"),
                      smi_set("Memory Current Temp", f"{39 + delta} C")]))




# ---- writing the corpus ---------------------------------------------------------------------------------

def sides(incident: Incident) -> tuple[Side, Side]:
    """A = base + the incident's A edits; B = A + the change + the red herrings."""
    a = Side().merged(incident.a)
    b = a.merged(incident.b)
    for _, herring in incident.herrings:
        b = b.merged(herring)
    return a, b


def incident_yaml(incident: Incident) -> dict[str, Any]:
    """The incident.yaml document: the report, the symptom, the change, the expected cause, the red herrings."""
    out: dict[str, Any] = {
        "slug": incident.slug,
        "summary": incident.summary,
        "sources": [{"url": url} for url in incident.sources],
        "symptom": incident.symptom,
        "changed": incident.changed,
        "expected": {"category": incident.category, "evidence": list(incident.evidence)},
        "red_herrings": [_herring_entry(text, side) for text, side in incident.herrings],
    }
    if incident.also_accept:
        out["expected"]["also_accept"] = list(incident.also_accept)
    if incident.hard:
        out["hard_case"] = incident.hard
    if incident.platform:
        out["platform"] = incident.platform
    if incident.modeled:
        out["modeled"] = incident.modeled
    return out


def _herring_entry(text: str, side: Side) -> dict[str, Any]:
    paths = [pkg_path(name) for name in side.packages] + [f"{ENV}.{name}" for name in side.environ]
    if side.smi:
        paths.append(f"{P}.gpu.data.gpus.*.temperature.gpu_c")
    return {"what": text, "paths": paths}


def _evidence_root() -> Callable[[str], tuple[str, ...]]:
    """The benchmark's notion of one underlying change (benchmarks/explain_accuracy.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("explain_accuracy", ROOT / "benchmarks" / "explain_accuracy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.evidence_root  # type: ignore[no-any-return]


def expected_evidence(incident: Incident, target: Path, work: Path) -> list[str]:
    """The incident's evidence paths plus every other change of the pair that is a view of the same change
    (the wheel, the library version it ships, its compiled files, torch's record of it): naming any of them
    names the cause."""
    root = _evidence_root()
    report = json.loads(_cli(work / "home", "diff", str(target / "a.json"), str(target / "b.json"), "--all",
                             "--format", "json", ok=(0, 1)))
    culprits = {root(path) for path in incident.evidence}
    views = [change["path"] for change in report["changes"] if root(change["path"]) in culprits]
    return list(dict.fromkeys([*incident.evidence, *sorted(views)]))


def write_pair(incident: Incident, work: Path) -> None:
    a_side, b_side = sides(incident)
    target = HERE / incident.slug
    target.mkdir(exist_ok=True)
    for which, side in (("a", a_side), ("b", b_side)):
        doc = build_side(side, which, work)
        (target / f"{which}.json").write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    incident.evidence = expected_evidence(incident, target, work)
    text = yaml.safe_dump(incident_yaml(incident), sort_keys=False, allow_unicode=True, width=110)
    (target / "incident.yaml").write_text(text)


README_HEAD = """# Incident corpus: real regressions `explain` must explain

Each folder is one environment-caused GPU/ML performance regression reported in a public thread, as a
snapshot pair: `a.json` (before), `b.json` (after) and `incident.yaml`:

- `sources`: the thread(s) the incident was read in; `summary`, `symptom` (the figures as reported) and
  `changed` (the fact that changed);
- `expected`: the cause `explain` must rank first: a DESIGN.md `category` (plus `also_accept` where the
  vocabulary honestly allows two, e.g. an NCCL wheel is both a package and NCCL) and the change paths of
  which at least one must be the first explanation's evidence: the culprit's own paths plus every change of
  the pair that is another view of the same change (the wheel's version, the library version torch records
  for it, its compiled files), by the benchmark's `evidence_root`;
- `red_herrings`: harmless changes mixed in, as in real life (a pure-Python utility upgrade, a HOSTNAME or
  PATH change, GPU temperatures read at idle);
- `hard_case`: present when two plausible changes compete and only the embedded benchmark results
  (the `bench` probe: all-reduce fell but GEMM did not; nothing moved) say which;
- `platform` / `modeled`: where the pair differs from the thread (the pairs are built on one 8x H100 base;
  a version the thread does not name).

How the pairs are built (`python tests/data/incidents/build.py [SLUG ...]`, see its docstring): host facts
from `driftcheck snapshot --replay` of an edited copy of the recording
`tests/data/hosts/debian12-vm-docker-cpufreq-performance` (the governor incident replays the recorded
powersave variant), GPUs and links from `driftcheck import` of an edited copy of a real 8x H100
`nvidia-smi -q` and `nvidia-smi topo -m` (tests/data/nvidia), and the interpreter's packages from the pip
list of a real vLLM 0.9.1 environment (vllm-project/vllm#20862) with the incident's versions. The digests
of compiled files are derived from name, version and path (no recording holds those wheels). The built
files are committed; tests never rebuild.

`benchmarks/explain_accuracy.py` runs `driftcheck diff A B --format json` on every pair and prints top-1 and
top-3 accuracy, every miss, and the presentation defects (one change told twice among the first three causes,
pins that would not restore A, field paths in titles). `tests/test_incident_corpus.py`
checks the data (sources, the expected evidence and the red herrings are real changes of the pair), not the
ranking.

## Incidents

| incident | expected cause | source | what happened |
| --- | --- | --- | --- |
"""


def write_readme(incidents: list[Incident]) -> None:
    """README.md: how the corpus is made, then one line per incident with its source."""
    lines = [f"| `{i.slug}` | {i.category}{' (hard)' if i.hard else ''} | {i.sources[0]} | {i.summary} |"
             for i in incidents]
    (HERE / "README.md").write_text(README_HEAD + "\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    from incidents import INCIDENTS

    write_readme(INCIDENTS)

    wanted = set(argv)
    unknown = wanted - {incident.slug for incident in INCIDENTS}
    if unknown:
        sys.stderr.write(f"unknown incident(s): {', '.join(sorted(unknown))}\n")
        return 2
    for incident in INCIDENTS:
        if wanted and incident.slug not in wanted:
            continue
        with tempfile.TemporaryDirectory(prefix="incident-") as tmp:
            write_pair(incident, Path(tmp))
        sys.stderr.write(f"built {incident.slug}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
