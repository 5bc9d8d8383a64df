"""The three package fixes that did not restore A, through `driftcheck explain`:

- a source install (a git commit, a local folder) was "restored" from the package index;
- a venv rebuilt at the same path on another Python got fixes naming that path, reinstalls that fetch B's
  Python's build, and one cause per moved fact instead of one;
- a pasted report's fix ran the shell's `python3` instead of the interpreter B describes.

Pairs are made as tests/data/pairs are: base.json (a real snapshot of the build machine) plus exactly the
edit the case is about; the `direct_url` records are built by pip's own DirectUrl (the pip installed here),
as pip writes them into `direct_url.json`; the pasted report is a real SGLang `check_env` output
(tests/data/reports/SOURCES.md)."""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pip._internal.models.direct_url import DirectUrl, DirInfo, VcsInfo

from tests.conftest import CliResult

DATA = Path(__file__).resolve().parent.parent / "data"
COMMIT = "3c0b1f1f64ab0b8a8e1f29d5b5f5e9a1f0c2d4e6"


def _base() -> dict[str, Any]:
    return json.loads((DATA / "pairs" / "base.json").read_text("utf-8"))


def _write(tmp_path: Path, a: dict[str, Any], b: dict[str, Any]) -> tuple[str, str]:
    a["label"], b["label"] = "before", "after"
    paths = tmp_path / "a.json", tmp_path / "b.json"
    for path, document in zip(paths, (a, b), strict=True):
        path.write_text(json.dumps(document), "utf-8")
    return str(paths[0]), str(paths[1])


def _explained(cli: Callable[..., CliResult], a: str, b: str) -> list[dict[str, Any]]:
    done = cli("explain", a, b, "--format", "json")
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)["explanations"]


def _package(name: str, version: str, direct_url: Any = None, build_id: str | None = None,
             tags: tuple[str, ...] = ("cp311-cp311-manylinux_2_28_x86_64",)) -> dict[str, Any]:
    return {"build_id": build_id, "compiled_files": 1, "direct_url": direct_url, "editable": False,
            "installer": "pip", "location": "/opt/venv/lib/python3.11/site-packages", "name": name,
            "version": version, "wheel_tags": list(tags)}


def test_a_git_install_is_restored_from_its_commit_not_the_index(cli: Callable[..., CliResult],
                                                                 tmp_path: Path) -> None:
    a, b = _base(), _base()
    url = DirectUrl("https://github.com/flashinfer-ai/flashinfer.git", VcsInfo("git", COMMIT)).to_dict()
    a["probes"]["packages"]["data"]["packages"]["flashinfer-python"] = _package("flashinfer-python", "0.6.4", url)
    b["probes"]["packages"]["data"]["packages"]["flashinfer-python"] = _package("flashinfer-python", "0.6.5")
    (cause,) = [e for e in _explained(cli, *_write(tmp_path, a, b)) if "flashinfer" in e["title"]]
    assert shlex.split(cause["fix"]) == ["/opt/venv/bin/python", "-m", "pip", "install",
                                         f"flashinfer-python @ git+https://github.com/flashinfer-ai/flashinfer.git"
                                         f"@{COMMIT}"]


def test_a_local_folder_build_is_rebuilt_from_its_folder(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    a, b = _base(), _base()
    url = DirectUrl("file:///src/flashinfer", DirInfo(editable=False)).to_dict()
    a["probes"]["packages"]["data"]["packages"]["flashinfer-python"] = _package(
        "flashinfer-python", "0.6.4", url, build_id="sha256:" + "a" * 64)
    b["probes"]["packages"]["data"]["packages"]["flashinfer-python"] = _package(
        "flashinfer-python", "0.6.4", build_id="sha256:" + "b" * 64)
    (cause,) = [e for e in _explained(cli, *_write(tmp_path, a, b)) if "flashinfer" in e["title"]]
    words = shlex.split(cause["fix"])
    assert words[0] == "/opt/venv/bin/python" and words[-1] == "flashinfer-python @ file:///src/flashinfer", words
    assert "flashinfer-python==0.6.4" not in words


def _rebuilt_on_3_12(tmp_path: Path) -> tuple[str, str]:
    """A venv at /opt/venv on Python 3.11.7 and the same venv path rebuilt on 3.12.8: every path, tag and
    compiled file name that holds the version moves; the compiled files' hashes differ; numpy came back newer."""
    a = _base()
    packages = a["probes"]["packages"]["data"]["packages"]
    packages["numpy"] = _package("numpy", "2.2.6", build_id="sha256:" + "1" * 64)
    for name, digit in (("pyyaml", "2"), ("torch", "3")):
        packages[name]["build_id"] = "sha256:" + digit * 64
    text = json.dumps(a)
    for old, new in (("python3.11", "python3.12"), ("python311", "python312"), ("cpython-311", "cpython-312"),
                     ("cp311", "cp312"), ("3.11.7", "3.12.8")):
        text = text.replace(old, new)
    b = json.loads(text)
    moved = b["probes"]["packages"]["data"]["packages"]
    moved["numpy"]["version"] = "2.3.0"
    for name, digit in (("numpy", "4"), ("pyyaml", "5"), ("torch", "6")):
        moved[name]["build_id"] = "sha256:" + digit * 64
    return _write(tmp_path, copy.deepcopy(a), b)


def test_a_venv_rebuilt_on_another_python_is_one_cause_whose_fix_restores_a(cli: Callable[..., CliResult],
                                                                           tmp_path: Path) -> None:
    a, b = _rebuilt_on_3_12(tmp_path)
    causes = _explained(cli, a, b)
    interpreter = [e for e in causes if "probes.python.data.version" in e["evidence"]]
    assert len(interpreter) == 1
    (cause,) = interpreter
    # The rebuilds are its evidence, not causes of their own.
    assert {"probes.packages.data.packages.pyyaml.build_id", "probes.packages.data.packages.torch.build_id",
            "probes.python.data.base_prefix"} <= set(cause["evidence"])
    assert "at the same path /opt/venv/bin/python" in cause["title"]
    assert f"driftcheck restore {a} --venv /opt/venv-3.11.7-" in cause["fix"]
    assert [e["title"] for e in causes if e is not cause] == [
        next(e["title"] for e in causes if "numpy" in e["title"])]
    for explanation in causes:
        assert "--force-reinstall" not in explanation["fix"], explanation
        assert "interpreter of A" not in explanation["fix"], explanation
    numpy = next(e for e in causes if "numpy" in e["title"])
    assert numpy["fix"].startswith("A's numpy 2.2.6 is a build for CPython 3.11 only")
    assert "driftcheck restore" in numpy["fix"]


def test_a_pasted_reports_fix_runs_the_interpreter_b_describes(cli: Callable[..., CliResult]) -> None:
    report = str(DATA / "reports" / "sglang_08.txt")
    causes = _explained(cli, report, str(DATA / "pairs" / "base.json"))
    installs = [e["fix"] for e in causes if " -m pip install " in e["fix"]]
    assert installs
    for fix in installs:
        assert shlex.split(fix)[0] == "/opt/venv/bin/python", fix
    assert not [e["fix"] for e in causes if e["fix"].startswith(("python3 ", "pip "))]
