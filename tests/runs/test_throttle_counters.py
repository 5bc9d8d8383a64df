"""A whole recorded run whose GPU the driver counted as power-capped for 41 % of the time: `runs` says so.

NVML is the fake of tests/nvidia (no GPU here). Its power-cap counter starts at the value a real power-capped
RTX 3090 had accumulated (tests/data/nvidia/xml/rtx-3090_590.44.01_v13.xml, 9840338777 us) and grows by
0.41 s per second of the run (made up: no public recording of the counter during a run exists), while the
instantaneous reason flags are never caught set, as happens when the cap bites between 1 s samples.
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

    def _power_cap_ns(self) -> int:
        return RTX_3090_POWER_CAP_NS + int((time.monotonic() - self.start) * 0.41 * 1e9)

    def nvmlDeviceGetFieldValues(self, h: int, field_ids: list[int]) -> list[SimpleNamespace]:
        if h == 0:
            self.gpus[0]["fields"] = {74: self._power_cap_ns(), 76: 0, 269: 0, 270: 0, 271: 0}
        return super().nvmlDeviceGetFieldValues(h, field_ids)


def test_a_power_capped_run_reports_its_throttled_share(cli: Callable[..., CliResult]) -> None:
    plan = RunPlan(argv=[sys.executable, "-c", "import time; time.sleep(2.5)"], probes=["env"], interval_s=0.25,
                   nvml=PowerCappedNvml())
    outcome = record_run(plan)
    assert outcome.record.exit_code == 0
    (record,) = RunStore().entries()
    (condition,) = record.conditions
    assert (condition["label"], condition["kind"], condition["measured"]) == ("GPU 0", "power_cap", "counters")
    assert 0.40 <= condition["fraction"] <= 0.42
    assert "! GPU 0 spent 41% of the run at its power cap" in cli("runs").stdout
    assert "counted by the driver" in cli("runs").stdout
