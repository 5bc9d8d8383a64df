"""`ibstat` pastes: each adapter's firmware and its ports' state, physical state and link layer, spelled as the
`nccl` probe reads them from sysfs (`ACTIVE`); rates and GUIDs stay raw. Values read off the files by hand.
"""

from __future__ import annotations

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.ibstat import parse
from tests.conftest import DATA

IB = DATA / "reports" / "ib"


def _parsed(name: str):  # type: ignore[no-untyped-def]
    text = (IB / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "ibstat"
    return parse(text)


def test_two_roce_adapters_with_their_ports() -> None:
    parsed = _parsed("ibstat_roce_2022.txt")
    adapters = parsed.probes["nccl"]["infiniband"]
    assert sorted(adapters) == ["mlx5_0", "mlx5_1"]
    for ca in adapters.values():
        assert ca["fw_ver"] == "22.32.2004"
        assert ca["ports"] == {"1": {"state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "Ethernet"}}
    # ibstat's rate has no unit or width, unlike sysfs's `100 Gb/sec (4X EDR)`: a raw field, not that fact.
    assert parsed.fields["mlx5_0 port 1 Rate"] == "100" and parsed.fields["mlx5_1 CA type"] == "MT4125"
    assert parsed.complete == [] and parsed.cut == []


def test_an_elided_list_keeps_its_ellipsis_and_never_claims_the_adapters_whole() -> None:
    parsed = _parsed("ibstat_elided_ib.txt")
    adapters = parsed.probes["nccl"]["infiniband"]
    assert list(adapters) == ["mlx5_5"] and adapters["mlx5_5"]["fw_ver"] == "28.41.1000"
    assert adapters["mlx5_5"]["ports"]["1"]["link_layer"] == "InfiniBand"
    assert parsed.unclaimed == ["..."] and parsed.complete == []


def test_masked_firmware_is_no_version_and_a_tool_error_is_kept() -> None:
    parsed = _parsed("ibstat_masked_panic.txt")
    adapter = parsed.probes["nccl"]["infiniband"]["mlx5_7"]
    assert "fw_ver" not in adapter and parsed.fields["mlx5_7 Firmware version"] == "..."
    assert adapter["ports"]["1"]["state"] == "ACTIVE"
    assert parsed.unclaimed[-1].startswith("ibpanic: [1323906] main: stat of IB device 'mlx5_8' failed")


def test_a_port_cut_before_its_link_layer_marks_the_list_cut() -> None:
    lines = (IB / "ibstat_roce_2022.txt").read_text("utf-8").splitlines()
    parsed = parse("\n".join(lines[:-3]))  # stops inside mlx5_1's port
    assert parsed.cut == ["probes.nccl.data.infiniband"]
    assert "link_layer" not in parsed.probes["nccl"]["infiniband"]["mlx5_1"]["ports"]["1"]
