"""Scratch environments for `explain --confirm`: an interpreter's own environment with one distribution at
another version, made without touching that environment.

The other version's files are put first on `PYTHONPATH`, so the interpreter imports that distribution from
them and everything else from its own site-packages. They come from one of two places:

- another interpreter that has that version installed (`--a-python`): an overlay of exact copies of its
  installed files (`driftcheck.runs.overlay`, as `bisect` uses), made in a scratch directory removed when
  the confirmation ends, whatever happens;
- else the package index, through pip: `pip --python PY install --target DIR --no-deps --only-binary=:all:
  NAME==VERSION`, so the wheel is the one for that interpreter (its Python, its platform) and no other
  distribution is installed or changed. These are kept, by what they hold, under driftcheck's cache
  (`<data dir>/cache/scratch-env/`), built in a partial directory that is renamed only once complete and
  removed on any failure or interruption. No wheel for that interpreter (no network, no such version, only
  an sdist) makes it unbuildable here, said as such.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from driftcheck.errors import DriftcheckError
from driftcheck.hosts.process_tree import stopped_on_the_way_out
from driftcheck.runs.overlay import Distribution, Overlays, PackageChange
from driftcheck.snapshot.home import data_dir, ensure_private_dir

_PIP_TIMEOUT_S = 600.0
_IDENTITY_SCRIPT = ("import sys, sysconfig; "
                    "print(sys.implementation.cache_tag, sysconfig.get_platform(), sys.version.split()[0])")


class NotBuildable(DriftcheckError):
    """The scratch environment cannot be made here; the message says why (no wheel, no pip, no network)."""


def cache_root() -> Path:
    """Where pip-built scratch environments are kept between runs."""
    return data_dir() / "cache" / "scratch-env"


class ScratchEnvs:
    """The scratch environments of one confirmation: a context whose exit removes the temporary ones.

    `with ScratchEnvs() as envs: path = envs.from_interpreter(...)`; the overlays copied from another
    interpreter live in one temporary directory (prefix `driftcheck-confirm-`) removed on exit; the
    pip-built ones stay in the cache, complete or not at all."""

    def __init__(self, cache: Path | None = None) -> None:
        self.cache = cache if cache is not None else cache_root()
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._overlays: dict[str, Overlays] = {}

    def __enter__(self) -> ScratchEnvs:
        self._scratch = tempfile.TemporaryDirectory(prefix="driftcheck-confirm-")
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def from_interpreter(self, source: str, dists: Mapping[str, Distribution], name: str) -> Path:
        """A directory holding exact copies of `source`'s installed files of `name` (`dists`: what `source`
        has, from `overlay.distributions`)."""
        if self._scratch is None:
            raise RuntimeError("ScratchEnvs used outside its `with` block")
        overlays = self._overlays.get(source)
        if overlays is None:
            root = Path(self._scratch.name) / hashlib.sha256(source.encode()).hexdigest()[:12]
            overlays = self._overlays[source] = Overlays(root, dists)
        return overlays.path([PackageChange(name, None, dists[name].version)])

    def from_index(self, python: str, name: str, version: str) -> Path:
        """A directory holding `name==version` as pip installs it for `python`, alone (no dependencies);
        NotBuildable with pip's reason when it cannot be had."""
        key = hashlib.sha256(f"{name}=={version}\n{_identity(python)}".encode()).hexdigest()[:24]
        target = ensure_private_dir(self.cache) / f"{name}-{version}-{key}"
        if target.is_dir():
            return target
        building = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=self.cache))
        try:
            _pip_target(python, f"{name}=={version}", building)
            building.rename(target)
        finally:
            shutil.rmtree(building, ignore_errors=True)  # gone once renamed; else a failure or an interruption
        return target


def _identity(python: str) -> str:
    """What decides which wheel fits `python`: its cache tag, platform and version."""
    try:
        done = subprocess.run([python, "-I", "-c", _IDENTITY_SCRIPT], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotBuildable(f"{python} does not run: {exc}") from None
    if done.returncode != 0:
        raise NotBuildable(f"{python} does not run: {done.stderr.strip()[-200:]}")
    return done.stdout.strip()


def _pip_target(python: str, requirement: str, target: Path) -> None:
    """pip, run by this interpreter for `python` (`pip --python`), installs `requirement` into `target` only."""
    argv = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check", "--no-input",
            "install", "--quiet", "--no-deps", "--only-binary=:all:", "--no-compile", "--target", str(target),
            requirement]
    with tempfile.TemporaryFile() as output:
        try:
            process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        except OSError as exc:
            raise NotBuildable(f"pip cannot start: {exc}") from None
        with stopped_on_the_way_out(process):
            try:
                code = process.wait(timeout=_PIP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise NotBuildable(f"pip install {requirement} ran past {_PIP_TIMEOUT_S:g} s") from None
        if code != 0:
            output.seek(0)
            raise NotBuildable(f"pip install {requirement} for {python} failed: {_last_error(output.read())}")



def _last_error(output: bytes) -> str:
    lines = [line.strip() for line in output.decode(errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1][:300]
