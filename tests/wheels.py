"""Real wheels built in a test (PEP 427 layout: the module, METADATA, WHEEL, RECORD with sha256 digests), and
venvs they are installed into by pip, as a user's would be."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from pathlib import Path


def build_wheel(directory: Path, name: str, version: str, module: str) -> Path:
    """A pure-Python wheel of distribution `name` `version` holding the module `name`.py with `module`."""
    stem = f"{name}-{version}"
    files = {
        f"{name}.py": module.encode(),
        f"{stem}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{stem}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: driftcheck-tests\nRoot-Is-Purelib: true\n"
                                   b"Tag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{stem}.dist-info/RECORD,,")
    files[f"{stem}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = directory / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


def venv_with(directory: Path, wheels: Iterable[Path]) -> Path:
    """A fresh venv (no pip of its own) with `wheels` installed by pip, offline; returns its interpreter."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, timeout=120)
    python = directory / "bin" / "python"
    install(python, wheels)
    return python


def install(python: Path, wheels: Iterable[Path]) -> None:
    """pip installs `wheels` for `python`, offline, replacing the versions it had (an upgrade in place)."""
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "install",
                    "-q", "--no-index", "--no-deps", *map(str, wheels)], check=True, timeout=300)
