"""An installed driftcheck has every module and the rule catalog (setup.cfg uses `packages = find:`)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "driftcheck"


def test_every_module_folder_is_a_package() -> None:
    folders = {path.parent for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts}
    assert [str(f) for f in sorted(folders) if not (f / "__init__.py").exists()] == []


def test_rule_catalog_is_package_data() -> None:
    setup = (PACKAGE.parent / "setup.cfg").read_text("utf-8")
    assert "snapshot/*.yaml" in setup
    assert (PACKAGE / "snapshot" / "rules.yaml").is_file()
