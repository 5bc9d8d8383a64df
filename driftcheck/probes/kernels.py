"""`kernels` probe: content hashes of the compiled binaries that decide inference speed.

What it checks:
- every compiled file of every distribution, hashed and compared with its RECORD hash (a version string
  does not prove binary equality: a `.so` rebuilt in place keeps its size as often as not);
- the packages whose kernels make or break a benchmark (`kernels: true` in snapshot/catalog.yaml: torch,
  triton, flashinfer, sgl-kernel, vllm, xformers, flash-attn, deep-gemm, cutlass, every nvidia-* CUDA
  wheel) and the system CUDA/NCCL/driver libraries the loader finds are listed with their hashes whatever
  RECORD says; another distribution's file is listed only where it differs from its RECORD;
- JIT caches (triton, inductor, flashinfer, CUDA ComputeCache): a summary, not the files.

Hashes are cached in the store by (path, size, mtime_ns, inode), so a repeat snapshot rehashes nothing
unchanged: only the first snapshot of a venv pays for reading its compiled files. Hashing runs in the
target host's interpreter (stdlib `dist_facts` script), streaming.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from driftcheck.hosts import Host, ScriptCall
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.loader_cache import LDCONFIG_ARGVS, loader_cache
from driftcheck.probes.packages import normalize_name
from driftcheck.probes.toolchain import read_toolchain, toolchain_facts
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty
from driftcheck.store.hashcache import CachedFile, FileIdentity, HashCache

# Loader names of the system libraries that decide GPU performance.
SYSTEM_LIBRARY = re.compile(r"^lib(cuda|nvidia-ml|nccl|cudnn(_[a-z_]+)?|cublas(Lt)?|cudart)\.so(\.[0-9]+)*$")

# Directories the CUDA toolkit installs its libraries in, below each /usr/local/cuda* directory.
CUDA_LIBRARY_SUBDIRS = ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib")

_LDCONFIG_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")

HASH_BATCH_BYTES = 512 * 1024 * 1024
HASH_BATCH_FILES = 64
PROGRESS_AFTER_S = 1.0

HashProgress = Callable[[int, int, int, int], None]


def is_kernel_package(name: str) -> bool:
    """Whether every compiled file of distribution `name` is hashed on each snapshot (catalog `kernels`)."""
    return name_catalog().is_kernel_package(normalize_name(name))


def ldconfig_libraries(stdout: str) -> list[str]:
    """Paths of the performance-relevant libraries in `ldconfig -p` output, in its order."""
    paths = []
    for line in stdout.splitlines():
        match = _LDCONFIG_LINE.match(line)
        if match and SYSTEM_LIBRARY.match(match.group(1)):
            paths.append(match.group(3))
    return paths


def library_dirs(ld_library_path: str | None, local_entries: Sequence[str]) -> list[str]:
    """Directories to look for system libraries in: LD_LIBRARY_PATH, then each /usr/local/cuda* toolkit."""
    dirs = [d for d in (ld_library_path or "").split(":") if d]
    for name in sorted(local_entries):
        if name == "cuda" or name.startswith("cuda-") or re.match(r"^cuda[0-9.]*$", name):
            dirs.extend(f"/usr/local/{name}/{sub}" for sub in CUDA_LIBRARY_SUBDIRS)
    return list(dict.fromkeys(dirs))


def record_sha256_hex(record_hash: str | None) -> str | None:
    """The hex sha256 of a RECORD hash field (`sha256=<urlsafe base64>`); None for other algorithms."""
    if not record_hash or not record_hash.startswith("sha256="):
        return None
    encoded = record_hash.split("=", 1)[1]
    try:
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).hex()
    except (binascii.Error, ValueError):
        return None


@dataclass
class _Candidate:
    """One file that a snapshot checks: where it is, what RECORD says of it, whether it is always listed."""

    key: str
    stat: JSONObject  # from dist_facts: path, real_path, size, mtime_ns, inode; or error
    always_listed: bool
    record_hash: str | None = None
    record_size: int | None = None

    # Worked out once: a snapshot asks them of each of ~800 candidates several times (the plan, what the cache
    # learns, the listing), and `stat` is never changed.
    @cached_property
    def real_path(self) -> str:
        return str(self.stat.get("real_path") or self.stat["path"])

    @cached_property
    def identity(self) -> FileIdentity | None:
        size, mtime_ns, inode = self.stat.get("size"), self.stat.get("mtime_ns"), self.stat.get("inode")
        if "error" in self.stat or not (isinstance(size, int) and isinstance(mtime_ns, int)
                                        and isinstance(inode, int)):
            return None
        return FileIdentity(size, mtime_ns, inode)


@dataclass
class HashPlan:
    """Which files to hash now, which hashes come from the cache, and what the cache should learn."""

    to_hash: dict[str, int] = field(default_factory=dict)  # real path -> size
    known: dict[str, str] = field(default_factory=dict)  # real path -> sha256 (from the cache)


def _package_file(dist_key: str, entry: JSONValue, always: bool) -> _Candidate | None:
    """The candidate one file entry of a distribution's listing stands for (None for a malformed entry)."""
    if not isinstance(entry, dict) or not isinstance(stat := entry.get("stat"), dict):
        return None
    record_hash, record_size = entry.get("record_hash"), entry.get("record_size")
    return _Candidate(f"{dist_key}:{entry['relative']}", stat, always,
                      record_hash if isinstance(record_hash, str) else None,
                      record_size if isinstance(record_size, int) else None)


