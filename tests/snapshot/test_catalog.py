"""The catalog of names: one table of speed-deciding packages, env families and shell noise, read by all."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from driftcheck.analysis.explain.relevance import relevance_table
from driftcheck.analysis.rules import default_catalog
from driftcheck.errors import RuleCatalogError
from driftcheck.probes.env import performance_groups
from driftcheck.probes.kernels import is_kernel_package
from driftcheck.probes.process import performance_libraries
from driftcheck.snapshot.catalog import name_catalog, parse_catalog
from driftcheck.snapshot.facts import is_reading

PACKAGE = Path(__file__).resolve().parents[2] / "driftcheck"


def test_the_shipped_catalog_loads_once_and_answers_each_use() -> None:
    catalog = name_catalog()
    assert name_catalog() is catalog  # cached
    assert catalog.is_kernel_package("torch") and catalog.is_kernel_package("nvidia-cusolver-cu12")
    assert not catalog.is_kernel_package("markupsafe") and not catalog.is_kernel_package("sglang")
    assert catalog.summary_packages()[0] == "torch" and "numpy" in catalog.summary_packages()
    assert {"torch", "nvidia-nccl-cu12", "flash-attn"} <= set(catalog.watched_packages())
    assert {"libnccl", "libcuda.", "libtorch", "flash_attn"} <= set(catalog.mapped_libraries())
    assert catalog.env_family_of("NCCL_DEBUG") == "nccl" and catalog.env_family_of("LD_PRELOAD") == "loader"
    assert catalog.env_family_of("CUBLAS_WORKSPACE_CONFIG") == "cublas" and catalog.env_family_of("HOME") is None
    assert "OLDPWD" in catalog.shell_noise and "_" in catalog.shell_noise


def test_every_use_of_a_package_belongs_to_a_relevance_group() -> None:
    """A package driftcheck hashes, shows or watches has a curated relevance, not a structural guess."""
    table = relevance_table()
    for entry in name_catalog().entries():
        if entry.kernels or entry.summary or entry.watched:
            assert table.group_of(entry.name.replace("*", "x")) is not None, entry.name


def test_placeholders_are_written_out_and_an_unknown_category_is_refused() -> None:
    catalog = name_catalog()
    assert catalog.expand("x.{shell_noise}").startswith("x.PWD|OLDPWD|")
    expanded = catalog.expand("<var:{env_families:env_var_other}>")
    assert "CUDA_*" in expanded and "LD_PRELOAD" in expanded and "NCCL_*" not in expanded
    assert catalog.expand("{env_families:nccl_env}") == "NCCL_*"
    with pytest.raises(RuleCatalogError, match="no environment family"):
        catalog.expand("{env_families:thermal}")


def test_the_users_read_the_catalog() -> None:
    assert is_kernel_package("Flash_Attn") and is_kernel_package("nvidia-cutlass-dsl")
    maps = "7f-7f r-xp 0 0:0 1 /venv/lib/sgl_kernel/common_ops.so\n7f-7f r-xp 0 0:0 1 /usr/lib/libfoo.so\n"
    assert list(performance_libraries(maps)) == ["/venv/lib/sgl_kernel/common_ops.so"]
    assert performance_groups(["TOKENIZERS_PARALLELISM", "HOME", "KMP_AFFINITY"]) == {
        "huggingface": ["TOKENIZERS_PARALLELISM"], "omp": ["KMP_AFFINITY"]}
    assert default_catalog().packages == name_catalog().watched_packages()
    assert relevance_table().group_of("sglang-kernel") is not None
    assert is_reading(("probes", "env", "data", "vars", "SHLVL"))
    rule = default_catalog().first_match(("probes", "env", "data", "vars", "NVTE_FUSED_ATTN"), "changed")
    assert rule is not None and rule[0].id == "env-performance-family"


def _document(**changes: Any) -> dict[str, Any]:
    group = {"id": "g", "prior": 0.5, "why": "w", "packages": [{"name": "p"}]}
    return {"package_groups": [{**group, **changes}]}


@pytest.mark.parametrize(("document", "message"), [
    ({}, "`package_groups` list"),
    (_document(packages=None), "needs `id`, `why` and `packages`"),
    (_document(prior=2), "0..1"),
    (_document(affects="weather"), "affects"),
    (_document(packages=[{"name": "p-*", "summary": True}]), "not a glob"),
    (_document(packages=[{"name": "p", "hashed": True}]), "unknown key"),
    (_document(packages=[{"name": "p", "maps": [1]}]), "list of names"),
    ({**_document(), "env_families": [{"name": "x", "vars": ["X_*"], "category": "weather"}]}, "unknown category"),
    ({**_document(), "env_families": [{"name": "x"}]}, "needs a `name` and `vars`"),
])
def test_catalog_errors(document: dict[str, Any], message: str) -> None:
    with pytest.raises(RuleCatalogError, match=message):
        parse_catalog(document)


# Names the lists used to be spelled as, and entries only the catalog may hold.
_RETIRED_CONSTANTS = ("KERNEL_PACKAGES", "PERF_PACKAGES", "PERFORMANCE_LIBRARIES", "PERF_ENV_PREFIXES", "SHELL_NOISE",
                      "GROUPS: dict")
_CATALOG_ONLY = ("flashinfer-jit-cache", "libnvJitLink", "TOKENIZERS_", "XDG_SESSION_ID")


def _sources() -> list[Path]:
    return [path for path in sorted(PACKAGE.rglob("*")) if path.suffix in (".py", ".yaml")
            and path.name not in ("catalog.py", "catalog.yaml")]


def test_no_module_restates_the_catalog() -> None:
    for path in _sources():
        text = path.read_text("utf-8")
        for constant in _RETIRED_CONSTANTS:
            assert constant not in text, f"{path}: restates {constant} (read driftcheck/snapshot/catalog.py)"
        for name in _CATALOG_ONLY:
            # rules.yaml's ignore rules (the "never a cause" mechanism, owned elsewhere) still spell the
            # shell noise out; nothing else may.
            if path.name == "rules.yaml" and name == "XDG_SESSION_ID":
                continue
            assert name not in text, f"{path}: spells out {name}, an entry of catalog.yaml"


def test_the_other_tables_hold_no_list_of_their_own() -> None:
    rules = yaml.safe_load((PACKAGE / "analysis" / "rules.yaml").read_text("utf-8"))
    relevance = yaml.safe_load((PACKAGE / "analysis" / "relevance.yaml").read_text("utf-8"))
    facts = yaml.safe_load((PACKAGE / "snapshot" / "facts.yaml").read_text("utf-8"))
    assert "packages" not in rules and "groups" not in relevance and "shell_noise" not in facts
    assert not re.search(r"CUDA_\*\|", (PACKAGE / "analysis" / "rules.yaml").read_text("utf-8"))


def test_a_gpu_only_variable_is_one_a_gpu_only_family_names() -> None:
    """`gpu_only_variable` (one regex of every gpu_only glob) answers as the families one by one."""
    catalog = name_catalog()
    names = [glob.replace("*", "X").replace("?", "Y") for family in catalog.env_families for glob in family.vars]
    for name in [*names, "", "HOME", "PATH", "NCCL", "CUDA_VISIBLE_DEVICES", "cuda_visible_devices", "OMP_X"]:
        expected = any(family.gpu_only and family.matches(name) for family in catalog.env_families)
        assert catalog.gpu_only_variable(name) == expected, name
