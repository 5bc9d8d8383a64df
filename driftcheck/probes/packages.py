"""`packages` probe: every distribution the target interpreter can import, with a build identity.

A version string proves nothing about the compiled code behind it: two installs of flashinfer 0.6.4
from different wheels (another CUDA build, a local rebuild) share the version but not the binaries.
The build identity is a digest over the RECORD hashes of a distribution's compiled files, so such a
swap shows without hashing gigabytes; `kernels` checks the files themselves against those hashes.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions


def normalize_name(name: str) -> str:
    """A distribution name as PEP 503 compares them: lowercase, runs of `-_.` as one `-`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def build_id(compiled: list[list[Any]] | None) -> str | None:
    """Digest over (relative path, RECORD hash) of the compiled files; None when there are none to digest."""
    if not compiled:
        return None
    lines = sorted(f"{row[0]}\t{row[1] or ''}" for row in compiled)
    return "sha256:" + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def _editable(dist: dict[str, Any]) -> bool:
    direct_url = dist.get("direct_url")
    if isinstance(direct_url, dict) and isinstance(direct_url.get("dir_info"), dict):
        return bool(direct_url["dir_info"].get("editable", False))
    # A legacy `setup.py develop` install: its egg-info sits in the project, not in a site directory.
    location = str(dist.get("location") or "")
    return dist.get("format") == "egg-info" and not location.rstrip("/").endswith(("site-packages", "dist-packages"))


def package_entry(dist: dict[str, Any]) -> dict[str, Any]:
    """The data of one distribution as the snapshot keeps it."""
    compiled = dist.get("compiled")
    return {
        "name": dist.get("name"),
        "version": dist.get("version"),
        "location": dist.get("location"),
        "installer": dist.get("installer"),
        "editable": _editable(dist),
        "direct_url": dist.get("direct_url"),
        "wheel_tags": list(dist.get("wheel_tags") or []),
        "build_id": build_id(compiled),
        "compiled_files": None if compiled is None else len(compiled),
    }


def _conda(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    return {str(p["name"]): {"version": p.get("version"), "build": p.get("build"), "channel": p.get("channel")}
            for p in sorted(raw.get("packages") or [], key=lambda p: str(p.get("name")))}


class PackagesProbe(Probe):
    name = "packages"
    description = "distributions of the target interpreter: version, installer, origin, wheel tags, build id"
    timeout_s = 30.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        return host.python("dist_facts", ["packages"])

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or not isinstance(raw.get("distributions"), list):
            raise ValueError("dist_facts printed no distribution list")
        packages: dict[str, dict[str, Any]] = {}
        seen: dict[str, list[dict[str, Any]]] = {}
        for dist in raw["distributions"]:
            if not dist.get("name"):
                continue
            key = normalize_name(str(dist["name"]))
            seen.setdefault(key, []).append({"version": dist.get("version"), "location": dist.get("location"),
                                             "metadata_dir": dist.get("metadata_dir")})
            # sys.path order is import order: the first distribution of a name is the one that loads.
            packages.setdefault(key, package_entry(dist))
        duplicates = {name: found for name, found in sorted(seen.items()) if len(found) > 1}
        return {
            "interpreter": raw.get("interpreter"),
            "packages": dict(sorted(packages.items())),
            "duplicates": duplicates,
            "conda": _conda(raw.get("conda")),
        }
