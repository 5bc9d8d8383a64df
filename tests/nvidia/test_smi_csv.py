"""Every recorded `nvidia-smi --query-gpu ... --format=csv` output: parsed to checked values, or refused."""

from __future__ import annotations

import pytest

from driftcheck.nvidia import NvidiaFormatError, parse_query_csv, parse_smi_text
from tests.nvidia.helpers import NVIDIA_DATA, nvidia_text

# file, driver, GPUs, model, SM MHz, power draw W, power limit W, link gen/width, memory total MiB, reasons
CSV_CASES = [
    ("query-gpu_h100-80gb-hbm3_590.48.01_load.csv", "590.48.01", 1, "NVIDIA H100 80GB HBM3", 1980, 625.68, 700.0,
     5, 16, 81559, []),
    ("query-gpu_h200_590.48.01_idle.csv", "590.48.01", 1, "NVIDIA H200", 345, 78.21, 700.0, 5, 16, 143771, ["idle"]),
    ("query-gpu_l40s_595.80_idle.csv", "595.80", 1, "NVIDIA L40S", 2520, 127.67, 350.0, 4, 16, 46068, []),
    ("query-gpu_tesla-p100-pcie-16gb.csv", None, 1, "Tesla P100-PCIE-16GB", 405, 28.16, None, None, None, None, None),
]
SAMPLING_LOGS = ["query-gpu_power-draw-samples_pkb.csv"]


def test_every_recorded_csv_has_a_case() -> None:
    names = sorted(p.name for p in (NVIDIA_DATA / "text").glob("*.csv"))
    assert names == sorted([c[0] for c in CSV_CASES] + SAMPLING_LOGS)


@pytest.mark.parametrize(("name", "driver", "count", "model", "sm_mhz", "draw_w", "limit_w", "gen", "width",
                          "total_mib", "reasons"), CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_csv_values(name: str, driver: str | None, count: int, model: str, sm_mhz: int, draw_w: float,
                    limit_w: float | None, gen: int | None, width: int | None, total_mib: int | None,
                    reasons: list[str] | None) -> None:
    parsed = parse_query_csv(nvidia_text(f"text/{name}"))
    gpu = parsed["gpu"]
    assert (gpu["source"], gpu["driver_version"], gpu["gpu_count"], len(gpu["gpus"])) == ("nvidia-smi-csv", driver,
                                                                                          count, count)
    key, record = next(iter(gpu["gpus"].items()))
    assert key.startswith("GPU-") and record["name"] == model
    assert (record["clocks"]["sm_mhz"], record["power"]["draw_w"], record["power"]["limit_w"]) == (sm_mhz, draw_w,
                                                                                                    limit_w)
    assert parsed["pcie"]["gpus"][key]["link"]["gen_current"] == gen
    assert parsed["pcie"]["gpus"][key]["link"]["width_current"] == width
    assert record["memory"]["total_mib"] == total_mib
    assert record["clock_event_reasons"] == reasons


def test_csv_and_text_of_the_same_idle_h200_agree_on_stable_facts() -> None:
    csv_gpu = next(iter(parse_query_csv(nvidia_text("text/query-gpu_h200_590.48.01_idle.csv"))["gpu"]["gpus"].values()))
    text_gpu = next(iter(parse_smi_text(nvidia_text("text/q_h200_590.48.01_idle.txt"))["gpu"]["gpus"].values()))
    for field in ("name", "uuid", "pci_bus_id", "vbios_version", "persistence_mode", "max_clocks", "ecc",
                  "clock_event_reasons"):
        assert csv_gpu[field] == text_gpu[field], field
    assert {k: csv_gpu["power"][k] for k in ("limit_w", "default_limit_w", "min_limit_w", "max_limit_w")} == {
        k: text_gpu["power"][k] for k in ("limit_w", "default_limit_w", "min_limit_w", "max_limit_w")}


def test_sampling_log_is_refused() -> None:
    with pytest.raises(NvidiaFormatError, match="sampling log"):
        parse_query_csv(nvidia_text("text/query-gpu_power-draw-samples_pkb.csv"))


def test_ragged_rows_are_refused() -> None:
    with pytest.raises(NvidiaFormatError, match="cells"):
        parse_query_csv("name, uuid, power.draw [W]\nNVIDIA H200, GPU-1\n")
