"""The floor plan holds: imports flow only downward through the layers, no two packages import each other,
the root holds only the face, and docs/architecture.md shows the layers the contract enforces."""

from __future__ import annotations

import sys
from collections import defaultdict

import grimp
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from importlinter.cli import lint_imports

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "driftcheck"
ROOT_MODULES = {"__init__.py", "__main__.py", "errors.py", "cli.py"}


def contract_layers() -> list[str]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return list(contract["layers"])


def test_no_upward_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)
    assert lint_imports(config_filename=str(REPO_ROOT / "pyproject.toml")) == 0


def _package_of(module: str, depth: int) -> str:
    return ".".join(module.split(".")[:depth])


def _cycles(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in edges.items() for b in targets if a < b and a in edges.get(b, set()))


@pytest.mark.parametrize("depth", [2, 3])
def test_no_two_packages_import_each_other(depth: int) -> None:
    graph = grimp.build_graph("driftcheck", exclude_type_checking_imports=True)
    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = _package_of(module, depth), _package_of(imported, depth)
            # A module and its own package's __init__ are one room, not a cycle.
            if a != b and not a.startswith(b + ".") and not b.startswith(a + "."):
                edges[a].add(b)
    assert _cycles(edges) == []


def test_the_root_holds_only_the_face() -> None:
    loose = {p.name for p in PACKAGE.glob("*.py")} - ROOT_MODULES
    assert loose == set()


def test_the_architecture_page_shows_the_enforced_layers() -> None:
    page = (REPO_ROOT / "docs" / "architecture.md").read_text("utf-8")
    for layer in contract_layers():
        for package in layer.split("|"):
            name = package.strip().removeprefix("driftcheck.")
            assert f"`{name}`" in page, f"docs/architecture.md does not name the layer package {name}"
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    in_layers = {package.strip().removeprefix("driftcheck.") for layer in contract_layers()
                 for package in layer.split("|")}
    assert packages <= in_layers, f"packages in no layer: {sorted(packages - in_layers)}"


def test_every_module_is_in_a_layer() -> None:
    in_layers = {package.strip() for layer in contract_layers() for package in layer.split("|")}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
        if module in ("driftcheck", "driftcheck.__main__"):
            continue
        assert any(module == layer or module.startswith(layer + ".") for layer in in_layers), module


def test_scripts_run_by_a_target_interpreter_import_nothing_of_driftcheck() -> None:
    # They run in the target host's Python, where driftcheck is not installed.
    scripts = [*(PACKAGE / "probes" / "scripts").glob("*.py"), PACKAGE / "hosts" / "batch_io.py"]
    for path in scripts:
        text = path.read_text("utf-8")
        assert "from driftcheck" not in text and "import driftcheck" not in text, path
