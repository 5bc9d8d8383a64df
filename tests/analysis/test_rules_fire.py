"""Every rule fires on real input: each rule of rules.yaml must match a path the probes really write.

How a path counts as real (in this order):
1. every node of a snapshot taken, with the built-in probes, by replaying each recorded machine of
   tests/data/hosts (driftcheck.hosts.replay.ReplayHost);
2. every node the import formats write from the real tool outputs and reports of tests/data/nvidia and
   tests/data/reports (the GPU and topology facts: no recorded host has a GPU), and the server probe's
   description of the recorded SGLang / vLLM answers of tests/data/servers;
3. every node of the incident corpus (tests/data/incidents/*/a.json, b.json: built from those recordings);
4. for facts no recording holds (NVML-only GPU fields, a driver's kernel module, an InfiniBand port),
   `DOCUMENTED` below: one example path per fact, each with the line of docs/data-shapes.md that
   declares it, checked to be there.
The pairs of tests/data/pairs are synthetic edits of base.json (whose system facts predate the probe's
shapes), so they are never evidence of a shape.
A rule passes when one of its `match` patterns matches a real value (a leaf: a number, a string, a list,
null), or, for a rule of added or removed things only, a real node of any kind (a package, a GPU, a
process). A map is not a value: `affinity` never changes, `affinity.cpus` does. A fact the page declares
null from every source (`NEVER_FILLED`) is no value either. `when` conditions aside. The
`ignore: true` rules (volatile readings) are outside this test.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.rules import Rule, Suspect, default_catalog
from driftcheck.hosts import ReplayHost
from driftcheck.probes import ProbeOptions, builtin_probes, select_probes
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
from driftcheck.reports.importer import ImportFormatError, parse_text
from driftcheck.serving.engine import describe
from driftcheck.snapshot.paths import PathPart, parse_path

DATA = Path(__file__).resolve().parent.parent / "data"
ROOT = DATA.parent.parent
Parts = tuple[PathPart, ...]

# Facts no recording holds, each as (example path, the declaration in docs/data-shapes.md).
DOCUMENTED: tuple[tuple[str, str], ...] = (
    # vLLM's dev-mode /server_info read back to engine arguments (tests/analysis/test_server_engines.py)
    ("probes.server.data.server_args.enforce_eager",
     "server_args{<engine argument>: value} (dev mode's `/server_info?config_format=json`, its resolved"),
    ("probes.server.data.server_args.gpu_memory_utilization",
     "server_args{<engine argument>: value} (dev mode's `/server_info?config_format=json`, its resolved"),
    ("probes.server.data.server_args.optimization_level",
     "server_args{<engine argument>: value} (dev mode's `/server_info?config_format=json`, its resolved"),
    ("probes.server.data.server_args.async_scheduling",
     "server_args{<engine argument>: value} (dev mode's `/server_info?config_format=json`, its resolved"),
    ("probes.server.data.server_args.enable_prefix_caching",
     "server_args{<engine argument>: value} (dev mode's `/server_info?config_format=json`, its resolved"),
    ("probes.server.data.server_args.enable_chunked_prefill",
     "server_args{<engine argument>: value} (dev mode's `/server_info?config_format=json`, its resolved"),
    # a server's own environment, as the process probe reads /proc/<pid>/environ
    ("probes.process.data.processes.sglang.environ.CUDA_VISIBLE_DEVICES",
     "process: processes{<stable key>: {pid, name, started_ticks, cmdline[], environ{}, affinity, mems_allowed,"),
    # written by `driftcheck run` only (tests/probes/test_workdir.py runs it in a real git repository)
    ("probes.workdir.data.commit", "workdir: commit (`git rev-parse HEAD` of the directory `driftcheck run` ran in)"),
    ("probes.workdir.data.modified_files", "changed on top of it, `git status --porcelain --untracked-files=no`"),
    ("probes.gpu.data.gpus.GPU-0.nvlink.0.state", "nvlink{<link>: {state, version, remote_pci_bus_id}} | null"),
    ("probes.gpu.data.gpus.GPU-0.fabric.state", "fabric{state, status} | null"),
    ("probes.gpu.data.gpus.GPU-0.nvlink.0.errors.replay", "errors{replay, recovery, crc_flit, crc_data}"),
    ("probes.gpu.data.gpus.GPU-0.xid_since_boot.119", "xid_since_boot{<Xid code>: count} | null"),
    ("probes.system.data.nvidia_params.NvLinkDisable", "nvidia_params{<NVreg_ option name>: number | text} | null"),
    ('probes.pcie.data.p2p["GPU0~GPU1"].read', 'p2p{"GPU0~GPU1": {read, write, nvlink, atomics}} | null'),
    ('probes.pcie.data.sysfs["0000:19:00.0"].current_link_width',
     "sysfs{<bdf>: {current_link_speed, current_link_width, max_link_speed, max_link_width, acs_ctl}} | null"),
    ("probes.system.data.modules.nvidia.version", "modules{<name>: {version}} | null"),
    ("probes.system.data.modules.nvidia_peermem", "modules{<name>: {version}} | null"),
    ("probes.system.data.modules.nv_peer_mem", "modules{<name>: {version}} | null"),
    ("probes.nccl.data.infiniband.mlx5_0.ports.1.state",
     "infiniband{<device>: {fw_ver, ports{<n>: {state, phys_state, rate, link_layer,"),
    ("probes.nccl.data.infiniband.mlx5_0.ports.1.counters.symbol_error",
     "counters{<error counter>: count | null} | null}}}} | null,"),
    ("probes.packages.data.conda.numpy.version", "conda{<name>: {version, build, channel}} | null"),
    ("probes.packages.data.duplicates.torch", "duplicates{<name>: [{version, location,"),
    ("probes.gpu.data.gpus.GPU-0.mig.instances.1.profile",
     "mig{mode_current, mode_pending, instances{<gi id>: {profile, ...}}}"),
    ("probes.system.data.cpu.smt_active",
     "cpu{model, vendor, sockets, cores, threads, online, smt_active, smt_control}"),
    ("probes.torch.data.arch_list", "devices{<index>: {name, capability}}, arch_list[], backends{...}, config{...}"),
    ('probes.nccl.data.conf_files["/etc/nccl.conf"].NCCL_P2P_LEVEL',
     'conf_files{<"/etc/nccl.conf" | "~/.nccl.conf" | $NCCL_CONF_FILE>: {NAME: value}}'),
    ("probes.server.data.models.m.max_model_len", "models{<id>: {owned_by, root, parent, max_model_len}}"),
    ("probes.daemons.data.services.nvidia-persistenced",
     'services{<"nvidia-persistenced" | "nvidia-fabricmanager">: systemctl is-active state} | null'),
    ("probes.daemons.data.services.nvidia-fabricmanager",
     'services{<"nvidia-persistenced" | "nvidia-fabricmanager">: systemctl is-active state} | null'),
    ('probes.cpu.data.devfreq["17000000.gv11b"].governor', "devfreq{<device>: {governor}} | null"),
    ("probes.server.data.launch.flags.chunked_prefill_size",
     "launch{found, why, cmdline[] | null, flags{<argument>: value | true} | null, flags_by"),
    ('probes.server.data.vllm_config.cache_config_info["0"].enable_prefix_caching',
     'vllm_config{<gauge without "vllm:">: {<engine index>: {<label>: value}}}'),
)
# Facts a reader never fills, by their key, with the sentence of docs/data-shapes.md that says so.
NEVER_FILLED: tuple[tuple[str, str], ...] = (("locked_clocks", "`locked_clocks` is null from every source"),)


# A path, and whether it is a value (a leaf a reader can fill) rather than a map.
Nodes = dict[Parts, bool]


def _nodes(document: Any, prefix: Parts = ()) -> Nodes:
    out: Nodes = {}
    if isinstance(document, dict) and document:
        if prefix:
            out[prefix] = False
        for key, value in document.items():
            _merge(out, _nodes(value, (*prefix, key)))
    elif prefix:
        out[prefix] = prefix[-1] not in {key for key, _ in NEVER_FILLED}
    return out


def _merge(into: Nodes, more: Nodes) -> None:
    for parts, filled in more.items():
        into[parts] = into.get(parts, False) or filled


def _replayed() -> Nodes:
    out: Nodes = {}
    options = ProbeOptions(process_patterns=("nccl_server",))
    probes = [p for p in select_probes(builtin_probes(Redactor(b"k")), options=options) if p.name != "bench"]
    for folder in sorted((DATA / "hosts").iterdir()):
        if (folder / "host.json").exists():
            _merge(out, _nodes(Prober(ReplayHost(folder), Redactor(b"k"), options=options).snapshot(probes).document))
    return out


def _imported() -> Nodes:
    out: Nodes = {}
    for path in sorted([*(DATA / "nvidia").rglob("*"), *(DATA / "reports").glob("*.txt")]):
        if not path.is_file() or path.suffix not in (".txt", ".xml", ".csv"):
            continue
        try:
            parsed = parse_text(path.read_text("utf-8", errors="replace"), path.name)
        except ImportFormatError:
            continue
        for name, data in parsed.parsed.probes.items():
            _merge(out, _nodes(data, ("probes", name, "data")))
    for folder in sorted((DATA / "servers").iterdir()):
        replies = {path: {"status": 200, "body": (folder / name).read_text("utf-8"), "server": "uvicorn"}
                   for name, path in (("get_server_info.json", "/get_server_info"), ("get_model_info.json",
                                      "/get_model_info"), ("version.json", "/version"), ("metrics.txt", "/metrics"))
                   if (folder / name).exists()}
        if replies:
            _merge(out, _nodes(describe({"url": "http://127.0.0.1:30000", "replies": replies}),
                               ("probes", "server", "data")))
        # /server_info answers computed by a release's own code for one launch line each (sglang-0.5.23/SOURCE)
        for answer in sorted(folder.glob("*.json")):
            if answer.with_suffix(".argv").exists():
                reply = {"/server_info": {"status": 200, "body": answer.read_text("utf-8"), "server": "uvicorn"}}
                _merge(out, _nodes(describe({"url": "http://127.0.0.1:30000", "replies": reply}),
                                   ("probes", "server", "data")))
    return out


def _incidents() -> Nodes:
    out: Nodes = {}
    for path in sorted((DATA / "incidents").glob("*/[ab].json")):
        _merge(out, _nodes(json.loads(path.read_text("utf-8"))))
    return out


def _documented() -> Nodes:
    out: Nodes = {}
    for path, _ in DOCUMENTED:
        parts = parse_path(path)
        _merge(out, {parts[:end]: end == len(parts) for end in range(1, len(parts) + 1)})
    return out


@lru_cache(maxsize=1)
def real_paths() -> Nodes:
    """Every path a probe or import format really writes, as decided in the module docstring."""
    out: Nodes = {}
    for more in (_replayed(), _imported(), _incidents(), _documented()):
        _merge(out, more)
    return out


def fires(rule: Rule, paths: Nodes) -> bool:
    """Whether `rule` can claim a change of a snapshot holding `paths`."""
    nodes_count = "changed" not in rule.kinds
    return any((filled or nodes_count) and pattern.match(parts) is not None
               for parts, filled in paths.items() for pattern in rule.patterns)


def test_documented_shapes_are_in_the_data_shapes_page() -> None:
    page = (ROOT / "docs" / "data-shapes.md").read_text("utf-8")
    missing = [declaration for _, declaration in (*DOCUMENTED, *NEVER_FILLED) if declaration not in page]
    assert missing == []


@pytest.mark.parametrize("rule", [r for r in default_catalog().rules if not r.ignore], ids=lambda r: r.id)
def test_rule_matches_a_path_the_probes_write(rule: Rule) -> None:
    assert fires(rule, real_paths()), f"{rule.id}: no real snapshot has a path {[p.source for p in rule.patterns]}"


@pytest.mark.parametrize("suspect", default_catalog().suspects, ids=lambda s: s.title)
def test_every_suspect_pattern_matches_a_path_the_probes_write(suspect: Suspect) -> None:
    # "Checked and unchanged" over a pattern no probe writes would claim a fact was compared that never was.
    paths = real_paths()
    dead = [p.source for p in suspect.patterns if not any(p.match(parts) is not None for parts in paths)]
    assert dead == [], f"{suspect.title}: {dead}"
