"""The harness face: `driftcheck.take_snapshot(...)` and `driftcheck.check(CheckRequest(...))`
in-process, as the README shows, returning the objects the CLI prints. Snapshots of this machine and of a real
recorded one; options checked when the request is built, errors in the library's terms."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import driftcheck
from driftcheck import BenchRequest, CheckRequest, SnapshotRequest
from driftcheck.analysis.gate import CheckResult
from driftcheck.errors import OptionError, UnknownSnapshotError, UsageError
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store
from tests.conftest import REPO_ROOT, CliResult

HOSTS = Path(__file__).resolve().parent / "data" / "hosts"


def test_the_face_is_plain_functions_that_survive_importing_every_submodule() -> None:
    # Importing a submodule binds it on the package; no face name may be shadowed by one.
    for module in ("driftcheck.snapshot", "driftcheck.store.snapshots", "driftcheck.analysis.gate"):
        importlib.import_module(module)
    assert inspect.isfunction(driftcheck.take_snapshot) and inspect.isfunction(driftcheck.check)
    assert list(inspect.signature(driftcheck.check).parameters)[0] == "request"
    assert list(inspect.signature(driftcheck.take_snapshot).parameters)[0] == "request"
    assert driftcheck.SnapshotRequest().target == "local" and driftcheck.CheckRequest().against is None
    assert driftcheck.Policy().ignore == ()
    assert set(driftcheck.__all__) <= set(dir(driftcheck)) | {name for name in driftcheck.__all__
                                                              if getattr(driftcheck, name, None) is not None}


def test_every_name_of_the_face_is_served_from_the_one_table_of_the_api() -> None:
    from driftcheck import api

    face = set(driftcheck._FACE)  # noqa: SLF001 - the names the root re-exports
    assert {"SnapshotRequest", "CheckRequest", "BenchRequest", "run", "restore"} <= face
    assert face <= set(api._LAZY) & set(api.__all__)  # noqa: SLF001 - one table says where each lives
    assert all(getattr(driftcheck, name) is getattr(api, name) for name in face)
    assert all(getattr(driftcheck, name) is not None for name in driftcheck.__all__)
    assert callable(driftcheck.run) and callable(driftcheck.fleet)  # the verb, not its module
    assert "OptionError" in driftcheck.__all__ and issubclass(driftcheck.OptionError, driftcheck.UsageError)


def test_import_stays_lazy() -> None:
    code = ("import sys, driftcheck; driftcheck.__version__; "
            "print(any(m.startswith(('deepdiff', 'cryptography', 'driftcheck.api')) for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=REPO_ROOT)
    assert done.stdout.strip() == "False"


def test_snapshot_of_a_replayed_recording_is_kept_and_signed() -> None:
    taken = driftcheck.take_snapshot(target=f"replay:{HOSTS / 'debian12-vm-docker'}",
                                     label="replayed", probes=["system", "env"])
    assert isinstance(taken, Snapshot)
    assert {"env", "system"} <= set(taken.probes) and "packages" not in taken.probes
    assert taken.document["origin"] == "replayed"
    assert taken.document["signature"]
    assert Store().entries()[0].id == taken.id
    assert driftcheck.load("@latest").id == taken.id


def test_snapshot_keep_false_stores_nothing_and_sign_false_leaves_it_unsigned() -> None:
    taken = driftcheck.take_snapshot(target=f"replay:{HOSTS / 'debian12-vm-docker'}", probes=["system"],
                                     keep=False, sign=False)
    assert "signature" not in taken.document or not taken.document["signature"]
    assert Store().entries() == []


def test_snapshot_bad_input_raises_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown probe nope"):
        driftcheck.take_snapshot(probes=["nope"], keep=False)
    with pytest.raises(UsageError, match="no executable interpreter"):
        driftcheck.take_snapshot(python=str(tmp_path / "python"), keep=False)


@pytest.mark.parametrize(("build", "option", "message"), [
    (lambda: SnapshotRequest(pids=[0]), "pids", "pids=0: a process id is a positive number"),
    (lambda: SnapshotRequest(processes=["x("]), "processes", "processes='x(': not a regular expression"),
    (lambda: SnapshotRequest(server="127.0.0.1:30000"), "server", "expected an http(s)://HOST[:PORT] URL"),
    (lambda: BenchRequest("quick", runs=0), "runs", "runs=0: must be at least 1"),
    (lambda: CheckRequest(bench_runs=3, rerun_bench=False), "bench_runs", "rerun_bench=False skips"),
])
def test_a_request_is_checked_when_built_and_the_error_names_its_field(build: Callable[[], object], option: str,
                                                                      message: str) -> None:
    with pytest.raises(OptionError, match=re.escape(message)) as raised:
        build()
    assert raised.value.option == option and "--" not in str(raised.value)


def test_library_errors_speak_fields_and_the_cli_speaks_flags(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    missing = str(tmp_path / "python")
    with pytest.raises(OptionError, match=f"^python={missing}: no executable interpreter there$"):
        driftcheck.take_snapshot(python=missing, keep=False)
    done = cli("snapshot", "--python", missing, "--no-store", "-o", str(tmp_path / "s.json"))
    assert done.returncode == 2 and f"--python {missing}: no executable interpreter there" in done.stderr
    done = cli("snapshot", "--pid", "0", "--no-store", "-o", str(tmp_path / "s.json"))
    assert done.returncode == 2 and "--pid 0: a process id is a positive number" in done.stderr
    done = cli("check", "--host", "")  # an empty target is an error, never this machine
    assert done.returncode == 2 and "--host '': empty; name a machine" in done.stderr


def test_a_request_keeps_its_own_copy_of_the_lists_it_was_given() -> None:
    probes = ["env"]
    request = SnapshotRequest(probes=probes)
    probes.append("system")
    assert request.probes == ("env",)


def test_a_host_object_carries_its_target_and_interpreter() -> None:
    from driftcheck.hosts import ReplayHost

    host = ReplayHost(HOSTS / "debian12-vm-docker")
    taken = driftcheck.take_snapshot(probes=["system"], keep=False, host=host)
    assert taken.document["origin"] == "replayed"
    with pytest.raises(OptionError, match="a host object carries its target and interpreter"):
        driftcheck.take_snapshot(python="/usr/bin/python3", keep=False, host=host)


def test_check_in_process_matches_the_cli(cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    baseline = driftcheck.take_snapshot(label="golden")
    assert cli("baseline", "save", "default", baseline.id).returncode == 0
    clean = driftcheck.check()
    assert isinstance(clean, CheckResult)
    assert not clean.drift and clean.reference.id == baseline.id
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    drift = driftcheck.check(against="baseline:default", keep=False)
    assert drift.drift
    assert any("OMP_NUM_THREADS" in e.title for e in drift.explained.explanations)
    printed = cli("check", "--against", "default", "--format", "json", "--no-store")
    assert printed.returncode == 1
    # The CLI prints what the library returns.
    assert json.loads(printed.stdout)["explanations"][0]["title"] == drift.to_json()["explanations"][0]["title"]


def test_check_against_a_snapshot_object_and_a_policy_file(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    reference = driftcheck.take_snapshot(probes=["env"], keep=False)
    policy = tmp_path / "gate.yaml"
    policy.write_text("must:\n  - {match: probes.env.data.vars.OMP_NUM_THREADS, equals: '8'}\n", "utf-8")
    result = driftcheck.check(against=reference, policy=policy, keep=False)
    assert result.explained.explanations == []
    assert result.violations == ["probes.env.data.vars.OMP_NUM_THREADS is 4, must be 8"]
    assert result.drift
    assert Store().entries() == []


def test_check_with_nothing_to_compare_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="nothing to check against"):
        driftcheck.check(keep=False)
    with pytest.raises(UnknownSnapshotError):
        driftcheck.check(against="no-such-baseline", keep=False)


def test_check_takes_its_options_as_keywords_or_a_request_not_both() -> None:
    with pytest.raises(OptionError, match="min_confidence=5"):
        driftcheck.check(min_confidence=5, keep=False)
    with pytest.raises(OptionError, match="request: give a CheckRequest or its options as keywords, not both"):
        driftcheck.check(CheckRequest(keep=False), against="baseline:default")


def readme_example() -> str:
    """The harness example of the README's "Python API for harnesses" section."""
    readme = (REPO_ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("## Python API for harnesses"):]
    return section[section.index("```python\n") + len("```python\n"):section.index("```\n", 10)]


@pytest.mark.slow
def test_the_readme_example_passes_the_type_checker(tmp_path: Path) -> None:
    example = tmp_path / "harness.py"
    example.write_text(readme_example(), "utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
                           "--config-file", str(REPO_ROOT / "pyproject.toml"), str(example)],
                          capture_output=True, text=True, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_example_runs(cli: Callable[..., CliResult], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    example = readme_example()
    assert len(example.strip().splitlines()) == 7
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    (tmp_path / "gate.yaml").write_text("ignore: [probes.env.data.vars.HOSTNAME]\n", "utf-8")
    assert cli("baseline", "save", "default").returncode == 0
    exec(compile(example, "README.md", "exec"), {})  # passes the gate, then snapshots
    assert Store().entries()[0].label == "before run"
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with pytest.raises(SystemExit, match="OMP_NUM_THREADS"):
        exec(compile(example, "README.md", "exec"), {})
