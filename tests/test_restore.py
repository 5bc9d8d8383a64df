"""`driftcheck restore` end to end: a real environment A (wheels from a --find-links folder, a local folder,
a VCS commit of a local git repository), snapshotted, rebuilt into a new venv by real pip and real uv, and
verified by a snapshot of the new venv."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import driftcheck
from tests.conftest import CliResult
from tests.wheels import build_wheel, git_repository, write_project

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class EnvironmentA:
    snapshot_id: str
    wheels: Path
    local: Path
    commit: str
    repository: Path


@pytest.fixture
def env_a(tmp_path: Path) -> EnvironmentA:
    """A venv holding two index wheels, a local-folder build and a git build, snapshotted into the store."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name, version in (("alpha", "1.0"), ("beta", "2.0")):
        build_wheel(wheels, name, version, f"NAME = {name!r}\n")
    archives = tmp_path / "archives"
    archives.mkdir()
    archive = build_wheel(archives, "gamma", "3.0", "NAME = 'gamma'\n")
    local = write_project(tmp_path / "localpkg", "localpkg", "0.1", "X = 1\n", b"\x7fELF local build")
    editable = write_project(tmp_path / "editpkg", "editpkg", "0.3", "Z = 3\n", b"\x7fELF edit build")
    repository = write_project(tmp_path / "vcspkg", "vcspkg", "0.2", "Y = 2\n", b"\x7fELF vcs build")
    commit = git_repository(repository)
    venv = tmp_path / "a"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-deps", "--no-index", "--find-links", str(wheels),
                    "alpha==1.0", "beta==2.0", str(archive), str(local), "-e", str(editable),
                    f"git+file://{repository}@{commit}"], check=True, timeout=300)
    taken = driftcheck.take_snapshot(python=str(venv / "bin" / "python"), probes=("packages", "python", "env"))
    return EnvironmentA(taken.id, wheels, local, commit, repository)


def _restore(cli: Callable[..., CliResult], env: EnvironmentA, *args: str) -> CliResult:
    return cli("restore", env.snapshot_id, "--no-index", "--find-links", str(env.wheels), *args)


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_restore_reproduces_a_and_says_so(cli: Callable[..., CliResult], env_a: EnvironmentA, tmp_path: Path,
                                          installer: str) -> None:
    done = _restore(cli, env_a, "--venv", str(tmp_path / "b"), "--installer", installer, "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["installer"] == installer
    assert result["check"]["same"] and result["check"]["verdict"].startswith("same versions, same binaries")
    sources = {p["name"]: (p["source"], p["editable"]) for p in result["plan"]["packages"]}
    assert sources == {"alpha": ("index", False), "beta": ("index", False), "gamma": ("archive", False),
                       "localpkg": ("directory", False), "editpkg": ("directory", True), "vcspkg": ("vcs", False)}
    gamma = next(p["requirement"] for p in result["plan"]["packages"] if p["name"] == "gamma")
    assert gamma.startswith("gamma @ file://") and "#sha256=" in gamma
    # The verification is a snapshot of the new venv: its packages are A's, binaries and commit included.
    rebuilt = driftcheck.take_snapshot(python=str(tmp_path / "b" / "bin" / "python"), probes=("packages",),
                                       keep=False)
    a = driftcheck.load(env_a.snapshot_id).probe_data("packages")["packages"]
    b = rebuilt.probe_data("packages")["packages"]
    assert {k: (v["version"], v["build_id"]) for k, v in a.items()} == \
           {k: (v["version"], v["build_id"]) for k, v in b.items()}
    assert a["localpkg"]["build_id"] is not None
    assert b["vcspkg"]["direct_url"]["vcs_info"]["commit_id"] == env_a.commit
    assert b["editpkg"]["editable"] and b["editpkg"]["direct_url"] == a["editpkg"]["direct_url"]


def test_a_wheel_gone_from_the_index_and_a_rebuilt_folder_are_not_reproduced(
        cli: Callable[..., CliResult], env_a: EnvironmentA, tmp_path: Path) -> None:
    (env_a.wheels / "beta-2.0-py3-none-any.whl").unlink()
    (env_a.local / "localpkg_ext.so").write_bytes(b"\x7fELF rebuilt since")
    done = _restore(cli, env_a, "--venv", str(tmp_path / "c"))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    beta = next(line for line in lines if line.startswith("  not reproduced: beta"))
    assert "not installed" in beta and "beta" in beta.split(":", 2)[2]
    local = next(line for line in lines if line.startswith("  not reproduced: localpkg"))
    assert "compiled files hash differently" in local
    assert lines[-1].startswith("NOT reproduced: 2 of 6 distributions not reproduced")


def test_dry_run_prints_the_plan_and_touches_nothing(cli: Callable[..., CliResult], env_a: EnvironmentA,
                                                     tmp_path: Path) -> None:
    done = _restore(cli, env_a, "--venv", str(tmp_path / "d"), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "d").exists()
    assert f"would install vcspkg 0.2 from git file://{env_a.repository} at commit {env_a.commit}" in done.stdout
    assert f"would install localpkg 0.1 from the local folder {env_a.local}" in done.stdout
    assert "would install alpha 1.0 from the index" in done.stdout
    assert done.stdout.rstrip().endswith("dry run: nothing built")


def test_the_requirements_export_rebuilds_a_with_plain_pip(cli: Callable[..., CliResult], env_a: EnvironmentA,
                                                           tmp_path: Path) -> None:
    done = _restore(cli, env_a, "--format", "requirements")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert f"git+file://{env_a.repository}@{env_a.commit}#egg=vcspkg" in text.splitlines()
    assert "alpha==1.0" in text.splitlines() and "--no-index" in text.splitlines()
    listing = tmp_path / "requirements.txt"
    listing.write_text(text, "utf-8")
    venv = tmp_path / "e"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--disable-pip-version-check", "--no-deps", "-r", str(listing)], check=True, timeout=300)
    rebuilt = driftcheck.take_snapshot(python=str(venv / "bin" / "python"), probes=("packages",), keep=False)
    a = driftcheck.load(env_a.snapshot_id).probe_data("packages")["packages"]
    assert {k: v["build_id"] for k, v in rebuilt.probe_data("packages")["packages"].items()} == \
           {k: v["build_id"] for k, v in a.items()}


def test_a_venv_directory_in_use_is_refused(cli: Callable[..., CliResult], env_a: EnvironmentA,
                                            tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("x")
    done = _restore(cli, env_a, "--venv", str(taken))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not empty" in done.stderr


def test_uv_is_here_for_ci() -> None:
    # The uv path above is tested only where uv is installed: the test extra names it, so CI has it.
    assert shutil.which("uv") or (Path(sys.executable).parent / "uv").is_file()
