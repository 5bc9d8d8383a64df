"""`python` probe: the target interpreter (the one whose packages the benchmark imports)."""

from __future__ import annotations

from driftcheck.hosts import Host, ScriptCall
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty

# The one question this probe asks of the target interpreter (the nccl probe asks it too, for sys.path).
FACTS = ScriptCall("python_facts")


class PythonProbe(Probe):
    name = "python"
    description = "target interpreter: path, version, implementation, venv/conda prefix, platform"
    timeout_s = 20.0

    def interpreter_calls(self, host: Host, options: ProbeOptions) -> list[ScriptCall]:
        return [FACTS]

    def gather(self, host: Host, options: ProbeOptions) -> JSONValue:
        return host.python(FACTS.script_name, FACTS.args, FACTS.timeout_s)

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict) or "version" not in raw:
            raise ValueError("python_facts printed no interpreter facts")
        data: JSONObject = {key: raw.get(key) for key in ("executable", "version", "implementation", "compiler",
                                                          "prefix", "base_prefix", "virtualenv", "conda_env",
                                                          "conda_prefix", "gil_enabled")}
        data["platform"] = dict(object_or_empty(raw.get("platform")))
        data["sys_path"] = list(list_or_empty(raw.get("sys_path")))
        return data
