"""How one distribution of a snapshot is required again, from where A had it, and the command that rebuilds
a whole snapshot's environment.

A direct URL install (PEP 610 `direct_url.json`, as the packages probe records it) is required as pip itself
spells it (`direct_url_as_pep440_direct_reference` of pip 23.2.1): `name @ git+URL@COMMIT`,
`name @ URL#sha256=...`, `name @ file:///dir`, with `#subdirectory=` where recorded; an editable one as
`-e URL`. A repository on this machine, which pip 23.2.1 takes only in the legacy
`git+file:///repo@COMMIT#egg=name` form, is spelled so. Pure; the plan (`restore_plan`) and the fixes of
explain both use it.
"""

from __future__ import annotations

import shlex
from urllib.parse import unquote, urlsplit

from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at
from driftcheck.snapshot.model import Snapshot

# Sources of a distribution, as the plan names them.
INDEX, VCS, DIRECTORY, ARCHIVE, UNPLANNABLE = "index", "vcs", "directory", "archive", "unplannable"


def file_path(url: str) -> str | None:
    """The local path of a `file://` URL; None for any other scheme."""
    parts = urlsplit(url)
    return unquote(parts.path) if parts.scheme == "file" else None


def direct_requirement(name: str, direct_url: JSONValue) -> tuple[str, str, bool] | None:
    """(source, requirement line, editable) of a PEP 610 `direct_url` record, spelled as pip spells it; None
    when the record names no URL."""
    record = object_or_empty(direct_url)
    url = record.get("url")
    if not isinstance(url, str) or not url:
        return None
    fragments: list[str] = []
    vcs_info, archive_info = record.get("vcs_info"), record.get("archive_info")
    if isinstance(vcs_info, dict):
        source, target = VCS, f"{vcs_info.get('vcs') or 'git'}+{url}@{vcs_info.get('commit_id')}"
    elif isinstance(archive_info, dict):
        source, target = ARCHIVE, url
        digest = _archive_hash(archive_info)
        if digest:
            fragments.append(digest)
    else:
        source, target = DIRECTORY, url
    subdirectory = record.get("subdirectory")
    if isinstance(subdirectory, str) and subdirectory:
        fragments.append(f"subdirectory={subdirectory}")
    editable = bool(value_at(record, "dir_info", "editable"))
    if source == VCS and not urlsplit(url).netloc:
        # A repository on this machine (git+file:///...): pip 23.2.1 refuses `name @ git+file:///...` (its
        # packaging wants a host in a URL of any scheme but file), while both pip and uv take the legacy form.
        fragments.append(f"egg={name}")
        return source, f"{target}#{'&'.join(fragments)}", False
    suffix = "#" + "&".join(fragments) if fragments else ""
    if editable:
        return source, f"-e {target}{suffix}", True
    return source, f"{name} @ {target}{suffix}", False


def _archive_hash(archive_info: JSONObject) -> str | None:
    """`sha256=<hex>` of an archive: its `hashes` (PEP 610's current field), else the legacy `hash`."""
    hashes = object_or_empty(archive_info.get("hashes"))
    for algorithm in ("sha256", "sha384", "sha512"):
        digest = hashes.get(algorithm)
        if isinstance(digest, str) and digest:
            return f"{algorithm}={digest}"
    legacy = archive_info.get("hash")
    return legacy if isinstance(legacy, str) and "=" in legacy else None


def snapshot_reference(snapshot: Snapshot) -> str:
    """How a command line names `snapshot`: the file it was read from, else its id (a stored snapshot)."""
    source = snapshot.source
    if source.startswith(("store:", "<")) or not source:
        return snapshot.short_id
    return shlex.quote(source)


def restore_command(snapshot: Snapshot) -> str:
    """The `driftcheck restore` command that rebuilds `snapshot`'s environment beside its interpreter's: a new
    venv named after A's prefix, its Python version and the snapshot (nothing of B's is touched)."""
    python = snapshot.probe_data("python") or {}
    prefix = python.get("prefix") if isinstance(python.get("prefix"), str) else None
    version = python.get("version") if isinstance(python.get("version"), str) else None
    place = f"{prefix or '/tmp/driftcheck-restore'}-{version or 'a'}-{snapshot.short_id[:8]}"
    return f"driftcheck restore {snapshot_reference(snapshot)} --venv {shlex.quote(place)}"
