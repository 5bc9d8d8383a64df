"""`driftcheck restore` without building anything: the plan, the exports and the refusals, from a real snapshot
of the build machine (tests/data/pairs/base.json); its JSON is the face's `to_json()` for the same inputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import driftcheck
from tests.conftest import CliResult

BASE = Path(__file__).resolve().parent / "data" / "pairs" / "base.json"


def _with_python(tmp_path: Path, version: str) -> str:
    document = json.loads(BASE.read_text("utf-8"))
    document["probes"]["python"]["data"]["version"] = version
    path = tmp_path / "a.json"
    path.write_text(json.dumps(document), "utf-8")
    return str(path)


def test_the_dry_run_json_is_the_library_json(cli: Callable[..., CliResult]) -> None:
    done = cli("restore", str(BASE), "--dry-run", "--format", "json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == json.loads(json.dumps(driftcheck.restore(str(BASE), dry_run=True).to_json()))
    assert printed["dry_run"] and printed["check"] is None
    torch = next(p for p in printed["plan"]["packages"] if p["name"] == "torch")
    assert torch["requirement"] == "torch==2.13.0+cpu"
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in printed["plan"]["indexes"]


def test_a_python_not_on_this_machine_is_said_with_what_to_install(cli: Callable[..., CliResult],
                                                                  tmp_path: Path) -> None:
    snapshot = _with_python(tmp_path, "3.4.10")
    planned = cli("restore", snapshot, "--dry-run")
    assert planned.returncode == 0 and "Python 3.4.10: not available here: no python3.4 found" in planned.stdout
    built = cli("restore", snapshot, "--venv", str(tmp_path / "v"))
    assert built.returncode == 2 and built.stderr.count("\n") == 1
    assert "Python 3.4.10 of A is not available here: no python3.4 found" in built.stderr
    assert not (tmp_path / "v").exists()


def test_the_exports_print_and_build_nothing(cli: Callable[..., CliResult]) -> None:
    requirements = cli("restore", str(BASE), "--format", "requirements")
    assert requirements.returncode == 0 and "torch==2.13.0+cpu" in requirements.stdout.splitlines()
    env = cli("restore", str(BASE), "--format", "env")
    assert env.returncode == 0 and "export CUDA_MODULE_LOADING=LAZY" in env.stdout.splitlines()
    server = cli("restore", str(BASE), "--format", "server-command")
    assert server.returncode == 0 and "# none recorded: the snapshot was taken without --server" in server.stdout


def test_restore_needs_a_venv_or_a_dry_run(cli: Callable[..., CliResult]) -> None:
    done = cli("restore", str(BASE))
    assert done.returncode == 2 and "needs --venv DIR" in done.stderr
    both = cli("restore", str(BASE), "--format", "env", "--venv", "x")
    assert both.returncode == 2 and "builds nothing" in both.stderr