def candidates(files: JSONObject) -> list[_Candidate]:
    """Every compiled file of every distribution, then every system library not already among them.

    Of a distribution found twice on the path only the first counts: it is the one that imports (the
    packages probe reports the duplicate).
    """
    found: list[_Candidate] = []
    package_paths: set[str] = set()
    seen_dists: set[str] = set()
    for dist in map(object_or_empty, list_or_empty(files.get("distributions"))):
        always = is_kernel_package(str(dist.get("name") or ""))
        dist_key = normalize_name(str(dist.get("name") or "?"))
        if dist_key in seen_dists:
            continue
        seen_dists.add(dist_key)
        for entry in list_or_empty(dist.get("files")):
            candidate = _package_file(dist_key, entry, always)
            if candidate is not None:
                found.append(candidate)
                package_paths.add(candidate.real_path)
    seen_system: set[str] = set()
    for stat in map(object_or_empty, list_or_empty(files.get("libraries"))):
        candidate = _Candidate("", stat, True)
        real = candidate.real_path
        if real in package_paths or real in seen_system or "error" in stat:
            continue
        seen_system.add(real)
        candidate.key = f"system:{real}"
        found.append(candidate)
    return found


def plan_hashing(found: Iterable[_Candidate], cached: dict[str, CachedFile]) -> HashPlan:
    """Decide, per file, between the cached hash (the file is as the cache saw it) and a fresh one."""
    plan = HashPlan()
    for candidate in found:
        identity = candidate.identity
        if identity is None:
            continue
        real = candidate.real_path
        previous = cached.get(real)
        if previous is not None and previous.identity == identity and previous.sha256:
            plan.known[real] = previous.sha256
        else:
            plan.to_hash[real] = identity.size
    return plan


def hash_batches(sizes: dict[str, int]) -> list[list[str]]:
    """Paths in batches of bounded bytes and count, so progress can be reported between batches."""
    batches: list[list[str]] = []
    current: list[str] = []
    current_bytes = 0
    for path, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        if current and (current_bytes + size > HASH_BATCH_BYTES or len(current) >= HASH_BATCH_FILES):
            batches.append(current)
            current, current_bytes = [], 0
        current.append(path)
        current_bytes += size
    if current:
        batches.append(current)
    return batches


def _record_match(candidate: _Candidate, sha256: str | None) -> bool | None:
    identity = candidate.identity
    if identity is None:
        return False if candidate.record_hash or candidate.record_size is not None else None
    if candidate.record_size is not None and identity.size != candidate.record_size:
        return False
    expected = record_sha256_hex(candidate.record_hash)
    if expected is None or sha256 is None:
        return None
    return sha256 == expected


