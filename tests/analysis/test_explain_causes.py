"""One cause per underlying change, relevant causes first, fixes that work, causes that do not hide.

The pairs start from the real base snapshot of tests/data/pairs (see its README) and change what a
real upgrade changes together: a wheel's version, its build id and compiled file, the library version
the nccl probe reads and the one torch reports. The wheel records follow the shape the packages probe
writes for the real nvidia-nccl-cu12 / nvidia-cublas-cu12 / nvidia-cudnn-cu12 wheels of PyPI.
"""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path
from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explained, explain
from driftcheck.snapshot.model import Snapshot, read_snapshot_file

BASE = Path(__file__).resolve().parent.parent / "data" / "pairs" / "base.json"
SITE = "/opt/venv/lib/python3.11/site-packages"
Doc = dict[str, Any]


def _base() -> Doc:
    return copy.deepcopy(read_snapshot_file(BASE).document)


def _data(doc: Doc, probe: str) -> Doc:
    return doc["probes"][probe]["data"]


def _wheel(doc: Doc, name: str, version: str, library: str | None = None) -> None:
    """Install wheel `name` at `version` in `doc` the way the packages and kernels probes record it."""
    build = "sha256:" + hashlib.sha256(f"{name}=={version}".encode()).hexdigest()
    _data(doc, "packages")["packages"][name] = {
        "name": name, "version": version, "location": SITE, "installer": "pip", "editable": False,
        "direct_url": None, "wheel_tags": ["py3-none-manylinux2014_x86_64", "py3-none-manylinux_2_17_x86_64"],
        "build_id": build, "compiled_files": 1 if library else 0}
    if library:
        _data(doc, "kernels")["files"][f"{name}:{library}"] = {
            "path": f"{SITE}/{library}", "size_bytes": 250_000_000, "record_match": True,
            "sha256": hashlib.sha256(f"{name}/{library}=={version}".encode()).hexdigest()}


def _pure(doc: Doc, name: str, version: str) -> None:
    _data(doc, "packages")["packages"][name] = {
        "name": name, "version": version, "location": SITE, "installer": "pip", "editable": False,
        "direct_url": None, "wheel_tags": ["py3-none-any"], "build_id": None, "compiled_files": 0}


def _nccl(doc: Doc, version: str) -> None:
    _wheel(doc, "nvidia-nccl-cu12", version, "nvidia/nccl/lib/libnccl.so.2")
    _data(doc, "nccl")["library"]["version"] = version
    _data(doc, "torch")["nccl_version"] = version


def _explain(a: Doc, b: Doc) -> Explained:
    return explain(diff_snapshots(Snapshot(a), Snapshot(b)))


def _pair(edit_a: Any, edit_b: Any) -> Explained:
    a, b = _base(), _base()
    edit_a(a)
    edit_b(b)
    return _explain(a, b)


# --- the "done when" of the issue --------------------------------------------------------------------

def _nccl_and_certifi() -> Explained:
    def before(doc: Doc) -> None:
        _nccl(doc, "2.22.3")
        _pure(doc, "certifi", "2024.8.30")

    def after(doc: Doc) -> None:
        _nccl(doc, "2.25.1")
        _pure(doc, "certifi", "2025.1.31")
    return _pair(before, after)


def test_nccl_upgrade_is_one_cause_first_with_its_fix_and_certifi_far_below() -> None:
    result = _nccl_and_certifi()
    first, second = result.explanations[:2]
    assert [e for e in result.explanations if "NCCL" in e.title] == [first]
    assert "nvidia-nccl-cu12" in first.title and "2.22.3 -> 2.25.1" in first.title
    assert {"probes.packages.data.packages.nvidia-nccl-cu12.version", "probes.nccl.data.library.version",
            "probes.torch.data.nccl_version"} <= set(first.evidence)
    assert first.fix == "/opt/venv/bin/python -m pip install nvidia-nccl-cu12==2.22.3"
    assert "certifi" in second.title and len(result.explanations) == 2
    assert second.confidence <= first.confidence / 2, (first.confidence, second.confidence)


# --- 1. ties are not broken by the alphabet ------------------------------------------------------------

