"""`python` probe: the target interpreter (the one whose packages the benchmark imports)."""

from __future__ import annotations

from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions


class PythonProbe(Probe):
    name = "python"
    description = "target interpreter: path, version, implementation, venv/conda prefix, platform"
    timeout_s = 20.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return host.python("python_facts")

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or "version" not in raw:
            raise ValueError("python_facts printed no interpreter facts")
        data = {key: raw.get(key) for key in ("executable", "version", "implementation", "compiler", "prefix",
                                              "base_prefix", "virtualenv", "conda_env", "conda_prefix",
                                              "gil_enabled")}
        data["platform"] = dict(raw.get("platform") or {})
        data["sys_path"] = list(raw.get("sys_path") or [])
        return data
