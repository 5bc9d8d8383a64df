"""The shipped YAML tables read with libyaml's parser are exactly what `yaml.safe_load` reads."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
import yaml

from driftcheck.snapshot.shipped_yaml import parse_yaml_text, shipped_yaml
from tests.conftest import REPO_ROOT

SHIPPED = [(package, entry.name) for package in ("driftcheck.snapshot", "driftcheck.analysis", "driftcheck.baselines")
           for entry in resources.files(package).iterdir() if entry.name.endswith(".yaml")]


def test_every_shipped_table_is_found() -> None:
    assert {name for _, name in SHIPPED} >= {"catalog.yaml", "facts.yaml", "rules.yaml", "relevance.yaml"}


@pytest.mark.parametrize("package, name", SHIPPED)
def test_a_shipped_table_parses_as_safe_load_parses_it(package: str, name: str) -> None:
    text = resources.files(package).joinpath(name).read_text("utf-8")
    assert shipped_yaml(package, name) == yaml.safe_load(text)


def test_yaml_types_beyond_json_and_unsafe_tags_are_handled_as_safe_load_handles_them() -> None:
    text = "when: 2024-01-02\nratio: .5\nflag: yes\nempty: ~\nkeys: {1: one}\n"
    assert parse_yaml_text(text) == yaml.safe_load(text)
    with pytest.raises(yaml.YAMLError):
        parse_yaml_text("!!python/object/apply:os.system ['true']")


def test_libyaml_is_used_where_pyyaml_has_it() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    from driftcheck.snapshot import shipped_yaml as module

    assert module._safe_loader() is yaml.CSafeLoader  # noqa: SLF001 - which loader is the point



def test_a_cached_table_is_read_without_importing_pyyaml(tmp_path: Path) -> None:
    # PyYAML's import is a tenth of `explain`: a command whose tables are cached never pays for it.
    script = ("import sys; from driftcheck.snapshot.shipped_yaml import shipped_yaml; "
              "shipped_yaml('driftcheck.analysis', 'rules.yaml'); print('yaml' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "DRIFTCHECK_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                           timeout=60).stdout.strip() for _ in range(2)]
    assert runs == ["True", "False"]  # parsed once, then read from the cache