def test_a_pure_python_upgrade_ranks_below_a_cublas_upgrade() -> None:
    def before(doc: Doc) -> None:
        _wheel(doc, "nvidia-cublas-cu12", "12.1.0.26", "nvidia/cublas/lib/libcublas.so.12")
        for name, version in (("certifi", "2024.8.30"), ("packaging", "24.1"), ("six", "1.16.0"),
                              ("urllib3", "2.2.2")):
            _pure(doc, name, version)

    def after(doc: Doc) -> None:
        _wheel(doc, "nvidia-cublas-cu12", "12.1.3.1", "nvidia/cublas/lib/libcublas.so.12")
        for name, version in (("certifi", "2025.1.31"), ("packaging", "24.2"), ("six", "1.17.0"),
                              ("urllib3", "2.3.0")):
            _pure(doc, name, version)
    result = _pair(before, after)
    first, *rest = result.explanations
    assert "cuBLAS" in first.title and "nvidia-cublas-cu12" in first.title
    assert rest and all(e.confidence < first.confidence for e in rest)
    # Among equals, the larger step first: certifi's new major release before three minor ones.
    assert [e.title.split()[0] for e in rest][0] == "certifi"


def test_a_package_the_server_maps_ranks_above_a_pure_python_one() -> None:
    def process(doc: Doc, lib_sha: str) -> None:
        doc["probes"]["process"] = {"status": "ok", "error": None, "duration_s": 0.1, "data": {
            "not_found": [], "processes": {"sglang.launch_server": {
                "pid": 4242, "name": "python3", "started_ticks": 1,
                "cmdline": ["python3", "-m", "sglang.launch_server"],
                "environ": {}, "affinity": "0-223", "mems_allowed": "0-3", "threads": 80, "cgroup": {},
                "numa_policies": [], "gpus": [],
                "mapped_libraries": {f"{SITE}/orjson/orjson.cpython-311-x86_64-linux-gnu.so":
                                     {"sha256": lib_sha, "deleted": False}}}}}}

    def before(doc: Doc) -> None:
        _pure(doc, "certifi", "2024.8.30")
        _pure(doc, "orjsonx", "3.10.0")
        _data(doc, "packages")["packages"]["orjson"] = {**_data(doc, "packages")["packages"].pop("orjsonx"),
                                                       "name": "orjson"}
        process(doc, "aa" * 32)

    def after(doc: Doc) -> None:
        _pure(doc, "certifi", "2025.1.31")
        _pure(doc, "orjsonx", "3.10.1")
        _data(doc, "packages")["packages"]["orjson"] = {**_data(doc, "packages")["packages"].pop("orjsonx"),
                                                       "name": "orjson"}
        process(doc, "bb" * 32)
    order = [e.title.split()[0] for e in _pair(before, after).explanations if "upgraded" in e.title]
    assert order == ["orjson", "certifi"]


# --- 2. one change is told once ------------------------------------------------------------------------

def test_cublas_upgrade_is_one_cause_and_never_same_version() -> None:
    result = _pair(lambda d: _wheel(d, "nvidia-cublas-cu12", "12.1.0.26", "nvidia/cublas/lib/libcublas.so.12"),
                   lambda d: _wheel(d, "nvidia-cublas-cu12", "12.1.3.1", "nvidia/cublas/lib/libcublas.so.12"))
    assert len(result.explanations) == 1
    only = result.explanations[0]
    assert "same version" not in only.title and "12.1.0.26 -> 12.1.3.1" in only.title
    assert "probes.packages.data.packages.nvidia-cublas-cu12.build_id" in only.evidence
    assert only.fix == "/opt/venv/bin/python -m pip install nvidia-cublas-cu12==12.1.0.26"


def test_same_version_different_build_only_when_the_version_is_equal() -> None:
    def rebuilt(doc: Doc) -> None:
        _wheel(doc, "nvidia-cublas-cu12", "12.1.3.1", "nvidia/cublas/lib/libcublas.so.12")
        _data(doc, "packages")["packages"]["nvidia-cublas-cu12"]["build_id"] = "sha256:" + "0" * 64
    result = _pair(lambda d: _wheel(d, "nvidia-cublas-cu12", "12.1.3.1", "nvidia/cublas/lib/libcublas.so.12"),
                   rebuilt)
    assert [e.rule for e in result.explanations] == ["package-build-changed"]
    assert "same version, different build" in result.explanations[0].title


