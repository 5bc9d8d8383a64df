"""A file shipped inside a package reads as importlib.resources reads it, from a directory or a zip archive."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from driftcheck.snapshot.shipped import shipped_text

SHIPPED = [(package, entry.name) for package in ("driftcheck.probes.scripts", "driftcheck.snapshot",
                                                  "driftcheck.analysis", "driftcheck.baselines")
           for entry in resources.files(package).iterdir() if entry.name.endswith((".py", ".yaml"))]


def test_every_shipped_file_reads_as_resources_reads_it() -> None:
    assert {name for _, name in SHIPPED} >= {"dist_facts.py", "facts_batch.py", "catalog.yaml", "rules.yaml"}
    for package, name in SHIPPED:
        assert shipped_text(package, name) == resources.files(package).joinpath(name).read_text("utf-8"), name


@pytest.fixture
def packages_on_path(tmp_path: Path) -> Iterator[Path]:
    """sys.path with `tmp_path` (and the zip archive written there) first; the packages imported there are
    forgotten after the test."""
    before = set(sys.modules)
    sys.path[:0] = [str(tmp_path / "shipped.zip"), str(tmp_path / "a"), str(tmp_path / "b")]
    try:
        yield tmp_path
    finally:
        del sys.path[:3]
        for name in set(sys.modules) - before:
            del sys.modules[name]


def test_a_zipped_package_and_a_namespace_package_read_as_resources_reads_them(packages_on_path: Path) -> None:
    text = "first\r\nsecond\rthird\nü\n"  # every line end a text file translates, and a character beyond ASCII
    with zipfile.ZipFile(packages_on_path / "shipped.zip", "w") as archive:
        archive.writestr("zipped_pkg/__init__.py", "")
        archive.writestr("zipped_pkg/table.yaml", text.encode("utf-8"))
    for half in ("a", "b"):  # one namespace package over two directories
        (packages_on_path / half / "spread_pkg").mkdir(parents=True)
    (packages_on_path / "b" / "spread_pkg" / "table.yaml").write_bytes(text.encode("utf-8"))
    for package in ("zipped_pkg", "spread_pkg"):
        expected = resources.files(package).joinpath("table.yaml").read_text("utf-8")
        assert expected == "first\nsecond\nthird\nü\n"
        assert shipped_text(package, "table.yaml") == expected, package
    with pytest.raises(OSError):
        shipped_text("zipped_pkg", "absent.yaml")
