"""The structural diff: categories from the facts table, volatile facts hidden, outcome changes not "all removed"."""

from __future__ import annotations

from typing import Any

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.snapshot.model import Snapshot, new_document


def _snap(env: dict[str, str] | None, python: dict[str, Any] | None = None, status: str = "ok",
          host: str = "node-a") -> Snapshot:
    probes: dict[str, Any] = {}
    if env is not None:
        probes["env"] = {"status": status, "data": {"vars": env} if status == "ok" else None,
                         "error": None if status == "ok" else {"type": "X", "message": "boom"}, "duration_s": 0.1}
    if python is not None:
        probes["python"] = {"status": "ok", "data": python, "error": None, "duration_s": 0.2}
    return Snapshot(new_document({"name": host, "kind": "local"}, probes))


def test_changes_carry_the_category_their_probe_declares() -> None:
    diff = diff_snapshots(_snap({"NCCL_P2P_DISABLE": "0", "OMP_NUM_THREADS": "8"}),
                          _snap({"NCCL_P2P_DISABLE": "1", "CUDA_VISIBLE_DEVICES": "0,1"}))
    rows = {c.path: (c.kind, c.before, c.after, c.category) for c in diff.changes}
    assert rows == {
        "probes.env.data.vars.NCCL_P2P_DISABLE": ("changed", "0", "1", "nccl_env"),
        "probes.env.data.vars.OMP_NUM_THREADS": ("removed", "8", None, "env_var_other"),
        "probes.env.data.vars.CUDA_VISIBLE_DEVICES": ("added", None, "0,1", "env_var_other"),
    }


def test_volatile_facts_are_hidden_unless_asked() -> None:
    diff = diff_snapshots(_snap({"PWD": "/a", "HOME": "/root"}, host="a"),
                          _snap({"PWD": "/b", "HOME": "/root"}, host="b"))
    assert diff.changes == []
    # The shell's working directory and the host name are records of the taking: hidden, and not readings.
    assert diff.readings == []
    hidden = {c.path for c in diff.unlisted}
    assert {"probes.env.data.vars.PWD", "host.name"} <= hidden
    assert {c["path"] for c in explain(diff, include_volatile=True).to_json()["changes"]} == hidden


def test_a_probe_that_failed_on_one_side_is_an_outcome_change() -> None:
    diff = diff_snapshots(_snap({"A": "1", "B": "2"}), _snap({}, status="error"))
    assert [(c.path, c.before, c.after) for c in diff.changes] == [("probes.env.status", "ok", "error")]


def test_lists_compare_whole_and_odd_keys_are_quoted() -> None:
    a = _snap(None, {"sys_path": ["/a", "/b"], "platform": {"release": "6.1"}, "pkgs": {"zope.interface": "5"}})
    b = _snap(None, {"sys_path": ["/a", "/c"], "platform": {"release": "6.8"}, "pkgs": {"zope.interface": "6"}})
    rows = {c.path: c for c in diff_snapshots(a, b).changes}
    assert rows["probes.python.data.sys_path"].before == ["/a", "/b"]
    assert rows["probes.python.data.sys_path"].category == "other"
    assert rows["probes.python.data.platform.release"].category == "kernel_os"
    assert 'probes.python.data.pkgs["zope.interface"]' in rows


def test_probe_taken_on_one_side_only() -> None:
    diff = diff_snapshots(_snap({"A": "1"}), _snap({"A": "1"}, python={"version": "3.11"}))
    assert [(c.path, c.kind, c.after) for c in diff.changes] == [("probes.python", "added", "ok")]
