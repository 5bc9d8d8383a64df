"""A whole recorded run whose GPU the driver counted as power-capped for 41 % of the time: `runs` says so.

NVML is the fake of tests/nvidia (no GPU here). Its power-cap counter starts at the value a real power-capped
RTX 3090 had accumulated (tests/data/nvidia/xml/rtx-3090_590.44.01_v13.xml, 9840338777 us) and grows by
0.41 s per second of the run (made up: no public recording of the counter during a run exists), while the
instantaneous reason flags are never caught set, as happens when the cap bites between 1 s samples.

The share is the counter's growth over the time between the first and the last sample, both as the run saw
them; on a loaded machine the fake's reads and the sampler's clock drift apart by milliseconds, so the test
asserts the arithmetic (the fake notes what it handed out) and the text of the share the run computed, never a
share fixed in advance.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import SimpleNamespace

from driftcheck.runs.session import RunPlan, record_run
from driftcheck.runs.store import RunStore
from tests.conftest import CliResult
from tests.nvidia.fake_pynvml import FakeNvml, dual_rtx_2070

RTX_3090_POWER_CAP_NS = 9840338777 * 1000


class PowerCappedNvml(FakeNvml):
    """GPU 0's power-cap counter grows by 0.41 s per second from the moment the fake is made."""

    def __init__(self) -> None:
        super().__init__(dual_rtx_2070())
        self.start = time.monotonic()

        self.handed_out: list[int] = []  # every power-cap reading given, in order

    def _power_cap_ns(self) -> int:
        self.handed_out.append(RTX_3090_POWER_CAP_NS + int((time.monotonic() - self.start) * 0.41 * 1e9))
        return self.handed_out[-1]

    def nvmlDeviceGetFieldValues(self, h: int, field_ids: list[int]) -> list[SimpleNamespace]:
        if h == 0:
            self.gpus[0]["fields"] = {74: self._power_cap_ns(), 76: 0, 269: 0, 270: 0, 271: 0}
        return super().nvmlDeviceGetFieldValues(h, field_ids)


def test_a_power_capped_run_reports_its_throttled_share(cli: Callable[..., CliResult]) -> None:
    nvml = PowerCappedNvml()
    plan = RunPlan(argv=[sys.executable, "-c", "import time; time.sleep(2.5)"], probes=["env"], interval_s=0.25,
                   nvml=nvml)
    outcome = record_run(plan)
    assert outcome.record.exit_code == 0
    (record,) = RunStore().entries()
    (condition,) = record.conditions
    assert (condition["label"], condition["kind"], condition["measured"]) == ("GPU 0", "power_cap", "counters")
    # The seconds capped are the counter's growth from the first reading to the last (microseconds, as NVML
    # counts them); the share is those seconds over the span the samples cover.
    (gpu,) = [g for g in record.telemetry["gpus"].values() if g["index"] == 0]
    growth = gpu["counter_s"]
    counted_s = round((nvml.handed_out[-1] // 1000 - nvml.handed_out[0] // 1000) / 1e6, 3)
    assert growth["seconds"]["sw_power_cap"] == counted_s > 0 and condition["seconds"] == round(counted_s, 1)
    assert condition["fraction"] == round(min(1.0, counted_s / growth["span_s"]), 3)
    listed = cli("runs").stdout
    share, seconds = f"{condition['fraction'] * 100:.0f}%", f"{condition['seconds']:g} s"
    assert f"! GPU 0 spent {share} of the run at its power cap ({seconds}, counted by the driver)" in listed, listed
