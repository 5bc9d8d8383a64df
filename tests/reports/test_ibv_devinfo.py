"""`ibv_devinfo` pastes (plain and `-v`, spaces and tabs): each device's firmware and its ports' state and link
layer, spelled as the `nccl` probe reads them from sysfs (`ACTIVE`); GUIDs, MTUs and `-v` capabilities stay raw.
Values read off the files by hand. Every one of these pastes ends inside a device, as users paste a few of many.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.ibv_devinfo import INFINIBAND, parse
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA

IB = DATA / "reports" / "ib"
ROCE = {"state": "ACTIVE", "link_layer": "Ethernet"}
IB_PORT = {"state": "ACTIVE", "link_layer": "InfiniBand"}

# Every device of each file: its firmware (None where the paste ends before it) and its ports read whole.
EXPECTED = {
    "devinfo_azure_two_cut.txt": {"rdmaP23800p0s2": ("14.25.8102", {"1": ROCE}), "ibP57247p0s2": ("16.26.0206", {})},
    "devinfo_deepep_roce_cut.txt": {"mlx5_6": ("16.32.1010", {"1": ROCE}), "mlx5_7": ("28.39.2048", {})},
    "devinfo_mid_port_h100_roce.txt": {"mlx5_2": ("28.42.1000", {"1": ROCE}), "mlx5_3": ("16.35.4030", {})},
    "devinfo_mid_port_ib.txt": {"mlx5_3": ("28.37.1700", {"1": IB_PORT}), "mlx5_4": (None, {})},
    "devinfo_verbose_ucxpy_2019.txt": {"mlx5_0": ("16.23.1000", {})},
    "devinfo_verbose_tabs_2018.txt": {"mlx5_1": ("16.23.1020", {})},
    "devinfo_verbose_mid_port_ucx.txt": {"mlx5_2": ("28.39.2048", {})},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_paste_gives_its_devices_firmware_and_ports(name: str) -> None:
    text = (IB / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "ibv-devinfo"
    parsed = parse(text)
    adapters = parsed.probes["nccl"]["infiniband"]
    assert list(adapters) == list(EXPECTED[name])
    for hca, (firmware, ports) in EXPECTED[name].items():
        assert adapters[hca].get("fw_ver") == firmware
        assert adapters[hca]["ports"] == ports
    # Each ends inside a device (before its ports, or inside them): cut, and never claimed whole.
    assert parsed.cut == [INFINIBAND] and parsed.complete == []


def test_guids_mtus_and_a_masked_or_cut_value_stay_raw() -> None:
    parsed = parse((IB / "devinfo_azure_two_cut.txt").read_text("utf-8"))
    assert parsed.fields["rdmaP23800p0s2 node_guid"] == "000d:3aff:feac:5a53"
    assert parsed.fields["rdmaP23800p0s2 port 1 active_mtu"] == "1024 (3)"
    assert parsed.fields["ibP57247p0s2 board_id"] == ""  # the paste stops after the key
    assert parsed.noise == ["[jijos@hbv2vm2 ~]$ ibv_devinfo"]


def test_a_paste_starting_inside_a_port_keeps_those_lines_as_no_devices() -> None:
    parsed = parse((IB / "devinfo_verbose_mid_port_ucx.txt").read_text("utf-8"))
    # `phys_state: DISABLED (3)` belongs to a device the paste does not name: never given to mlx5_2.
    assert any("DISABLED (3)" in line for line in parsed.unclaimed)
    assert parsed.probes["nccl"]["infiniband"]["mlx5_2"]["ports"] == {}


def test_verbose_capability_lists_fold_into_their_field_with_tabs_or_spaces() -> None:
    spaces = parse((IB / "devinfo_verbose_ucxpy_2019.txt").read_text("utf-8"))
    assert spaces.fields["mlx5_0 device_cap_flags"].split() == [
        "0xe97e1c36", "BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "AUTO_PATH_MIG", "CHANGE_PHY_PORT", "PORT_ACTIVE_EVENT",
        "SYS_IMAGE_GUID", "RC_RNR_NAK_GEN", "MEM_WINDOW", "UD_IP_CSUM"]
    assert spaces.unclaimed == ["# source: https://github.com/rapidsai/ucx-py/issues/361"]
    tabs = parse((IB / "devinfo_verbose_tabs_2018.txt").read_text("utf-8"))
    assert tabs.fields["mlx5_1 device_cap_flags"].startswith("0xe5721c36 BAD_PKEY_CNTR")
    assert tabs.fields["mlx5_1 max_qp"] == "262144"


def test_imported_the_ports_read_as_ibstat_reads_them_and_the_list_is_marked_cut() -> None:
    """Two real pastes, two tools: a RoCE port active in each is spelled the same way in the snapshot."""
    devinfo, ibstat = IB / "devinfo_deepep_roce_cut.txt", IB / "ibstat_roce_2022.txt"
    a, b = (import_texts([(str(p), p.name, p.read_text("utf-8"))]).document for p in (devinfo, ibstat))
    port_a = a["probes"]["nccl"]["data"]["infiniband"]["mlx5_6"]["ports"]["1"]
    port_b = b["probes"]["nccl"]["data"]["infiniband"]["mlx5_0"]["ports"]["1"]
    assert {k: port_b[k] for k in port_a} == port_a == ROCE
    assert a["host"]["cut"] == [INFINIBAND] and a["host"]["sources"][0]["format"] == "ibv_devinfo"
