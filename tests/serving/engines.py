"""Real SGLang and vLLM releases for the tests, installed once into a cache outside the project's venv.

A release's wheel is downloaded (`pip download --no-deps`), only its Python sources and its metadata are unpacked
(the compiled kernels are never imported on a CPU machine), and the light packages its argument modules import are
installed beside it with `pip install --no-deps --target`, each pinned to a version the release's own METADATA
(`Requires-Dist`) allows. torch, transformers, pydantic, fastapi, openai and prometheus_client are the ones of the
test's own interpreter (the project's test extra brings them); nothing is installed into that interpreter.

The packages listed per release are what its modules import when tools/engine_flag_table.py builds the parser and
when tests/data/servers/make_vllm_replies.py runs (found by importing and adding what was missing, one at a time).

The cache is `$DRIFTCHECK_TEST_CACHE`, else `$XDG_CACHE_HOME/driftcheck-tests`, else `~/.cache/driftcheck-tests`;
a release lives in `engines/<name>-<digest of its recipe>` (a changed pin is a new directory), built in a temporary
directory beside it and renamed into place under a file lock, so two test processes never build one twice or see
one half-built. `DRIFTCHECK_ENGINE_PATHS="vllm-0.34.0=PYTHONPATH;..."` still names a release's path by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


class EngineUnavailable(Exception):
    """A release cannot be provided here (no network, the index refuses a pin); the message says why."""


# aiohttp and the pieces it imports at module level (each pinned to what aiohttp 3.14.5 requires).
_AIOHTTP = ("aiohttp==3.14.5", "aiohappyeyeballs==2.7.1", "aiosignal==1.4.0", "attrs==26.1.0",
            "frozenlist==1.8.0", "multidict==7.2.1", "propcache==0.5.4", "yarl==1.25.1")
# what every vLLM release here imports for its engine arguments (vllm/engine/arg_utils.py and vllm/config)
_VLLM_COMMON = (*_AIOHTTP, "cachetools==8.0.3", "cbor2==6.3.0", "cloudpickle==3.1.3", "msgspec==0.23.0",
                "pillow==13.0.0", "py-cpuinfo==9.0.0", "pybase64==1.5.1", "pyzmq==27.3.0", "requests==2.34.2",
                "certifi==2026.10.19.post1", "urllib3==2.8.0", "uvloop==0.23.0")

# vLLM 0.22.0 predates VLLM_TARGET_DEVICE: without a GPU it finds the CPU platform only through a platform plugin
# (vllm/platforms/__init__.py loads the entry points of group `vllm.platform_plugins`), written beside the packages.
_PLATFORM_PLUGIN = {
    "cpu_platform_plugin/__init__.py": 'def register():\n    return "vllm.platforms.cpu.CpuPlatform"\n',
    "cpu_platform_plugin-0.dist-info/METADATA": "Metadata-Version: 2.1\nName: cpu-platform-plugin\nVersion: 0\n",
    "cpu_platform_plugin-0.dist-info/entry_points.txt": "[vllm.platform_plugins]\ncpu = cpu_platform_plugin:register\n",
}


@dataclass(frozen=True)
class Release:
    """One pinned release: its distribution and version, the packages its modules need, and whether it runs here."""

    distribution: str
    version: str
    requirements: tuple[str, ...]
    # Packages whose wheel is only partly unpacked (its Python files, its metadata and the named members):
    # triton's CUDA toolchain is most of its 285 MB wheel and nothing here compiles.
    partial: tuple[tuple[str, tuple[str, ...]], ...] = ()
    platform_plugin: bool = False
    # Why this release's modules cannot be imported on a CPU machine (then only its source is provided).
    not_importable: str = ""

    @property
    def name(self) -> str:
        """`vllm-0.34.0`: the name DRIFTCHECK_ENGINE_PATHS and the shipped tables use."""
        return f"{self.distribution}-{self.version}"

    def key(self) -> str:
        """The cache directory's name: the release and a digest of everything that makes its directory."""
        recipe = json.dumps([self.requirements, self.partial, self.platform_plugin, _PLATFORM_PLUGIN,
                             sys.version_info[:2]])
        return f"{self.name}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


