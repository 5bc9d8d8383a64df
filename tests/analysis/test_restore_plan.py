"""The restore plan, its exports and its check, as pure functions of snapshot data; the requirement of a direct
URL install checked against pip's own spelling (`direct_url_as_pep440_direct_reference`, the pip installed
here) of real `direct_url.json` records pip builds."""

from __future__ import annotations

from typing import Any

import pytest
from pip._internal.models.direct_url import ArchiveInfo, DirectUrl, DirInfo, VcsInfo
from pip._internal.utils.direct_url_helpers import direct_url_as_pep440_direct_reference

from driftcheck.analysis.restore_exports import env_file_text, server_command_text
from driftcheck.analysis.restore_plan import IndexOptions, plan_restore
from driftcheck.analysis.restore_sources import direct_requirement
from driftcheck.analysis.restore_verify import check_restore
from driftcheck.snapshot.model import Snapshot

REDACTED = "<redacted:hmac-sha256:0123456789abcdef>"


def _snapshot(packages: dict[str, Any], env: dict[str, str] | None = None, server: Any = None) -> Snapshot:
    probes: dict[str, Any] = {
        "packages": {"status": "ok", "data": {"interpreter": "/opt/venv/bin/python", "packages": packages}},
        "python": {"status": "ok", "data": {"version": "3.11.7", "executable": "/opt/venv/bin/python"}},
    }
    if env is not None:
        probes["env"] = {"status": "ok", "data": {"vars": env, "groups": {"nccl": sorted(env)}}}
    if server is not None:
        probes["server"] = {"status": "ok", "data": server}
    return Snapshot({"schema": 1, "created_at": "2026-12-01T00:00:00Z", "host": {"name": "a"}, "probes": probes})


def _record(name: str, version: str, direct_url: Any = None, **more: Any) -> dict[str, Any]:
    return {"name": name, "version": version, "direct_url": direct_url, "editable": False, "build_id": None,
            "wheel_tags": ["py3-none-any"], **more}


@pytest.mark.parametrize("direct", [
    DirectUrl("https://github.com/flashinfer-ai/flashinfer.git",
              VcsInfo("git", "0123456789abcdef0123456789abcdef01234567", requested_revision="main")),
    DirectUrl("https://github.com/sgl-project/sglang.git", VcsInfo("git", "89abcdef" * 5), subdirectory="python"),
    DirectUrl("https://example.org/wheels/sgl_kernel-0.3.0-cp39-abi3-manylinux2014_x86_64.whl",
              ArchiveInfo(hash="sha256=" + "ab" * 32)),
    DirectUrl("file:///src/vllm/dist/vllm-0.9.0-cp312-cp312-linux_x86_64.whl", ArchiveInfo()),
    DirectUrl("file:///src/flash-attention", DirInfo(editable=False)),
])
def test_a_direct_url_install_is_required_as_pip_spells_it(direct: DirectUrl) -> None:
    record = direct.to_dict()
    source, requirement, editable = direct_requirement("pkg", record) or ("", "", True)
    assert requirement == direct_url_as_pep440_direct_reference(DirectUrl.from_dict(record), "pkg")
    assert not editable and source in ("vcs", "archive", "directory")


def test_an_editable_install_stays_editable() -> None:
    record = DirectUrl("file:///src/sglang/python", DirInfo(editable=True)).to_dict()
    assert direct_requirement("sglang", record) == ("directory", "-e file:///src/sglang/python", True)


def test_index_releases_are_pinned_with_the_cuda_index_they_need() -> None:
    plan = plan_restore(_snapshot({"torch": _record("torch", "2.7.0+cu128"), "numpy": _record("numpy", "2.2.6")}))
    assert [p.requirement for p in plan.packages] == ["numpy==2.2.6", "torch==2.7.0+cu128"]
    assert plan.indexes.extra_index_urls == ("https://download.pytorch.org/whl/cu128",)
    assert plan.python_version == "3.11.7"
    assert "--extra-index-url https://download.pytorch.org/whl/cu128" in plan.requirements_text().splitlines()


