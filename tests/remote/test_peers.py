"""The peer report over replayed GPU machines (a real recorded `nvidia-smi -q -x`, one field edited per host)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

from driftcheck.analysis.peers import peer_report
from driftcheck.analysis.peers_render import render_markdown, render_text
from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.nvidia.gather import SMI_TOPO_ARGV, SMI_XML_ARGV
from driftcheck.probes.gpu import GpuProbe
from driftcheck.probes.packages import PackagesProbe, normalize_name
from driftcheck.probes.pcie import PcieProbe
from driftcheck.probes.prober import Prober
from driftcheck.probes.redact import Redactor
from driftcheck.remote.targets import expand, fleet_hosts
from driftcheck.snapshot.model import Snapshot
from tests.nvidia.helpers import make_replay, nvidia_text

XML = "xml/rtx-2070-x2_590.44.01_v13.xml"
TOPO = "topo/h100-nvl-x2_550.127.05_nv12_nic1_sglang-2874.txt"


def _node(root: Path, name: str, edit: tuple[str, str, int] | None = None) -> Snapshot:
    """A machine with the recorded two-GPU XML, its own GPU UUIDs, and `edit` (old, new, which occurrence)."""
    xml = nvidia_text(XML).replace("GPU-12345678-aaaa", f"GPU-12345678-{name[-4:]}")
    if edit:
        old, new, occurrence = edit
        parts = xml.split(old)
        xml = old.join(parts[:occurrence + 1]) + new + old.join(parts[occurrence + 1:])
    replay = make_replay(root / name, {SMI_XML_ARGV: {"stdout": xml}, SMI_TOPO_ARGV: {"stdout": nvidia_text(TOPO)}},
                         dirs={"/sys/bus/pci/devices": []})
    return Prober(ReplayHost(replay), Redactor(b"k")).snapshot([GpuProbe(), PcieProbe()])


def test_the_narrow_link_and_the_persistence_mode_are_named_gpus_matched_by_index(tmp_path: Path) -> None:
    fleet = {
        "node-0001": _node(tmp_path, "node-0001"),
        "node-0002": _node(tmp_path, "node-0002", ("<current_link_width>8x<", "<current_link_width>4x<", 1)),
        "node-0003": _node(tmp_path, "node-0003", ("<persistence_mode>Enabled<", "<persistence_mode>Disabled<", 0)),
        "node-0004": _node(tmp_path, "node-0004"),
    }
    report = peer_report(fleet)
    by_path = {f.path: f for f in report.findings}
    link = by_path['probes.pcie.data.gpus["GPU 1"].link.width_current']
    assert (link.reference, link.holders, link.category) == (8, 3, "pcie_link")
    assert [(o.host, o.value) for o in link.outliers] == [("node-0002", 4)]
    persistence = by_path['probes.gpu.data.gpus["GPU 0"].persistence_mode']
    assert persistence.reference is True
    assert [(o.host, o.value) for o in persistence.outliers] == [("node-0003", False)]
    assert persistence.category == "mig_ecc_persistence"
    # Board identities differ between any two machines: never a finding.
    assert not [f for f in report.findings if "uuid" in f.path or "GPU-12345678" in f.path]
    assert report.outlier_hosts() == ["node-0002", "node-0003"]
    text = render_text(report)
    assert 'node-0002: pcie.gpus["GPU 1"].link.width_current = 4 (3 of 4 hosts: 8)' in text
    assert "| node-0003 |" in render_markdown(report)


def test_a_uniform_fleet_has_no_findings(tmp_path: Path) -> None:
    report = peer_report({name: _node(tmp_path, name) for name in ("node-0001", "node-0002", "node-0003")})
    assert report.uniform and report.findings == []


def test_against_a_reference_every_differing_host_is_an_outlier(tmp_path: Path) -> None:
    reference = _node(tmp_path, "gold-0000", ("<current_link_width>8x<", "<current_link_width>16x<", 0))
    report = peer_report({n: _node(tmp_path, n) for n in ("node-0001", "node-0002")}, reference, "baseline:gold")
    link = next(f for f in report.findings if f.path.endswith('gpus["GPU 0"].link.width_current'))
    assert link.reference == 16 and sorted(o.host for o in link.outliers) == ["node-0001", "node-0002"]
    assert "baseline:gold: 16" in render_text(report)


def test_hostlist_expressions_and_hosts_files(tmp_path: Path) -> None:
    assert expand("gpu[01-03]") == ["gpu01", "gpu02", "gpu03"]
    assert expand("root@gpu[1,3]:2222") == ["root@gpu1:2222", "root@gpu3:2222"]
    hosts = tmp_path / "hosts"
    hosts.write_text("gpu[02-03]  # the second rack\n\ngpu04,gpu05\n")
    assert fleet_hosts(["gpu[01-02]"], hosts) == ["gpu01", "gpu02", "gpu03", "gpu04", "gpu05"]


def test_a_package_that_decides_speed_ranks_above_one_that_does_not(tmp_path: Path) -> None:
    # This test interpreter's real package list, with one version moved on two different hosts.
    taken = Prober(LocalHost(sys.executable), Redactor(b"k")).snapshot([PackagesProbe()])
    assert taken.document["probes"]["packages"]["status"] == "ok"
    packages = taken.document["probes"]["packages"]["data"]["packages"]
    assert "torch" in packages and "markupsafe" in {normalize_name(n) for n in packages}
    markupsafe = next(n for n in packages if normalize_name(n) == "markupsafe")

    def moved(name: str, version: str) -> Snapshot:
        document = copy.deepcopy(taken.document)
        document["probes"]["packages"]["data"]["packages"][name]["version"] = version
        return Snapshot(document, name)

    fleet = {"node-01": taken, "node-02": taken, "node-03": moved("torch", "2.12.1"),
             "node-04": moved(markupsafe, "2.1.5"), "node-05": taken}
    report = peer_report(fleet)
    assert [f.outliers[0].host for f in report.findings[:2]] == ["node-03", "node-04"]
    torch = report.findings[0]
    assert torch.path == "probes.packages.data.packages.torch.version"
    assert torch.reference == packages["torch"]["version"] and torch.holders == 4
    assert torch.outliers[0].fix and "torch==" in torch.outliers[0].fix
    assert torch.relevance == 1 and report.findings[1].relevance == 0


def _env_node(name: str, variables: dict[str, str]) -> Snapshot:
    from driftcheck.snapshot.model import new_document

    document = new_document({"name": name}, {"env": {"status": "ok", "data": {"vars": variables, "groups": {}},
                                                     "error": None, "duration_s": 0.0}})
    return Snapshot(document, name)


def test_differences_of_no_known_effect_fold_into_one_line_unless_all() -> None:
    base = {"OMP_NUM_THREADS": "8", "HOME": "/root"}
    fleet = {f"node-000{i}": _env_node(f"node-000{i}", dict(base)) for i in range(1, 4)}
    odd = {**base, "OMP_NUM_THREADS": "1", **{f"MY_TOOL_SETTING_{i}": "x" for i in range(12)}}
    fleet["node-0004"] = _env_node("node-0004", odd)
    report = peer_report(fleet)
    folded, expanded = render_text(report), render_text(report, fold=False)
    assert "OMP_NUM_THREADS" in folded  # a known cause is never folded
    assert "12 more difference(s) of no known effect" in folded and "MY_TOOL_SETTING_7" not in folded
    assert "MY_TOOL_SETTING_7" in expanded
    assert len(folded.splitlines()) <= len(expanded.splitlines()) - 11


def test_a_fleet_of_no_snapshot_does_not_speak_of_one() -> None:
    from driftcheck.analysis.peers import PeerReport
    from driftcheck.analysis.peers_render import render_text

    text = render_text(PeerReport(hosts=[], reference="majority", failures={"gpu1": "cannot connect"}))
    assert text.splitlines()[:2] == ["fleet: 0 snapshots, 1 host failed; each host compared with the majority",
                                     "no snapshot: nothing to compare"]
