"""The shipped tables' parse cache (driftcheck/snapshot/shipped_yaml.py): the same tables as parsing the text,
another file for another text, and never in the way when it cannot be written or holds what JSON cannot."""

from __future__ import annotations

import datetime
import os
from importlib import resources
from pathlib import Path

import pytest

from driftcheck.snapshot import shipped_yaml as tables
from driftcheck.snapshot.home import cache_dir

SHIPPED = [("driftcheck.analysis", "rules.yaml"), ("driftcheck.analysis", "relevance.yaml"),
           ("driftcheck.snapshot", "facts.yaml"), ("driftcheck.snapshot", "catalog.yaml")]


@pytest.mark.parametrize("package,name", SHIPPED)
def test_a_cached_table_is_the_parsed_table(package: str, name: str) -> None:
    first = tables.shipped_yaml(package, name)
    kept = list((cache_dir() / "tables").glob(f"{name}-*.json"))
    assert len(kept) == 1
    assert tables.shipped_yaml(package, name) == first  # read back from the cache
    text = resources.files(package).joinpath(name).read_text("utf-8")
    assert first == tables.parse_yaml_text(text)


def test_a_broken_cache_is_parsed_again_and_no_temporary_file_stays() -> None:
    tables.shipped_yaml("driftcheck.analysis", "relevance.yaml")
    (kept,) = (cache_dir() / "tables").glob("relevance.yaml-*.json")
    kept.write_text("{not json", "utf-8")
    assert tables.shipped_yaml("driftcheck.analysis", "relevance.yaml") == tables.parse_yaml_text(
        resources.files("driftcheck.analysis").joinpath("relevance.yaml").read_text("utf-8"))
    assert not [p for p in (cache_dir() / "tables").iterdir() if p.name.startswith(".table-")]


def test_what_json_cannot_hold_is_not_cached(tmp_path: Path) -> None:
    target = tmp_path / "tables" / "dated.json"
    tables._keep(target, {"when": datetime.date(2026, 12, 6)})
    tables._keep(tmp_path / "tables" / "keyed.json", {1: "one"})
    assert not target.exists() and not (tmp_path / "tables" / "keyed.json").exists()


def test_an_unwritable_cache_is_no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would be", "utf-8")
    monkeypatch.setenv("DRIFTCHECK_HOME", str(blocked))
    assert tables.shipped_yaml("driftcheck.snapshot", "catalog.yaml")
    assert os.path.isfile(blocked)


def test_no_home_directory_is_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    def nowhere() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("DRIFTCHECK_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(nowhere))
    assert tables.shipped_yaml("driftcheck.snapshot", "facts.yaml")