RELEASES = {release.name: release for release in (
    # vllm 0.34.0 METADATA: llguidance<1.8.0,>=1.7.0, xgrammar==0.2.8, apache-tvm-ffi==0.1.11 (xgrammar's own
    # requirement is apache-tvm-ffi>=0.1.11), requests>=2.33.0, certifi>=2026.10.19, aiohttp>=3.14.4,
    # multidict>=6.9.1, pillow>=13.0.0, pyzmq>=25.0.0
    Release("vllm", "0.34.0", (*_VLLM_COMMON, "llguidance==1.7.6", "xgrammar==0.2.8", "apache-tvm-ffi==0.1.11")),
    # vllm 0.22.0 METADATA: gguf>=0.17.0, aiohttp>=3.13.3, requests>=2.26.0, pyzmq>=25.0.0, openai-harmony>=0.0.3
    Release("vllm", "0.22.0", (*_VLLM_COMMON, "gguf==0.19.0", "openai-harmony==0.0.8"), platform_plugin=True),
    # sglang 0.5.23 METADATA: pyzmq>=25.1.2, aiohttp, orjson, pybase64, msgspec, pillow, requests, IPython (9.19.1
    # needs Python >= 3.11, as the release's cp311 wheel does). sglang/srt/utils/common.py imports triton at module
    # level; the release names no triton itself (its torch==2.14.1 brings one), so the newest is taken, of which
    # `import triton` loads triton/_C/libtriton.so.
    Release("sglang", "0.5.23", (*_AIOHTTP, "certifi==2026.10.19.post1", "ipython==9.19.1", "msgspec==0.23.0",
                                 "orjson==3.13.0", "pillow==13.0.0", "pybase64==1.5.1", "pyzmq==27.3.0",
                                 "requests==2.34.2", "traitlets==5.16.1", "urllib3==2.8.0"),
            partial=(("triton==3.9.0", ("triton/_C/libtriton.so",)),)),
    # Only its source: tools/engine_flag_table.py reads it with --from-source.
    Release("sglang", "0.5.9", (), not_importable=(
        "sglang 0.5.9's sglang.srt.server_args imports vision model configurations that need a CUDA build of "
        "torchvision, so its modules are not imported here (its flag table is read from its source)")),
)}


def given_paths() -> dict[str, str]:
    """The releases named by hand: DRIFTCHECK_ENGINE_PATHS="name=PYTHONPATH;name=PYTHONPATH"."""
    given = os.environ.get("DRIFTCHECK_ENGINE_PATHS", "")
    return dict(item.split("=", 1) for item in given.split(";") if "=" in item)


def cache_root() -> Path:
    """Where the releases are kept between runs (outside the repository and the venv)."""
    if os.environ.get("DRIFTCHECK_TEST_CACHE"):
        return Path(os.environ["DRIFTCHECK_TEST_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "driftcheck-tests"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pip(*args: str, timeout: float) -> None:
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise EngineUnavailable(f"pip {args[0]} took more than {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise EngineUnavailable(f"pip {args[0]} failed: {done.stderr.strip()[-300:]}")


def _unpack_part(requirement: str, into: Path, members: tuple[str, ...] = ()) -> str:
    """Download one wheel and unpack only its Python files, its metadata and `members`; returns the wheel's name."""
    wheels = into.parent / "wheel"
    _pip("download", "--no-deps", "--only-binary", ":all:", requirement, "-d", str(wheels), timeout=900)
    (wheel,) = wheels.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(into, [name for name in archive.namelist()
                                  if name.endswith(".py") or ".dist-info/" in name or name in members])
    shutil.rmtree(wheels)
    return wheel.name


def _build(release: Release, into: Path) -> None:
    """Download, unpack and complete one release into the empty directory `into` (src/ and deps/)."""
    # The argument modules are Python; the compiled kernels (most of a vLLM wheel) are never loaded here.
    wheels = [_unpack_part(release.name.replace("-", "==", 1), into / "src")]
    (into / "deps").mkdir()
    wheels += [_unpack_part(requirement, into / "deps", members) for requirement, members in release.partial]
    if release.requirements:
        _pip("install", "--no-deps", "--no-compile", "--only-binary", ":all:", "--target", str(into / "deps"),
             *release.requirements, timeout=900)
    if release.platform_plugin:
        for relative, text in _PLATFORM_PLUGIN.items():
            (into / "deps" / relative).parent.mkdir(parents=True, exist_ok=True)
            (into / "deps" / relative).write_text(text, "utf-8")
    # What this directory was made of, for whoever finds it in the cache.
    (into / "SOURCE").write_text("\n".join([*wheels, *release.requirements]) + "\n", "utf-8")


def installed(release: Release) -> Path:
    """The release's cached directory (src/: the unpacked wheel, deps/: its light packages), built if missing."""
    root = cache_root() / "engines"
    final = root / release.key()
    if final.is_dir():
        return final
    with _locked(root / f"{release.key()}.lock"):
        if final.is_dir():  # built by another process while this one waited
            return final
        staging = Path(tempfile.mkdtemp(prefix=f".{release.key()}-", dir=root))
        try:
            _build(release, staging)
            staging.chmod(0o755)  # mkdtemp's 0700 would hide a shared cache from the other users of a runner
            staging.rename(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def engine_path(name: str) -> str:
    """The PYTHONPATH under which the release `name` imports (the one given by hand first)."""
    given = given_paths()
    if name in given:
        return given[name]
    release = RELEASES[name]
    if release.not_importable:
        raise EngineUnavailable(release.not_importable)
    folder = _provided(release)
    return os.pathsep.join([str(folder / "src"), str(folder / "deps")])


def engine_source(name: str) -> Path:
    """The release's unpacked wheel (its source only; nothing of it is imported)."""
    return _provided(RELEASES[name]) / "src"


def _provided(release: Release) -> Path:
    """`installed`, with a cache that cannot be written (a read-only home) told as the reason it is missing."""
    try:
        return installed(release)
    except OSError as exc:
        raise EngineUnavailable(f"the cache {cache_root()} cannot be written: {exc}") from exc