def test_a_variable_seen_by_env_and_a_server_process_is_one_cause() -> None:
    def server(doc: Doc, value: str | None) -> None:
        environ = {"NCCL_IB_DISABLE": value} if value is not None else {}
        doc["probes"]["process"] = {"status": "ok", "error": None, "duration_s": 0.1, "data": {
            "not_found": [], "processes": {"sglang.launch_server": {
                "pid": 4242, "name": "python3", "started_ticks": 1, "cmdline": ["python3"], "environ": environ,
                "affinity": "0-223", "mems_allowed": "0-3", "threads": 80, "cgroup": {}, "numa_policies": [],
                "gpus": [], "mapped_libraries": {}}}}}

    def after(doc: Doc) -> None:
        _data(doc, "env")["vars"]["NCCL_IB_DISABLE"] = "1"
        _data(doc, "nccl")["env"]["NCCL_IB_DISABLE"] = "1"
        server(doc, "1")
    result = _pair(lambda d: server(d, None), after)
    assert len([e for e in result.explanations if "NCCL_IB_DISABLE" in e.title]) == 1
    assert len(result.explanations[0].evidence) == 3


# --- 3. fixes that work, titles without field paths ------------------------------------------------------

def test_torch_rebuilt_from_another_commit_pins_a_release_never_a_sha() -> None:
    def torch(doc: Doc, version: str, sha: str) -> None:
        _data(doc, "packages")["packages"]["torch"]["version"] = version
        _data(doc, "torch").update(version=version, git_version=sha)
    result = _pair(lambda d: torch(d, "2.5.1+cu124", "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"),
                   lambda d: torch(d, "2.6.0+cu124", "0982a4eee31c5c58e1c3a6ef1b7c7cd7f5a3ac04"))
    assert len(result.explanations) == 1
    assert result.explanations[0].fix == ("/opt/venv/bin/python -m pip install torch==2.5.1+cu124 "
                                              "--extra-index-url https://download.pytorch.org/whl/cu124")
    for e in result.explanations:
        assert not re.search(r"==[0-9a-f]{12,}", e.fix), e.fix


def test_a_cudnn_change_names_cudnn_and_its_wheel() -> None:
    def cudnn(doc: Doc, version: str, short: str) -> None:
        _wheel(doc, "nvidia-cudnn-cu12", version, "nvidia/cudnn/lib/libcudnn.so.9")
        _data(doc, "torch")["cudnn_version"] = short
    result = _pair(lambda d: cudnn(d, "9.1.0.70", "9.1.0"), lambda d: cudnn(d, "9.5.1.17", "9.5.1"))
    assert len(result.explanations) == 1
    only = result.explanations[0]
    assert "cuDNN" in only.title and "nvidia-cudnn-cu12" in only.title
    assert only.fix == "/opt/venv/bin/python -m pip install nvidia-cudnn-cu12==9.1.0.70"
    assert "CUDA" not in only.fix
    assert "probes.torch.data.cudnn_version" in only.evidence


def test_a_system_nccl_without_a_wheel_is_titled_without_field_paths() -> None:
    def system_nccl(doc: Doc, version: str) -> None:
        _data(doc, "nccl")["library"] = {"path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2", "version": version}
    result = _pair(lambda d: system_nccl(d, "2.21.5"), lambda d: system_nccl(d, "2.23.4"))
    title = result.explanations[0].title
    assert title == "NCCL 2.21.5 -> 2.23.4"
    assert "library.version" not in title and "pip install" not in result.explanations[0].fix


# --- 4. a cause does not hide behind its context -----------------------------------------------------------

def _rdma_swap_with_kernel_upgrade() -> tuple[Doc, Doc]:
    a, b = _base(), _base()
    _data(a, "system")["modules"]["nv_peer_mem"] = {"version": "1.3-0"}
    _data(b, "system")["modules"]["nvidia_peermem"] = {"version": "535.161.08"}
    _data(b, "system")["kernel"]["release"] = "6.8.0-45-generic"
    return a, b


def test_gpudirect_rdma_module_swap_is_one_named_cause_above_the_kernel_upgrade() -> None:
    result = _explain(*_rdma_swap_with_kernel_upgrade())
    first = result.explanations[0]
    assert "GPUDirect RDMA" in first.title
    assert "nv_peer_mem 1.3-0 unloaded" in first.title and "nvidia_peermem 535.161.08 loaded" in first.title
    assert set(first.evidence) == {"probes.system.data.modules.nv_peer_mem",
                                   "probes.system.data.modules.nvidia_peermem"}
    assert first.fix.startswith("sudo modprobe -r nvidia_peermem; sudo modprobe nv_peer_mem")
    assert not [e for e in result.explanations[1:] if "peer" in e.title]
    assert any("kernel" in e.title.lower() for e in result.explanations[1:])


# --- fixes against any reference (a fleet's majority host), not only A ------------------------------------