class KernelsProbe(Probe):
    """Hash cache and progress reporter are injectable; by default the user's store and no progress."""

    name = "kernels"
    description = "hashes of the compiled kernels (torch, triton, flashinfer, nvidia-*, system CUDA libraries)"
    timeout_s = 180.0
    shared_commands = LDCONFIG_ARGVS
    # Hashing quicker than this goes unreported: progress lines for a blink are noise.
    progress_after_s: float = PROGRESS_AFTER_S

    def __init__(self, cache: HashCache | None = None, progress: HashProgress | None = None) -> None:
        self.cache = cache
        self.progress = progress

    def _system_libraries(self, host: Host) -> list[str]:
        paths: list[str] = []
        listed = loader_cache(host)
        # No usable ldconfig: the loader's view is lost, the packages' binaries are still hashed.
        if listed is not None:
            paths.extend(ldconfig_libraries(listed.stdout))
        try:
            local_entries = host.list_dir("/usr/local")
        except OSError:
            local_entries = []
        for directory in library_dirs(host.environ().get("LD_LIBRARY_PATH"), local_entries):
            try:
                names = host.list_dir(directory)
            except OSError:
                continue
            paths.extend(f"{directory.rstrip('/')}/{name}" for name in names if SYSTEM_LIBRARY.match(name))
        return list(dict.fromkeys(paths))

    def _files_call(self, libraries: list[str]) -> ScriptCall:
        args = ["files"]
        for path in libraries:
            args.extend(["--lib", path])
        return ScriptCall("dist_facts", tuple(args))

    def interpreter_calls(self, host: Host, options: ProbeOptions) -> list[ScriptCall]:
        return [self._files_call(self._system_libraries(host))]

    def gather(self, host: Host, options: ProbeOptions) -> JSONObject:
        # The libraries are looked up again rather than kept from interpreter_calls: a probe kept across
        # snapshots must not describe an old loader cache. The look-up (a few listings; ldconfig's answer is
        # the snapshot's one run of it) runs while the shared interpreter run answers; the same list names the
        # same call, answered by that run.
        call = self._files_call(self._system_libraries(host))
        # The compilers and the cached hashes are read before asking for the file listing, not after: the
        # listing comes from the target interpreter's one run for all probes, and these need none of it.
        toolchain = read_toolchain(host)
        # The host says whether hashes may be cached (not in a recording or a replay: the cache describes
        # the live machine) and whether to hash in one sorted call (a replay answers only recorded calls;
        # over SSH each call is a round trip).
        cache = (self.cache or HashCache()) if host.capabilities.hash_cache else None
        cached = cache.lookup(host.name) if cache else {}
        files = host.python(call.script_name, call.args, call.timeout_s)
        found = candidates(object_or_empty(files))
        plan = plan_hashing(found, cached)
        hashes: JSONObject = dict(plan.known)
        batches = [sorted(plan.to_hash)] if host.capabilities.few_calls and plan.to_hash \
            else hash_batches(plan.to_hash)
        hashed_bytes = self._hash(host, batches, plan.to_hash, hashes)
        if cache:
            cache.remember(host.name, self._learned(found, hashes, cached))
        return {"files": files, "hashes": hashes, "toolchain": toolchain,
                "cache": {"hits": len(plan.known), "hashed": len(plan.to_hash), "hashed_bytes": hashed_bytes,
                          "files_checked": len(found)}}

    def _hash(self, host: Host, batches: list[list[str]], sizes: dict[str, int], hashes: JSONObject) -> int:
        total_files, total_bytes = len(sizes), sum(sizes.values())
        done_files = done_bytes = 0
        started = time.monotonic()
        for batch in batches:
            try:
                results = host.python("dist_facts", ["hash", "--jobs", "0", *batch], timeout_s=self.timeout_s)
            except FileNotFoundError:
                if not host.capabilities.recorded:
                    raise
                # A recording made by another driftcheck may hash another set of files: those stay unknown.
                results = {}
            for path in batch:
                outcome = object_or_empty(object_or_empty(results).get(path))
                hashes[path] = outcome.get("sha256")
                done_bytes += sizes[path]
            done_files += len(batch)
            if self.progress and time.monotonic() - started >= self.progress_after_s:
                self.progress(done_files, total_files, done_bytes, total_bytes)
        return total_bytes

    @staticmethod
    def _learned(found: Iterable[_Candidate], hashes: JSONObject,
                 cached: dict[str, CachedFile]) -> list[tuple[str, CachedFile]]:
        learned: dict[str, CachedFile] = {}
        for candidate in found:
            identity = candidate.identity
            if identity is None:
                continue
            entry = CachedFile(identity, _sha256(hashes, candidate.real_path))
            if cached.get(candidate.real_path) != entry:
                learned[candidate.real_path] = entry
        return list(learned.items())

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict) or not isinstance(listing := raw.get("files"), dict):
            raise ValueError("kernels: no file listing gathered")
        hashes = object_or_empty(raw.get("hashes"))
        files: JSONObject = {}
        modified: dict[str, list[str]] = {}
        for candidate in candidates(listing):
            identity = candidate.identity
            sha256 = _sha256(hashes, candidate.real_path) if identity else None
            match = _record_match(candidate, sha256)
            if match is False and not candidate.key.startswith("system:"):
                dist, _, relative = candidate.key.partition(":")
                modified.setdefault(dist, []).append(relative)
            if candidate.always_listed or match is False:
                files[candidate.key] = {"path": candidate.real_path if identity else candidate.stat.get("path"),
                                        "size_bytes": identity.size if identity else None,
                                        "sha256": sha256, "record_match": match}
        in_place: JSONObject = {dist: list[JSONValue](sorted(paths)) for dist, paths in sorted(modified.items())}
        return {
            "files": dict(sorted(files.items())),
            "modified_in_place": in_place,
            "jit_caches": dict(sorted(object_or_empty(listing.get("jit_caches")).items())),
            "hash_cache": dict(object_or_empty(raw.get("cache"))),
            # Raw material gathered before the compilers were read holds none: unknown.
            **toolchain_facts(object_or_empty(raw.get("toolchain"))),
        }


def _sha256(hashes: JSONObject, path: str) -> str | None:
    """The hash known for `path` (None: not hashed, or the hash failed)."""
    value = hashes.get(path)
    return value if isinstance(value, str) else None


def attach_hash_progress(probes: Iterable[Probe], progress: HashProgress | None) -> None:
    """Give every kernels probe in `probes` a reporter for hashing that takes longer than a second."""
    for probe in probes:
        if isinstance(probe, KernelsProbe):
            probe.progress = progress


def hash_cache_note(kernels_data: Mapping[str, object] | None) -> str | None:
    """One line on what the hash cache saved in a snapshot's kernels probe, or None if it did not run."""
    stats = (kernels_data or {}).get("hash_cache")
    if not stats or not isinstance(stats, dict):
        return None
    mib = int(stats.get("hashed_bytes", 0)) / (1024 * 1024)
    return (f"kernels: {stats.get('files_checked', 0)} compiled files; hash cache hits {stats.get('hits', 0)}, "
            f"hashed now {stats.get('hashed', 0)} ({mib:.1f} MiB)")
