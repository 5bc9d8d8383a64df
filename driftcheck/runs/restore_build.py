"""Building a new virtual environment from a requirements file: the interpreter, the venv, the installer.

uv is used when it is on PATH or beside this interpreter (`uv pip install` resolves and installs a
100-package list many times faster than pip, with the same requirements format and options), pip otherwise.
Either runs with `--no-deps`: the list names every distribution at its version, and nothing else may come
in. When the whole list fails (one release missing from the index fails pip's and uv's install alike), each
requirement is tried alone so the answer names what could not be installed and the installer's own reason.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import DriftcheckError
from driftcheck.hosts.process_tree import stopped_on_the_way_out

_INSTALL_TIMEOUT_S = 1800.0
_VERSION_SCRIPT = "import platform; print(platform.python_version())"
UV, PIP = "uv", "pip"


class RestoreBuildError(DriftcheckError):
    """The new environment cannot be built here (no such Python, the venv cannot be made); the message says
    why and what to install."""


@dataclass(frozen=True)
class Installer:
    """The tool that installs: `uv` (its binary) or `pip` (run by this interpreter for the new venv)."""

    kind: str
    executable: str

    def argv(self, python: Path, options: Sequence[str]) -> list[str]:
        """The install command for the venv of `python`, every distribution without its dependencies."""
        if self.kind == UV:
            return [self.executable, "pip", "install", "--python", str(python), "--no-deps", *options]
        return [self.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", "--no-input",
                "install", "--no-deps", *options]


@dataclass(frozen=True)
class InstallOutcome:
    """What an install did: `failed` maps each requirement line that could not be installed to the installer's
    reason (empty when all went in)."""

    installer: str
    failed: dict[str, str]


def find_uv() -> str | None:
    """The uv binary: on PATH, else beside this interpreter (a venv that has uv installed)."""
    found = shutil.which("uv")
    if found:
        return found
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else None


def choose_installer(wanted: str = "auto") -> Installer:
    """uv when present (or asked for), else pip; RestoreBuildError when the one asked for is not here."""
    uv = find_uv()
    if wanted == UV and uv is None:
        raise RestoreBuildError("uv is not installed here (pip install uv); or restore with --installer pip")
    if wanted in (UV, "auto") and uv is not None:
        return Installer(UV, uv)
    return Installer(PIP, sys.executable)


def python_version(python: str | Path) -> str | None:
    """The version `python` reports (3.11.7), None when it does not run."""
    try:
        done = subprocess.run([str(python), "-I", "-c", _VERSION_SCRIPT], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def find_python(version: str, candidates: Sequence[str] = ()) -> tuple[Path, str] | None:
    """An interpreter of `version`'s major.minor on this machine and its full version: `candidates` first,
    then `python3.X` on PATH, then the one uv manages (`uv python find 3.X`); None when there is none."""
    minor = ".".join(version.split(".")[:2])
    places = [*candidates]
    on_path = shutil.which(f"python{minor}")
    if on_path:
        places.append(on_path)
    uv = find_uv()
    if uv is not None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            done = subprocess.run([uv, "python", "find", "--no-project", minor], capture_output=True, text=True,
                                  timeout=60, check=False)
            if done.returncode == 0 and done.stdout.strip():
                places.append(done.stdout.strip().splitlines()[-1])
    exact = None
    for place in places:
        found = python_version(place)
        if found == version:
            return Path(place), found
        if found is not None and found.split(".")[:2] == minor.split(".") and exact is None:
            exact = (Path(place), found)
    return exact


def create_venv(python: Path, directory: Path) -> Path:
    """A new, empty virtual environment of `python` at `directory` (no pip of its own: every distribution,
    pip included, is A's); its interpreter. `directory` must not exist or be empty."""
    if directory.exists() and any(directory.iterdir()):
        raise RestoreBuildError(f"{directory} exists and is not empty: restore into a new directory")
    try:
        done = subprocess.run([str(python), "-m", "venv", "--without-pip", str(directory)], capture_output=True,
                              text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RestoreBuildError(f"cannot make a venv with {python}: {exc}") from None
    if done.returncode != 0:
        raise RestoreBuildError(f"cannot make a venv with {python}: {last_error(done.stderr)}")
    return directory / "bin" / "python"


def install_requirements(installer: Installer, python: Path, options: Sequence[str],
                         requirements: Sequence[str]) -> InstallOutcome:
    """Install `requirements` (lines of a requirements file) with the index `options` lines into the venv of
    `python`; when the whole list fails, each requirement alone, to name those that cannot be installed."""
    if not requirements:
        return InstallOutcome(installer.kind, {})
    code, output = _run_install(installer, python, options, requirements)
    if code == 0:
        return InstallOutcome(installer.kind, {})
    failed: dict[str, str] = {}
    for requirement in requirements:
        code, output = _run_install(installer, python, options, [requirement])
        if code != 0:
            failed[requirement] = last_error(output)
    if not failed:  # together they failed, alone each went in: a conflict between them, said as the tool said it
        failed = {requirement: "installed alone, but not with the others" for requirement in requirements}
    return InstallOutcome(installer.kind, failed)


def _run_install(installer: Installer, python: Path, options: Sequence[str],
                 requirements: Sequence[str]) -> tuple[int, str]:
    """Run one install of `requirements` from a requirements file; the exit code and what it printed."""
    with tempfile.TemporaryDirectory(prefix="driftcheck-restore-") as scratch:
        listing = Path(scratch) / "requirements.txt"
        listing.write_text("\n".join([*options, *requirements]) + "\n", "utf-8")
        argv = installer.argv(python, ["-r", str(listing)])
        with tempfile.TemporaryFile() as output:
            try:
                process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
            except OSError as exc:
                return 127, f"{installer.kind} cannot start: {exc}"
            with stopped_on_the_way_out(process):
                try:
                    code = process.wait(timeout=_INSTALL_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    return 124, f"{installer.kind} ran past {_INSTALL_TIMEOUT_S:g} s"
            output.seek(0)
            return code, output.read().decode(errors="replace")



_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def last_error(output: str) -> str:
    """The installer's reason in one line: pip's last `ERROR:` line, uv's `error:`/`×` lines and the causes
    under them, else its last line."""
    lines = [_ANSI.sub("", line).strip() for line in output.splitlines()]
    lines = [line for line in lines if line]
    pip_errors = [line for line in lines if line.startswith("ERROR")]
    if pip_errors:
        return pip_errors[-1][:300]
    for index, line in enumerate(lines):
        if line.startswith(("error:", "×")):
            # uv prints the error, then its causes on the lines below (`cause: ...` or `╰─▶ ...`).
            causes = [re.sub(r"^(cause:|[╰─▶│ ]+)\s*", "", part) for part in lines[index + 1:index + 4]]
            return ": ".join([line, *(part for part in causes if part)])[:300]
    return (lines or ["no output"])[-1][:300]
