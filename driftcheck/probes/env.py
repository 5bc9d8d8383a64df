"""`env` probe: the process environment, with secrets replaced by keyed digests.

Besides every variable, the probe lists which variables belong to the families that move
performance (`groups`, the `env_families` of snapshot/catalog.yaml), so a reader sees at a glance
which CUDA, torch, OpenMP, NCCL, ... settings were in force. Groups are derived from `vars`, so a
diff reports each change once, under `vars`.
"""

from __future__ import annotations

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.redact import Redactor
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue


def performance_groups(names: list[str]) -> dict[str, list[str]]:
    """family → sorted names of the variables present in it (catalog `env_families`; empty ones left out)."""
    catalog = name_catalog()
    groups: dict[str, list[str]] = {}
    for name in sorted(names):
        group = catalog.env_family_of(name)
        if group is not None:
            groups.setdefault(group, []).append(name)
    return groups


class EnvProbe(Probe):
    """Built with the user's redactor: an unredacted environment never leaves `gather`."""

    name = "env"
    description = "process environment (credentials replaced by keyed digests)"
    timeout_s = 5.0
    needs_redactor = True

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def gather(self, host: Host, options: ProbeOptions) -> dict[str, str]:
        environ = host.environ()
        # Redact at gather time: the raw material itself may be recorded to disk or cross a process.
        return self.redactor.environ(environ)

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict):
            raise ValueError("environment is not a mapping")
        variables = {str(k): str(v) for k, v in sorted(raw.items())}
        return {"vars": variables, "groups": performance_groups(list(variables))}
