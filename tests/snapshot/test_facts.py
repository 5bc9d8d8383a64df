"""The facts table: one table of categories and volatile paths, and a diff that loads no probe code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from driftcheck.errors import RuleCatalogError
from driftcheck.probes import PROBE_CLASSES
from driftcheck.snapshot.facts import fact_table, parse_facts
from driftcheck.snapshot.paths import format_path, parse_path

BASE = Path(__file__).resolve().parent.parent / "data" / "pairs" / "base.json"

# Run in a fresh interpreter: this process has imported the probes already (pytest collected them).
_ISOLATED = """
import json, sys
from driftcheck.analysis.diff import diff_snapshots
from driftcheck.snapshot.model import read_snapshot_file
from pathlib import Path
a = read_snapshot_file(Path(sys.argv[1]))
b = read_snapshot_file(Path(sys.argv[2]))
diff = diff_snapshots(a, b)
print(json.dumps({"changes": [c.path for c in diff.changes],
                  "probes": sorted(m for m in sys.modules if m.startswith("driftcheck.probes")),
                  "driftcheck": sorted(m for m in sys.modules if m.startswith("driftcheck"))}))
"""


def test_diffing_two_snapshots_loads_no_probe_code(tmp_path: Path) -> None:
    document = json.loads(BASE.read_text("utf-8"))
    document["probes"]["env"]["data"]["vars"]["NCCL_P2P_DISABLE"] = "1"
    changed = tmp_path / "b.json"
    changed.write_text(json.dumps(document), "utf-8")
    done = subprocess.run([sys.executable, "-c", _ISOLATED, str(BASE), str(changed)], capture_output=True,
                          text=True, check=True)
    seen = json.loads(done.stdout)
    assert seen["changes"] == ["probes.env.data.vars.NCCL_P2P_DISABLE"]
    assert seen["probes"] == [], seen["driftcheck"]


def test_explain_loads_no_probe_code_either(tmp_path: Path) -> None:
    script = _ISOLATED.replace("diff = diff_snapshots(a, b)",
                               "from driftcheck.analysis.explain import explain\n"
                               "diff = diff_snapshots(a, b)\nexplain(diff).to_json()")
    done = subprocess.run([sys.executable, "-c", script, str(BASE), str(BASE)], capture_output=True, text=True,
                          check=True)
    assert json.loads(done.stdout)["probes"] == []


def test_every_builtin_probe_has_a_catch_all_category() -> None:
    table = fact_table()
    for cls in PROBE_CLASSES:
        assert cls.name in table.by_probe, f"facts.yaml says nothing of the {cls.name} probe"
        # An outcome change (probe failed on one side) takes the probe's catch-all category.
        assert table.category(("probes", cls.name, "status")) != "other" \
            or cls.name in ("gpu", "process", "bench", "server")


@pytest.mark.parametrize(("path", "category", "volatile"), [
    ("probes.env.data.vars.PWD", "env_var_other", True),
    ("probes.process.data.processes.sglang.environ.NCCL_DEBUG", "nccl_env", False),
    ("probes.process.data.processes.sglang.environ.SHLVL", "env_var_other", True),
    ("probes.process.data.processes.sglang.pid", "other", True),
    ("probes.process.data.processes.sglang.cgroup.path", "container_limits", True),
    ("probes.process.data.processes.sglang.mapped_libraries.libnccl", "package_binary", False),
    ('probes.nccl.data.net["docker0"].mtu', "nccl_env", True),
    ("probes.system.data.hugepages.sizes.2048kB.free", "thp_memory", True),
    ("probes.system.data.hugepages.sizes.2048kB.total", "thp_memory", False),
    ("probes.gpu.data.gpus.GPU-1.clocks", "gpu_clock_power", False),
    ("probes.gpu.data.gpus.GPU-1.clocks.sm_mhz", "gpu_clock_power", True),
    ("probes.newprobe.data.x", "other", False),
    ("host.name", "other", False),
])
def test_paths_of_other_probes(path: str, category: str, volatile: bool) -> None:
    table = fact_table()
    parts = parse_path(path)
    assert (table.category(parts), table.volatile(parts)) == (category, volatile)


@pytest.mark.parametrize(("document", "message"), [
    ({}, "`facts` list"),
    ({"facts": [{"match": "probes.env.**"}]}, "neither a category"),
    ({"facts": [{"match": "probes.env.**", "category": "weather"}]}, "unknown category"),
    ({"facts": [{"match": "probes.*.x", "category": "other"}]}, "one probe name"),
    ({"facts": [{"match": ["probes.env.x", "probes.gpu.x"], "category": "other"}]}, "one probe"),
])
def test_malformed_tables(document: dict[str, Any], message: str) -> None:
    with pytest.raises(RuleCatalogError, match=message):
        parse_facts(document)


@pytest.mark.parametrize("path", ["probes.env.data.vars.HOME", 'sysfs["0000:17:00.0"].acs_ctl', "a[3].b",
                                  'files["torch:torch/lib/libc10.so"].sha256', 'x["quote \\" inside"]'])
def test_parse_path_inverts_format_path(path: str) -> None:
    assert format_path(parse_path(path)) == path


@pytest.mark.parametrize("path", ["", "a..b", "a[", 'a["x"', "a b"])
def test_parse_path_rejects_what_format_path_never_writes(path: str) -> None:
    with pytest.raises(ValueError):
        parse_path(path)
