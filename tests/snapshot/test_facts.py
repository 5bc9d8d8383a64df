"""The facts table: one table of categories and classes (identity, setting, reading), and a diff that loads
no probe code."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from driftcheck.errors import RuleCatalogError
from driftcheck.hosts import ReplayHost
from driftcheck.probes import PROBE_CLASSES, ProbeOptions, builtin_probes
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
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
            or cls.name in ("gpu", "process", "bench", "server", "workdir")  # the benchmark's code: no category fits


@pytest.mark.parametrize(("path", "category", "fact_class"), [
    ("probes.env.data.vars.PWD", "env_var_other", "record"),
    ("probes.env.data.vars.HOME", "env_var_other", "setting"),
    ("probes.process.data.processes.sglang.environ.NCCL_DEBUG", "nccl_env", "setting"),
    ("probes.process.data.processes.sglang.environ.SHLVL", "env_var_other", "reading"),
    ("probes.process.data.processes.sglang.pid", "other", "reading"),
    ("probes.process.data.processes.sglang.cgroup.path", "container_limits", "reading"),
    ("probes.process.data.processes.sglang.mapped_libraries.libnccl", "package_binary", "setting"),
    ('probes.nccl.data.net["docker0"].mtu', "nccl_env", "reading"),
    ("probes.system.data.hugepages.sizes.2048kB.free", "thp_memory", "reading"),
    ("probes.system.data.hugepages.sizes.2048kB.total", "thp_memory", "setting"),
    ("probes.system.data.numa.nodes.0.memory_total_kib", "numa", "reading"),
    ("probes.system.data.numa.nodes.0.cpus", "numa", "setting"),
    ("probes.system.data.uptime_s", "kernel_os", "reading"),
    ("probes.gpu.data.gpus.GPU-1.clocks", "gpu_clock_power", "setting"),
    ("probes.gpu.data.gpus.GPU-1.clocks.sm_mhz", "gpu_clock_power", "reading"),
    ("probes.gpu.data.gpus.GPU-1.serial", "hardware_change", "identity"),
    ("probes.gpu.data.gpus.GPU-1.power.limit_w", "gpu_clock_power", "setting"),
    ("probes.pcie.data.gpus.GPU-1.link.gen_current", "pcie_link", "reading"),
    ("probes.pcie.data.gpus.GPU-1.link.width_current", "pcie_link", "setting"),
    ("probes.kernels.data.hash_cache.hits", "package_binary", "record"),
    ("probes.newprobe.data.x", "other", "setting"),
    ("host.name", "other", "record"),
    ("label", "other", "record"),
    ("probes.torch.data.deep", "package_version", "record"),
])
def test_paths_of_other_probes(path: str, category: str, fact_class: str) -> None:
    table = fact_table()
    parts = parse_path(path)
    assert (table.category(parts), table.fact_class(parts)) == (category, fact_class)
    assert table.reading(parts) == (fact_class == "reading")


def test_an_unclassed_key_counts_as_a_setting_but_is_seen_as_unclassed() -> None:
    parts = parse_path("probes.system.data.a_key_no_probe_writes_yet")
    assert fact_table().declared_class(parts) is None
    assert fact_table().fact_class(parts) == "setting"


@pytest.mark.parametrize(("path", "root"), [
    # One variable seen by env, the nccl probe and a server's environ: one root, written from the capture.
    ("probes.env.data.vars.NCCL_DEBUG", "var:NCCL_DEBUG"),
    ("probes.nccl.data.env.NCCL_DEBUG", "var:NCCL_DEBUG"),
    ("probes.process.data.processes.sglang.environ.NCCL_DEBUG", "var:NCCL_DEBUG"),
    ("probes.nccl.data.infiniband.mlx5_0.ports.1.counters.symbol_error", "ib-port:mlx5_0:1"),
    ('probes.kernels.data.files["torch:torch/lib/libc10.so"].sha256', "file:torch:torch/lib/libc10.so"),
    ("probes.packages.data.packages.torch.version", "package:torch"),
    # The first entry with a root wins: torch's NCCL is NCCL's, the rest of torch is torch.
    ("probes.torch.data.nccl_version", "library:NCCL"),
    ("probes.torch.data.cuda_wheels.nvidia-cublas-cu12.version", "package:nvidia-cublas-cu12"),
    ("probes.torch.data.version", "package:torch"),
    ("probes.system.data.cmdline.intel_iommu", "iommu"),
    ("probes.system.data.modules.nvidia_uvm.version", "driver"),
    ('probes.process.data.processes.sglang.mapped_libraries["/opt/aws/lib/libnccl-net.so"]',
     "nccl-net-plugin:sglang"),
    ('probes.process.data.processes.sglang.mapped_libraries["/usr/lib/libnccl.so.2"]', None),
    ("probes.system.data.cmdline.isolcpus", None),
    ("probes.torch.status", None),
    ("host.name", None),
])
def test_roots_come_from_the_table(path: str, root: str | None) -> None:
    assert fact_table().root(parse_path(path)) == root


def test_primacy_puts_the_installable_unit_first_then_what_a_person_chose() -> None:
    table = fact_table()
    levels = [table.primacy(parse_path(path)) for path in (
        "probes.packages.data.packages.torch.version", 'probes.packages.data.packages["zope.interface"]',
        "probes.gpu.data.driver_version", "probes.env.data.vars.NCCL_DEBUG",
        "probes.packages.data.packages.torch.build_id", "probes.system.data.modules.nvidia.version")]
    assert levels == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize(("document", "message"), [
    ({}, "`facts` list"),
    ({"facts": [{"match": "probes.env.**"}]}, "neither a category"),
    ({"facts": [{"match": "probes.env.data.vars.*", "root": "var:{var}"}]}, "does not capture"),
    ({"facts": [{"match": ["probes.env.data.vars.<var>", "probes.env.data.x"], "root": "var:{var}"}]},
     "probes.env.data.x does not capture"),
    ({"facts": [{"match": "probes.env.data.vars.<var>", "root": ":{var}"}]}, "starts with its kind"),
    ({"facts": [{"match": "probes.env.**", "primacy": "first"}]}, "unknown primacy"),
    ({"facts": [{"match": "probes.env.**", "class": "weather"}]}, "unknown class"),
    ({"facts": [{"match": "probes.env.**", "volatile": True}]}, "now `class: reading`"),
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


# ---- every leaf the probes write has a class -----------------------------------------------------------

DATA = Path(__file__).resolve().parent.parent / "data"


def _leaves(value: Any, prefix: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Every leaf path under `value`; an empty mapping holds no fact, a list is one value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*prefix, key))
    else:
        yield prefix


def _document_leaves(document: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    for key in ("host", "label", "tool", "origin"):
        if key in document:
            yield from _leaves(document[key], (key,))
    for name, outcome in (document.get("probes") or {}).items():
        yield from _leaves(outcome.get("data") or {}, ("probes", name, "data"))


def _replayed(recording: Path) -> dict[str, Any]:
    """A snapshot of a recorded host by every built-in probe, with the options it was recorded with."""
    host = ReplayHost(recording)
    manifest = json.loads((recording / "host.json").read_text("utf-8"))
    options = ProbeOptions.from_json(manifest.get("options") or {})
    return Prober(host, Redactor(b"leaf-walk"), options=options).snapshot(
        builtin_probes(Redactor(b"leaf-walk"))).document


def _stored_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted([*DATA.glob("pairs/*/*.json"), *DATA.glob("incidents/*/*.json"), *DATA.glob("null/*/*.json")]):
        document = json.loads(path.read_text("utf-8"))
        if isinstance(document, dict) and isinstance(document.get("probes"), dict):
            yield str(path.relative_to(DATA)), document


RECORDINGS = sorted(p.parent for p in DATA.glob("hosts/*/host.json"))


def _unclassed(document: dict[str, Any]) -> list[str]:
    table = fact_table()
    return sorted({format_path(parts) for parts in _document_leaves(document) if table.declared_class(parts) is None})


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_every_leaf_of_a_recorded_host_has_a_class(recording: Path) -> None:
    document = _replayed(recording)
    assert sum(1 for _ in _document_leaves(document)) > 5
    assert _unclassed(document) == []


def test_every_leaf_of_the_stored_snapshots_has_a_class() -> None:
    documents = list(_stored_documents())
    assert len(documents) > 200
    # ~300,000 leaves, ~2,500 of them distinct: each distinct path is classified once, with where it was seen.
    first_seen: dict[tuple[Any, ...], str] = {}
    for where, document in documents:
        for parts in _document_leaves(document):
            first_seen.setdefault(parts, where)
    table = fact_table()
    unclassed = {format_path(parts): where for parts, where in first_seen.items()
                 if table.declared_class(parts) is None}
    assert unclassed == {}
