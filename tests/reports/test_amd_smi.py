"""`amd-smi` pastes (`list`, `static` before and after ROCm 7's IFWI section, `version`): GPUs under `GPU<n>` with
their name, bus id, UUID and VBIOS, the driver's version when it is one, the vendor named. Values read by hand.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.amd_smi import parse
from driftcheck.reports.importer import import_texts
from tests.conftest import DATA

AMD = DATA / "reports" / "amdsmi"

EXPECTED = {
    "static_mi350x_2025.txt": ("amd-smi static", "6.18.3", {"GPU0": {
        "index": 0, "name": "AMD Instinct MI350X", "pci_bus_id": "00000000:05:00.0", "vbios_version": "00154951"}}),
    # An inbox driver reports the kernel's release (`7.0.14-17-pve`) as its version: no driver version fact.
    "static_phoenix3_cut_2026.txt": ("amd-smi static", None, {"GPU0": {
        "index": 0, "name": "Phoenix3", "pci_bus_id": "00000000:65:00.0", "vbios_version": "022.012.000.029.000001"}}),
    "list_phoenix3_2026.txt": ("amd-smi list", None, {"GPU0": {
        "index": 0, "pci_bus_id": "00000000:65:00.0", "uuid": "00ff1900-0000-1000-8000-000000000000"}}),
    "version_rocm_6_4.txt": ("amd-smi version", None, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_paste_gives_its_gpus_and_driver_with_the_vendor_named(name: str) -> None:
    text = (AMD / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "amd-smi"
    parsed = parse(text)
    variant, driver, gpus = EXPECTED[name]
    gpu = parsed.probes["gpu"]
    assert parsed.variant == variant and gpu["vendor"] == "AMD" and gpu["source"] == "amd-smi"
    assert gpu.get("driver_version") == driver and gpu.get("gpus") == gpus
    # amd-smi prints no count and takes `-g`: never a GPU count, never the list claimed whole.
    assert "gpu_count" not in gpu and parsed.complete == []
    assert parsed.unclaimed == [text.splitlines()[0]]  # the `# source:` line this directory adds


def test_the_rest_stays_raw_masked_values_included() -> None:
    mi350 = parse((AMD / "static_mi350x_2025.txt").read_text("utf-8"))
    assert mi350.fields["GPU0 ASIC TARGET_GRAPHICS_VERSION"] == "gfx950"
    assert mi350.fields["GPU0 ASIC ASIC_SERIAL"] == "<redacted>" and "serial" not in mi350.probes["gpu"]["gpus"]["GPU0"]
    assert mi350.fields["GPU0 BUS MAX_PCIE_SPEED"] == "32 GT/s"
    phoenix = parse((AMD / "static_phoenix3_cut_2026.txt").read_text("utf-8"))
    assert phoenix.fields["GPU0 DRIVER VERSION"] == "7.0.14-17-pve"
    version = parse((AMD / "version_rocm_6_4.txt").read_text("utf-8"))
    assert version.fields["ROCm version"] == "6.4.0" and version.fields["AMDSMI Tool"] == "25.3.0+ede62f2"
    assert version.fields["amdgpu version"].startswith("Linuxversion6.8.0-79-generic")


def test_list_and_static_of_one_machine_merge_into_one_gpu() -> None:
    """The two outputs one issue (Meliox/PVE-mods#348) pasted: one GPU, its UUID from list, its name from static."""
    files = [AMD / "list_phoenix3_2026.txt", AMD / "static_phoenix3_cut_2026.txt"]
    document = import_texts([(str(p), p.name, p.read_text("utf-8")) for p in files]).document
    assert document["probes"]["gpu"]["data"]["gpus"] == {"GPU0": {
        "index": 0, "pci_bus_id": "00000000:65:00.0", "uuid": "00ff1900-0000-1000-8000-000000000000",
        "name": "Phoenix3", "vbios_version": "022.012.000.029.000001"}}
    assert "conflicts" not in document["host"]