def test_a_configured_index_is_used_and_a_redacted_one_is_said() -> None:
    env = {"PIP_INDEX_URL": "https://mirror.example/simple", "PIP_EXTRA_INDEX_URL": REDACTED}
    plan = plan_restore(_snapshot({"numpy": _record("numpy", "2.2.6")}, env))
    assert plan.indexes.index_url == "https://mirror.example/simple"
    assert any("PIP_EXTRA_INDEX_URL" in note and "credential" in note for note in plan.notes)
    given = plan_restore(_snapshot({}, env), IndexOptions(no_index=True, find_links=("/wheels",)))
    assert given.indexes.option_lines() == ["--no-index", "--find-links /wheels"]


def test_a_version_no_index_serves_is_not_planned_and_says_why() -> None:
    plan = plan_restore(_snapshot({"torch": _record("torch", "a1b2c3d4e5f6")}))
    (package,) = plan.packages
    assert package.requirement is None and "not a release version" in (package.why or "")
    assert "# not planned: torch a1b2c3d4e5f6:" in plan.requirements_text()


def test_the_env_file_never_holds_a_secret() -> None:
    env = {"NCCL_P2P_DISABLE": "1", "NCCL_IB_HCA": "mlx5_0 mlx5_1", "HF_TOKEN": "hf_abc", "NCCL_X": REDACTED}
    text = env_file_text(_snapshot({}, env))
    assert "export NCCL_P2P_DISABLE=1" in text and "export NCCL_IB_HCA='mlx5_0 mlx5_1'" in text
    assert "hf_abc" not in text and REDACTED not in text
    assert "# HF_TOKEN held a credential on A" in text and "# NCCL_X held a credential on A" in text


def test_the_server_command_line_is_quoted_and_its_absence_said() -> None:
    launch = {"found": True, "why": None, "cmdline": ["python3", "-m", "sglang.launch_server", "--model-path",
                                                      "/models/Llama 3", "--api-key", REDACTED]}
    text = server_command_text(_snapshot({}, server={"engine": "sglang", "version": "0.5.1", "launch": launch}))
    assert "python3 -m sglang.launch_server --model-path '/models/Llama 3' --api-key" in text
    assert "(sglang 0.5.1)" in text and "redacted in the snapshot" in text
    assert "none recorded: the snapshot was taken without --server" in server_command_text(_snapshot({}))


def test_the_check_names_each_difference_with_its_reason() -> None:
    a = {"alpha": _record("alpha", "1.0"), "ext": _record("ext", "1.0", build_id="sha256:aa",
                                                          wheel_tags=["cp311-cp311-linux_x86_64"]),
         "gone": _record("gone", "3.0")}
    new = {"alpha": _record("alpha", "1.0"), "ext": _record("ext", "1.0", build_id="sha256:bb",
                                                            wheel_tags=["cp312-cp312-linux_x86_64"]),
           "extra": _record("extra", "0.1")}
    check = check_restore(a, new, {"gone": "ERROR: No matching distribution found for gone==3.0"}, ("3.11.7", "3.12.1"))
    why = {package.name: package.why for package in check.not_reproduced}
    assert why == {"ext": ("a wheel for another platform: cp312-cp312-linux_x86_64 instead of A's "
                           "cp311-cp311-linux_x86_64",),
                   "gone": ("not installed: ERROR: No matching distribution found for gone==3.0",)}
    assert check.verdict() == ("Python 3.12.1 instead of A's 3.11.7; 2 of 3 distributions not reproduced; "
                               "1 not on A (extra)")
    same = check_restore({"alpha": a["alpha"]}, {"alpha": a["alpha"]}, {}, ("3.11.7", "3.11.7"))
    assert same.same and same.verdict() == "same versions, same binaries (1 distribution)"


def test_a_conda_environment_is_said_to_be_rebuilt_only_in_part() -> None:
    snapshot = _snapshot({"numpy": _record("numpy", "2.2.6")})
    snapshot.document["probes"]["packages"]["data"]["conda"] = {"python": {"version": "3.11.7", "build": "h1",
                                                                           "channel": "conda-forge"}}
    (note,) = plan_restore(snapshot).notes
    assert "conda environment: its 1 conda packages are not rebuilt" in note
