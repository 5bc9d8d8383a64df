"""`packages` probe: every distribution the target interpreter can import, with a build identity.

A version string proves nothing about the compiled code behind it: two installs of flashinfer 0.6.4
from different wheels (another CUDA build, a local rebuild) share the version but not the binaries.
The build identity is a digest over the RECORD hashes of a distribution's compiled files, so such a
swap shows without hashing gigabytes; `kernels` checks the files themselves against those hashes.
"""

from __future__ import annotations

import hashlib
import re

from driftcheck.hosts import Host, ScriptCall
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, value_at


def normalize_name(name: str) -> str:
    """A distribution name as PEP 503 compares them: lowercase, runs of `-_.` as one `-`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def build_id(compiled: JSONValue) -> str | None:
    """Digest over (relative path, RECORD hash) of the compiled files (rows of the two); None when there are
    none to digest."""
    rows = [row for row in list_or_empty(compiled) if isinstance(row, list)]
    if not rows:
        return None
    lines = sorted(f"{row[0]}\t{row[1] or ''}" for row in rows)
    return "sha256:" + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _editable(dist: JSONObject) -> bool:
    dir_info = value_at(dist, "direct_url", "dir_info")
    if isinstance(dir_info, dict):
        return bool(dir_info.get("editable", False))
    # A legacy `setup.py develop` install: its egg-info sits in the project, not in a site directory.
    location = str(dist.get("location") or "")
    return dist.get("format") == "egg-info" and not location.rstrip("/").endswith(("site-packages", "dist-packages"))


def package_entry(dist: JSONObject) -> JSONObject:
    """The data of one distribution as the snapshot keeps it."""
    compiled = dist.get("compiled")
    return {
        "name": dist.get("name"),
        "version": dist.get("version"),
        "location": dist.get("location"),
        "installer": dist.get("installer"),
        "editable": _editable(dist),
        "direct_url": dist.get("direct_url"),
        "wheel_tags": list(list_or_empty(dist.get("wheel_tags"))),
        "build_id": build_id(compiled),
        "compiled_files": len(compiled) if isinstance(compiled, list) else None,
    }


def _conda(raw: JSONValue) -> JSONObject | None:
    if not isinstance(raw, dict):
        return None
    listed = [p for p in list_or_empty(raw.get("packages")) if isinstance(p, dict)]
    return {str(p["name"]): {"version": p.get("version"), "build": p.get("build"), "channel": p.get("channel")}
            for p in sorted(listed, key=lambda p: str(p.get("name")))}

_DISTRIBUTIONS = ScriptCall("dist_facts", ("packages",))


class PackagesProbe(Probe):
    name = "packages"
    description = "distributions of the target interpreter: version, installer, origin, wheel tags, build id"
    timeout_s = 30.0

    def interpreter_calls(self, host: Host, options: ProbeOptions) -> list[ScriptCall]:
        return [_DISTRIBUTIONS]

    def gather(self, host: Host, options: ProbeOptions) -> JSONValue:
        return host.python(_DISTRIBUTIONS.script_name, _DISTRIBUTIONS.args, _DISTRIBUTIONS.timeout_s)

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict) or not isinstance(distributions := raw.get("distributions"), list):
            raise ValueError("dist_facts printed no distribution list")
        packages: JSONObject = {}
        seen: dict[str, list[JSONObject]] = {}
        for dist in distributions:
            if not isinstance(dist, dict) or not dist.get("name"):
                continue
            key = normalize_name(str(dist["name"]))
            seen.setdefault(key, []).append({"version": dist.get("version"), "location": dist.get("location"),
                                             "metadata_dir": dist.get("metadata_dir")})
            # sys.path order is import order: the first distribution of a name is the one that loads.
            packages.setdefault(key, package_entry(dist))
        duplicates: JSONObject = {name: found for name, found in sorted(seen.items()) if len(found) > 1}
        return {
            "interpreter": raw.get("interpreter"),
            "packages": dict(sorted(packages.items())),
            "duplicates": duplicates,
            "conda": _conda(raw.get("conda")),
        }
