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


# A PEP 517 build backend that lives in the project itself (`backend-path`), so pip and uv build the project
# offline, with nothing to fetch into their isolated build environments. Its wheel holds the project's
# `<name>.py` and `<name>_ext.so` (bytes standing for a compiled extension: the packages probe's build id is
# the digest of such files' RECORD hashes); its editable wheel holds a .pth file naming the project folder.
_IN_TREE_BACKEND = '''
import base64, hashlib, os, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME, VERSION = open(os.path.join(HERE, "NAME_VERSION")).read().split()


def _write(directory, files):
    stem = NAME + "-" + VERSION
    files = dict(files)
    metadata = "Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n" % (NAME, VERSION)
    files[stem + ".dist-info/METADATA"] = metadata.encode()
    files[stem + ".dist-info/WHEEL"] = (b"Wheel-Version: 1.0\\nGenerator: driftcheck-tests\\n"
                                        b"Root-Is-Purelib: true\\nTag: py3-none-any\\n")
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append(stem + ".dist-info/RECORD,,")
    files[stem + ".dist-info/RECORD"] = ("\\n".join(record) + "\\n").encode()
    name = stem + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return name


def _read(name):
    with open(os.path.join(HERE, name), "rb") as handle:
        return handle.read()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write(wheel_directory, {NAME + ".py": _read(NAME + ".py"), NAME + "_ext.so": _read(NAME + "_ext.so")})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write(wheel_directory, {NAME + ".pth": (HERE + "\\n").encode()})
'''


def write_project(directory: Path, name: str, version: str, module: str, binary: bytes) -> Path:
    """A source project of distribution `name` `version` (module `name`.py, a "compiled" `name`_ext.so holding
    `binary`) that pip and uv build offline with its in-tree backend; returns its folder."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\n'
                                              'backend-path = ["."]\n', "utf-8")
    (directory / "backend.py").write_text(_IN_TREE_BACKEND, "utf-8")
    (directory / "NAME_VERSION").write_text(f"{name} {version}\n", "utf-8")
    (directory / f"{name}.py").write_text(module, "utf-8")
    (directory / f"{name}_ext.so").write_bytes(binary)
    return directory


def git_repository(directory: Path) -> str:
    """`directory` made a git repository with everything in it committed; the commit id."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True, text=True,
                              timeout=60, env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                                               "HOME": str(directory), "PATH": "/usr/bin:/bin"}).stdout.strip()
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "the project")
    return git("rev-parse", "HEAD")