def test_fix_for_restores_the_reference_value() -> None:
    from driftcheck.analysis.diff import Change
    from driftcheck.analysis.explain import fix_for

    majority, odd = _base(), _base()
    gpu, record = next(iter(_data(odd, "gpu")["gpus"].items()))
    _data(majority, "gpu")["gpus"][gpu]["power"]["limit_w"] = 700.0
    _data(odd, "gpu")["gpus"][gpu]["power"]["limit_w"] = 450.0
    _nccl(majority, "2.22.3")
    _nccl(odd, "2.25.1")
    power = Change(("probes", "gpu", "data", "gpus", gpu, "power", "limit_w"), "changed", 700.0, 450.0,
                   "gpu_clock_power")
    found = fix_for(power, Snapshot(majority), Snapshot(odd))
    assert found is not None and found.fix == f"sudo nvidia-smi -i {record['index']} -pl 700"
    nccl = Change(("probes", "packages", "data", "packages", "nvidia-nccl-cu12", "version"), "changed", "2.22.3",
                  "2.25.1", "package_version")
    found = fix_for(nccl, Snapshot(majority), Snapshot(odd))
    assert found is not None and found.fix == "/opt/venv/bin/python -m pip install nvidia-nccl-cu12==2.22.3"
    volatile = Change(("probes", "gpu", "data", "gpus", gpu, "power", "draw_w"), "changed", 100.0, 300.0,
                      "gpu_clock_power")
    assert fix_for(volatile, Snapshot(majority), Snapshot(odd)) is None


# --- the relevance table --------------------------------------------------------------------------------

def test_relevance_of_curated_structural_and_pure_python_packages() -> None:
    from driftcheck.analysis.explain.relevance import relevance_table

    table = relevance_table()
    doc = _base()
    _wheel(doc, "some-ext", "1.0", "some_ext/_core.so")
    snapshots = (Snapshot(doc),)
    nccl, certifi, ext = (table.of(name, snapshots) for name in ("nvidia_nccl_cu12", "certifi", "some-ext"))
    assert (nccl.library, nccl.affects, nccl.group) == ("NCCL", "communication", "nccl") and nccl.why
    assert ext.group == "compiled" and certifi.group == "pure-python"
    assert certifi.prior < ext.prior < nccl.prior
    assert min(group.prior for group in table.groups) > table.pure_python


def test_relevance_table_errors() -> None:
    import pytest

    from driftcheck.analysis.explain.relevance import parse_relevance
    from driftcheck.errors import RuleCatalogError
    from driftcheck.snapshot.catalog import PackageEntry, PackageGroup

    structural = {"mapped": 0.7, "compiled": 0.5, "pure_python": 0.2}
    low = (PackageGroup("x", 0.1, "w", (PackageEntry("x"),)),)
    for document, groups, message in (
            ([], (), "mapping with `structural`"),
            ({"structural": {**structural, "mapped": 2}}, (), "0..1"),
            ({"structural": structural}, low, "rank below every group")):
        with pytest.raises(RuleCatalogError, match=message):
            parse_relevance(document, groups)


# --- a setting and what it brings, a setting on every device: one cause -----------------------------------

def test_the_iommu_switched_on_is_one_cause_with_its_flag_groups_and_units() -> None:
    def on(doc: Doc) -> None:
        _data(doc, "system")["iommu"] = {"mode": "translated", "groups": 142, "units": ["ivhd0", "ivhd1"],
                                         "cmdline": {"amd_iommu": "on"}}
        _data(doc, "system")["cmdline"] = {"amd_iommu": "on"}
    result = _pair(lambda d: _data(d, "system").update(cmdline={}), on)
    assert len(result.explanations) == 1
    assert len(result.explanations[0].evidence) == 5


def test_acs_switched_on_every_bridge_is_one_cause_with_a_fix_for_each() -> None:
    bridges = ("0000:19:00.0", "0000:3b:00.0", "0000:4c:00.0", "0000:5d:00.0")

    def acs(doc: Doc, value: str) -> None:
        _data(doc, "pcie")["sysfs"] = {bdf: {"acs_ctl": value, "current_link_width": 16} for bdf in bridges}
    result = _pair(lambda d: acs(d, "0x0000"), lambda d: acs(d, "0x005d"))
    assert len(result.explanations) == 1
    only = result.explanations[0]
    assert "0000:19:00.0, 0000:3b:00.0 and 2 more" in only.title and len(only.evidence) == 4
    assert "for b in 0000:19:00.0 0000:3b:00.0 0000:4c:00.0 0000:5d:00.0;" in only.fix
