"""The gate and its policy are functions of snapshots: they open no store, look up no probe and touch no file or
process (the check's orchestration, driftcheck.api.check, does: it reads the policy file too), and the gate
names no probe in its code."""

from __future__ import annotations

import ast
from pathlib import Path

import driftcheck.analysis.gate as gate
import driftcheck.analysis.policy as policy

FLOORS = ("driftcheck.store", "driftcheck.probes", "driftcheck.hosts", "driftcheck.runs",
          "driftcheck.api")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_gate_and_its_policy_import_no_store_probe_host_file_or_process() -> None:
    for module in (gate, policy):
        imported = _imports(Path(module.__file__ or ""))
        assert not {name for name in imported if name.startswith(FLOORS)}, (module.__name__, imported)
        assert not imported & {"os", "subprocess", "pathlib", "shutil", "yaml"}, (module.__name__, imported)


def test_the_gate_special_cases_no_probe_by_name() -> None:
    text = Path(gate.__file__).read_text("utf-8")
    assert '"server"' not in text and "'server'" not in text
