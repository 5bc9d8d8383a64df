"""A real venv with a real wheel that carries a compiled extension, built once per test session.

The venv is made with `python -m venv` and MarkupSafe is installed into it by pip, from the wheel kept
in tests/data/wheels (offline) or, where its tags do not fit this interpreter, from the package index.
Tests that change files get their own copy (`wheel_venv`), so the session's venv stays pristine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

WHEELS = Path(__file__).resolve().parent.parent / "data" / "wheels"


@dataclass(frozen=True)
class WheelVenv:
    """A venv holding MarkupSafe: its interpreter, its site-packages and the compiled extension."""

    root: Path
    python: Path
    site_packages: Path

    @property
    def extension(self) -> Path:
        return next(self.site_packages.glob("markupsafe/_speedups*.so"))

    @property
    def extension_relative(self) -> str:
        return self.extension.relative_to(self.site_packages).as_posix()


def _pip_install(python: Path, *requirement: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
                           *requirement], capture_output=True, text=True, timeout=300, check=False)


def _make_venv(root: Path) -> WheelVenv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = root / "bin" / "python"
    done = _pip_install(python, "--no-index", *map(str, sorted(WHEELS.glob("MarkupSafe-*.whl"))))
    if done.returncode != 0:
        # The kept wheel is for one CPython and platform; elsewhere take the index's build for this one.
        done = _pip_install(python, "--only-binary=:all:", "markupsafe==3.0.2")
    if done.returncode != 0:
        pytest.skip(f"cannot install MarkupSafe into a venv here: {done.stderr.strip()[-300:]}")
    site_packages = next(root.glob("lib/python3*/site-packages"))
    return WheelVenv(root, python, site_packages)


@pytest.fixture(scope="session")
def pristine_venv(tmp_path_factory: pytest.TempPathFactory) -> WheelVenv:
    """The session's venv with MarkupSafe installed; never modify it (use `wheel_venv`)."""
    return _make_venv(tmp_path_factory.mktemp("venv") / "env")


@pytest.fixture
def wheel_venv(pristine_venv: WheelVenv, tmp_path: Path) -> WheelVenv:
    """A private copy of the MarkupSafe venv that a test may change."""
    root = tmp_path / "env"
    shutil.copytree(pristine_venv.root, root, symlinks=True)
    # The copy's interpreter must see the copy's site-packages, not the original's.
    site = next(root.glob("lib/python3*/site-packages"))
    return WheelVenv(root, root / "bin" / "python", site)
