"""The gate is a function of snapshots: it opens no store, looks up no probe and touches no file or process
(the check's orchestration, driftcheck.api.check, does), and names no probe in its code."""

from __future__ import annotations

import ast
from pathlib import Path

import driftcheck.analysis.gate as gate

FLOORS = ("driftcheck.store", "driftcheck.probes", "driftcheck.hosts", "driftcheck.runs",
          "driftcheck.analysis.references")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_gate_imports_no_store_probe_host_or_process() -> None:
    imported = _imports(Path(gate.__file__))
    assert not {name for name in imported if name.startswith(FLOORS)}, imported
    assert not imported & {"os", "subprocess", "pathlib", "shutil"}, imported


def test_the_gate_special_cases_no_probe_by_name() -> None:
    text = Path(gate.__file__).read_text("utf-8")
    assert '"server"' not in text and "'server'" not in text
