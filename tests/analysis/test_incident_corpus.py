"""The incident corpus (tests/data/incidents) is sound, and the accuracy benchmark scores what it claims.

Each incident is a real regression from a public thread with a snapshot pair built from real recordings.
These tests check the data, not `explain`'s ranking: the ranking is measured by
benchmarks/explain_accuracy.py, so a wrongly ranked incident is a figure to improve, not a failing test.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from driftcheck.snapshot.model import read_snapshot_file
from driftcheck.snapshot.vocabulary import CATEGORIES
from tests.conftest import REPO_ROOT, CliResult

CORPUS = REPO_ROOT / "tests" / "data" / "incidents"
INCIDENTS = sorted(p.parent.name for p in CORPUS.glob("*/incident.yaml"))
# Where the corpus's reports come from: public issue trackers and forums (NVIDIA developer forums, Stack Overflow).
SOURCE_URL = re.compile(r"^https://(github\.com/[\w.\-]+/[\w.\-]+/(issues|pull|discussions)/\d+"
                        r"|forums\.developer\.nvidia\.com/t/\S+|stackoverflow\.com/questions/\d+)$")


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("explain_accuracy", REPO_ROOT / "benchmarks" / "explain_accuracy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: its dataclasses look their module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENCH = _benchmark()


def _incident(slug: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((CORPUS / slug / "incident.yaml").read_text("utf-8"))
    return document


_DIFFS: dict[str, dict[str, Any]] = {}


def _diff(slug: str, cli: Callable[..., CliResult]) -> dict[str, Any]:
    """`driftcheck diff A B --format json --all` of an incident (volatile readings a rule weighs included)."""
    if slug not in _DIFFS:
        result = cli("diff", str(CORPUS / slug / "a.json"), str(CORPUS / slug / "b.json"), "--format", "json", "--all")
        assert result.returncode == 1, result.stderr
        _DIFFS[slug] = json.loads(result.stdout)
    return _DIFFS[slug]


def test_corpus_holds_at_least_forty_incidents() -> None:
    assert len(INCIDENTS) >= 40, INCIDENTS


def test_corpus_covers_the_kinds_of_cause() -> None:
    categories = {_incident(slug)["expected"]["category"] for slug in INCIDENTS}
    assert {"nccl_env", "package_version", "driver_version", "kernel_os", "mig_ecc_persistence", "gpu_clock_power",
            "pcie_link", "p2p_topology", "container_limits", "numa", "cpu_governor", "env_var_other"} <= categories
    hard = [slug for slug in INCIDENTS if _incident(slug).get("hard_case")]
    assert len(hard) >= 3, hard


@pytest.mark.parametrize("slug", INCIDENTS)
def test_incident_yaml_is_complete(slug: str) -> None:
    document = _incident(slug)
    assert document["slug"] == slug
    assert document["sources"], "an incident without its thread"
    for source in document["sources"]:
        assert SOURCE_URL.match(source["url"]), source
    for key in ("summary", "symptom", "changed"):
        assert isinstance(document[key], str) and document[key].strip(), key
    expected = document["expected"]
    assert expected["category"] in CATEGORIES
    assert set(expected.get("also_accept", [])) <= set(CATEGORIES)
    assert expected["evidence"] and all(path.startswith("probes.") for path in expected["evidence"])
    assert document["red_herrings"], "every incident mixes in a harmless change"
    for herring in document["red_herrings"]:
        assert herring["what"] and herring["paths"]


@pytest.mark.parametrize("slug", INCIDENTS)
def test_pair_reads_cleanly(slug: str, cli: Callable[..., CliResult]) -> None:
    for side in ("a", "b"):
        path = CORPUS / slug / f"{side}.json"
        snapshot = read_snapshot_file(path)
        document = json.loads(path.read_text("utf-8"))
        # Built by editing: unsigned, so no stale signature claims the edited content.
        assert "signature" not in document
        outcomes = {name: probe["status"] for name, probe in snapshot.document["probes"].items()}
        assert all(status == "ok" for status in outcomes.values()), outcomes
        assert {"gpu", "pcie", "system", "env", "nccl", "packages", "kernels", "torch"} <= set(outcomes)
        assert len(document["probes"]["gpu"]["data"]["gpus"]) == 8
        verdict = cli("verify", str(path))
        assert verdict.returncode == 1 and "not signed" in verdict.stdout + verdict.stderr


@pytest.mark.parametrize("slug", INCIDENTS)
def test_expected_evidence_is_a_change_of_the_pair(slug: str, cli: Callable[..., CliResult]) -> None:
    changed = {change["path"] for change in _diff(slug, cli)["changes"]}
    missing = [path for path in _incident(slug)["expected"]["evidence"] if path not in changed]
    assert not missing, f"expected evidence not among the changes: {missing}"


@pytest.mark.parametrize("slug", INCIDENTS)
def test_red_herrings_are_changes_of_the_pair(slug: str, cli: Callable[..., CliResult]) -> None:
    changed = [change["path"] for change in _diff(slug, cli)["changes"]]
    for herring in _incident(slug)["red_herrings"]:
        assert any(fnmatch.fnmatchcase(path, pattern) for pattern in herring["paths"] for path in changed), herring


def test_readme_lists_every_incident_with_its_source() -> None:
    readme = (CORPUS / "README.md").read_text("utf-8")
    for slug in INCIDENTS:
        line = next((line for line in readme.splitlines() if f"`{slug}`" in line), None)
        assert line is not None, slug
        assert _incident(slug)["sources"][0]["url"] in line


# ---- the benchmark's scoring, on small synthetic reports --------------------------------------------

def _explanation(rank: int, category: str, title: str, evidence: list[str], fix: str = "") -> dict[str, Any]:
    return {"rank": rank, "category": category, "title": title, "evidence": evidence, "confidence": 0.5, "fix": fix}


NCCL_PKG = "probes.packages.data.packages.nvidia-nccl-cu12.version"
NCCL_LIB = "probes.nccl.data.library.version"
CERTIFI = "probes.packages.data.packages.certifi.version"
EXPECTED = BENCH.Expected(("package_version", "nccl_env"), (NCCL_PKG, NCCL_LIB))
VERSIONS_A = {"nvidia-nccl-cu12": "2.22.3", "certifi": "2025.4.26", "torch": "2.7.0+cu128"}


def test_score_counts_a_first_place_hit() -> None:
    report = {"explanations": [
        _explanation(1, "package_version", "nvidia-nccl-cu12 upgraded 2.22.3 -> 2.25.1", [NCCL_PKG, NCCL_LIB],
                     "pip install nvidia-nccl-cu12==2.22.3"),
        _explanation(2, "package_version", "certifi upgraded 2025.4.26 -> 2025.6.15", [CERTIFI],
                     "pip install certifi==2025.4.26")]}
    result = BENCH.score("x", report, EXPECTED, VERSIONS_A)
    assert (result.hit_rank, result.top1, result.top3, result.defects) == (1, True, True, [])


def test_score_wants_category_and_evidence_together() -> None:
    report = {"explanations": [
        _explanation(1, "package_version", "certifi upgraded", [CERTIFI]),
        _explanation(2, "other", "NCCL library changed", [NCCL_LIB]),
        _explanation(3, "driver_version", "driver changed", ["probes.gpu.data.driver_version"]),
        _explanation(4, "nccl_env", "NCCL 2.22.3 -> 2.25.1", [NCCL_LIB])]}
    result = BENCH.score("x", report, EXPECTED, VERSIONS_A)
    assert (result.hit_rank, result.top1, result.top3) == (4, False, False)
    first = {"explanations": [{**report["explanations"][3], "rank": 1}]}
    summary = BENCH.Summary([result, BENCH.score("y", first, EXPECTED, VERSIONS_A)])
    figures = summary.to_json()
    assert (figures["top1"], figures["top3"], figures["top1_pct"]) == (1, 1, 50.0)
    assert [miss["slug"] for miss in figures["misses"]] == ["x"]


def test_one_change_told_twice_is_a_duplicate() -> None:
    report = {"explanations": [
        _explanation(1, "nccl_env", "NCCL library 2.22.3 -> 2.25.1", [NCCL_LIB]),
        _explanation(2, "package_version", "nvidia-nccl-cu12 upgraded 2.22.3 -> 2.25.1", [NCCL_PKG]),
        _explanation(3, "package_version", "certifi upgraded", [CERTIFI])]}
    defects = BENCH.score("x", report, EXPECTED, VERSIONS_A).defects
    assert [(d.kind, d.ranks) for d in defects] == [("duplicate", (1, 2))]


def test_a_variable_seen_by_two_probes_is_one_cause() -> None:
    both = [_explanation(1, "nccl_env", "NCCL_P2P_DISABLE=1 set", ["probes.env.data.vars.NCCL_P2P_DISABLE"]),
            _explanation(2, "nccl_env", "NCCL_P2P_DISABLE=1 set", ["probes.nccl.data.env.NCCL_P2P_DISABLE"])]
    defects = BENCH.presentation_defects(both, VERSIONS_A)
    assert [d.kind for d in defects] == ["duplicate"]


def test_a_duplicate_below_the_third_place_is_not_counted_but_a_bad_pin_is() -> None:
    ranked = [_explanation(1, "numa", "NUMA balancing on", ["probes.system.data.numa.balancing"]),
              _explanation(2, "package_version", "certifi upgraded", [CERTIFI]),
              _explanation(3, "env_var_other", "HOSTNAME changed", ["probes.env.data.vars.HOSTNAME"]),
              _explanation(4, "package_version", "certifi files", ["probes.kernels.data.files[\"certifi:x.so\"]"])]
    assert BENCH.presentation_defects(ranked, VERSIONS_A) == []
    ranked.append(_explanation(5, "package_version", "torch build.version changed", ["probes.torch.data.git_version"],
                               "pip install torch==0982a4eee31c"))
    assert [(d.kind, d.ranks) for d in BENCH.presentation_defects(ranked, VERSIONS_A)] == \
        [("invalid_pin", (5,)), ("raw_path", (5,))]


def test_pins_must_restore_a_real_version_of_a() -> None:
    sha = "0982a4eee31c1b9bbd3b2a0e5ad1d3c6c1f3a2b4"
    assert BENCH.invalid_pins(f"pip install torch=={sha}", VERSIONS_A) == [f"torch=={sha} (A has 2.7.0+cu128)"]
    assert BENCH.invalid_pins("pip install certifi==2025.6.15", VERSIONS_A) == ["certifi==2025.6.15 (A has 2025.4.26)"]
    assert BENCH.invalid_pins("pip install nvidia-nccl-cu12==2.22.3; restart the server", VERSIONS_A) == []
    assert BENCH.invalid_pins("pip install Nvidia_NCCL_cu12==2.22.3", VERSIONS_A) == []
    assert BENCH.invalid_pins("pip install flashinfer-python==0.2.6", VERSIONS_A) == ["flashinfer-python==0.2.6"]


def test_raw_field_paths_in_titles_are_found() -> None:
    assert BENCH.raw_path_in_title("NCCL library library.version 2.22.3 -> 2.25.1") == "library.version"
    assert BENCH.raw_path_in_title("nv_peer_mem version=1.3-0 -> none") == "version=1.3-0"
    assert BENCH.raw_path_in_title("probes.system.data.numa.balancing changed") == "probes.system.data.numa.balancing"
    assert BENCH.raw_path_in_title("power.limit_w of GPU 3: 700 -> 350") == "power.limit_w"
    for clean in ("NCCL_P2P_DISABLE=1 set (unset on A)", "HOSTNAME gpu-node-17 -> gpu-node-17.cluster.local",
                  "libnccl.so.2 rebuilt", "torch upgraded 2.6.0+cu124 -> 2.7.0+cu128",
                  "amd_iommu=on added to the kernel command line", "power limit lowered on GPU 3: 700 W -> 350 W"):
        assert BENCH.raw_path_in_title(clean) is None, clean


def test_evidence_roots_join_a_wheel_and_the_library_it_ships() -> None:
    root = BENCH.evidence_root
    assert root(NCCL_PKG) == root(NCCL_LIB) == root("probes.torch.data.nccl_version") == \
        root("probes.torch.data.cuda_wheels.nvidia-nccl-cu12") == \
        root('probes.kernels.data.files["nvidia-nccl-cu12:nvidia/nccl/lib/libnccl.so.2"].sha256')
    assert root("probes.system.data.modules.nv_peer_mem") == root("probes.system.data.modules.nvidia_peermem")
    assert root("probes.gpu.data.driver_version") == root("probes.system.data.modules.nvidia.version") == \
        root('probes.kernels.data.files["system:/usr/lib/x86_64-linux-gnu/libcuda.so.1"].sha256')
    assert root(NCCL_PKG) != root("probes.packages.data.packages.nvidia-cublas-cu12.version")
    assert root("probes.packages.data.packages.torch.version") != root(NCCL_PKG)


def test_benchmark_runs_on_a_corpus_of_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slug = "nccl-p2p-level-loc"
    target = tmp_path / slug
    target.mkdir()
    for name in ("a.json", "b.json", "incident.yaml"):
        (target / name).write_bytes((CORPUS / slug / name).read_bytes())
    assert BENCH.main(["--corpus", str(tmp_path), "--format", "json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["incidents"] == 1 and figures["top3"] in (0, 1)
    assert set(figures["defects"]) == {"duplicate", "invalid_pin", "raw_path"}
    assert BENCH.main(["--corpus", str(tmp_path / "nothing")]) == 2
