"""`process` probe: the facts of running server processes (`snapshot --pid PID` / `--process PATTERN`).

What matters for a running SGLang/vLLM server is the environment and flags it was *started* with and
the libraries it actually mapped, not the shell's. Each process is keyed by a stable identity (the
module or script it runs, else its program name; `#2`, `#3` for further instances by start time),
never by its pid, so a restarted server compares with its earlier self.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TypedDict

from driftcheck.errors import CommandTimeout, ConnectionLost
from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.probes.redact import Redactor
from driftcheck.probes.sysread import key_values, to_int
from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty

_MAPPED_SO = re.compile(r"\.so(\.[\w.]+)?$")
_GPU_DEVICE = re.compile(r"^/dev/nvidia(\d+)$")
_DELETED = " (deleted)"
# NCCL itself, and the network plugins it loads (libnccl-net.so and what that name links to:
# libnccl-net-ofi.so of aws-ofi-nccl, the IB/gIB/SHARP plugins). Not /dev/shm/nccl-* segments.
_NCCL_CORE = re.compile(r"^libnccl\.so(\.\d+)*$")
_NCCL_NET = re.compile(r"^libnccl-net[\w.-]*\.so(\.[\w.]+)?$")


class ProcessProbe(Probe):
    """Built with the user's redactor: command lines and environments of servers hold API keys."""

    name = "process"
    description = "running server processes (--pid/--process): flags, environment, affinity, mapped libraries"
    timeout_s = 30.0
    needs_redactor = True
    cheap = False
    on_request = True

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def recorded_processes(self, data: Mapping[str, object] | None, files: Mapping[str, bytes],
                           options: ProbeOptions) -> set[int]:
        """The processes it described and those asked by pid: a replay asks for them again."""
        described = data.get("processes") if data else None
        entries = described.values() if isinstance(described, dict) else ()
        return {entry["pid"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("pid"), int)} \
            | set(options.pids)

    @classmethod
    def requested(cls, options: ProbeOptions) -> bool:
        return bool(options.pids or options.process_patterns)

    def gather(self, host: Host, options: ProbeOptions) -> JSONObject:
        if not options.pids and not options.process_patterns:
            raise ProbeUnavailable("no process asked for (snapshot --pid PID or --process PATTERN)")
        pids = list(dict.fromkeys(options.pids))
        not_found: list[str] = []
        if options.process_patterns:
            own, me = _own_lineage(host)
            candidates = [name for name in _list_or_empty(host, "/proc") if name.isdigit()]
            for pattern in options.process_patterns:
                matched = _matching_pids(host, candidates, pattern, own, me)
                if not matched:
                    not_found.append(f"pattern {pattern}")
                pids.extend(p for p in matched if p not in pids)
        processes: list[JSONObject] = []
        for pid in pids:
            facts = self._gather_process(host, pid)
            if facts is None:
                not_found.append(f"pid {pid}")
            else:
                processes.append(facts)
        if not processes:
            raise ProbeUnavailable(f"no such process: {', '.join(not_found)}")
        # Workers of one server map the same libraries: hash each file once, in one command.
        paths = {path for facts in processes
                 for path, deleted in performance_libraries(_text(facts["maps"]) or "").items() if not deleted}
        return {"processes": processes, "not_found": not_found, "hashes": _sha256(host, sorted(paths))}

    def _gather_process(self, host: Host, pid: int) -> JSONObject | None:
        base = f"/proc/{pid}"
        try:
            cmdline = host.read_bytes(f"{base}/cmdline")
            stat = host.read_text(f"{base}/stat")
        except OSError:
            return None
        facts: JSONObject = {"pid": pid, "stat": stat, "cmdline": self.redactor.argv(_nul_split(cmdline))}
        environ = _read_optional(host, f"{base}/environ")
        facts["environ"] = None if environ is None else self.redactor.environ(_environ(environ))
        for name in ("status", "cgroup", "maps", "numa_maps"):
            content = _read_optional(host, f"{base}/{name}")
            facts[name] = None if content is None else content.decode("utf-8", errors="replace")
        return facts

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict) or "processes" not in raw:
            raise ValueError("process raw material holds no processes")
        hashes = object_or_empty(raw.get("hashes"))
        parsed = [_process_entry(facts, hashes) for facts in map(object_or_empty, list_or_empty(raw["processes"]))]
        processes: JSONObject = {}
        for _, _, entry in sorted(parsed, key=lambda item: (item[0], item[1])):
            key = process_key([str(part) for part in list_or_empty(entry["cmdline"])], _text(entry["name"]))
            unique, n = key, 1
            while unique in processes:
                n += 1
                unique = f"{key}#{n}"
            processes[unique] = entry
        return {"processes": processes, "not_found": list(list_or_empty(raw.get("not_found")))}


def _text(value: JSONValue) -> str | None:
    return value if isinstance(value, str) else None


def _process_entry(facts: JSONObject, hashes: JSONObject) -> tuple[int, int, JSONObject]:
    """(start time, pid, the process's data) of what was gathered about one process."""
    pid = facts["pid"]
    if not isinstance(pid, int):
        raise ValueError(f"a gathered process has no pid ({pid!r})")
    stat = parse_stat(_text(facts.get("stat")) or "")
    status = key_values(_text(facts.get("status")))
    maps = _text(facts.get("maps"))
    libraries = performance_libraries(maps) if maps is not None else None
    environ, cgroup, numa_maps = facts.get("environ"), _text(facts.get("cgroup")), _text(facts.get("numa_maps"))
    return stat.get("started_ticks") or 0, pid, {
        "pid": pid,
        "name": stat.get("comm"),
        "started_ticks": stat.get("started_ticks"),
        "cmdline": list(list_or_empty(facts.get("cmdline"))),
        "environ": None if environ is None else dict(sorted(object_or_empty(environ).items())),
        "affinity": status.get("Cpus_allowed_list"),
        "mems_allowed": status.get("Mems_allowed_list"),
        "threads": to_int(status.get("Threads")),
        "cgroup": None if cgroup is None else _cgroup(cgroup),
        "numa_policies": None if numa_maps is None else _numa_policies(numa_maps),
        "mapped_libraries": None if libraries is None else {
            path: {"sha256": None if deleted else hashes.get(path), "deleted": deleted}
            for path, deleted in sorted(libraries.items())},
        "gpus": None if maps is None else mapped_gpus(maps),
        "nccl": None if maps is None else nccl_mapped(maps),
    }

def _read_optional(host: Host, path: str) -> bytes | None:
    """The file's bytes, or None when it is gone or not ours to read (another user's process)."""
    try:
        return host.read_bytes(path)
    except OSError:
        return None


def _list_or_empty(host: Host, path: str) -> list[str]:
    try:
        return host.list_dir(path)
    except OSError:
        return []


def _nul_split(data: bytes) -> list[str]:
    return [part.decode("utf-8", errors="replace") for part in data.split(b"\0") if part]


def _environ(data: bytes) -> dict[str, str]:
    environ: dict[str, str] = {}
    for item in _nul_split(data):
        name, sep, value = item.partition("=")
        if sep:
            environ[name] = value
    return environ


class ProcessStat(TypedDict, total=False):
    """What /proc/PID/stat says of a process (nothing when the line is unreadable)."""

    comm: str
    ppid: int | None
    started_ticks: int | None


def parse_stat(text: str) -> ProcessStat:
    """comm, ppid and start time (clock ticks after boot) from /proc/PID/stat."""
    head, sep, tail = text.rpartition(")")
    if not sep:
        return {}
    fields = tail.split()
    return {"comm": head.partition("(")[2], "ppid": to_int(fields[1]) if len(fields) > 1 else None,
            "started_ticks": to_int(fields[19]) if len(fields) > 19 else None}


def _own_lineage(host: Host) -> tuple[set[int], int | None]:
    """The pid of whatever reads /proc/self on `host` with its ancestors, and that pid itself."""
    lineage: set[int] = set()
    try:
        me = pid = to_int(host.read_text("/proc/self/stat").split()[0])
    except (OSError, IndexError):
        return lineage, None
    while pid and pid not in lineage and len(lineage) < 64:
        lineage.add(pid)
        try:
            pid = parse_stat(host.read_text(f"/proc/{pid}/stat")).get("ppid")
        except OSError:
            break
    return lineage, me


def _descends_from(host: Host, pid: int, ancestor: int) -> bool:
    """Whether `ancestor` is on the parent chain of `pid` (a process we started, such as a facts script)."""
    seen: set[int] = set()
    current: int | None = pid
    while current and current not in seen and len(seen) < 64:
        if current == ancestor:
            return True
        seen.add(current)
        try:
            current = parse_stat(host.read_text(f"/proc/{current}/stat")).get("ppid")
        except OSError:
            return False
    return False


def _matching_pids(host: Host, candidates: list[str], pattern: str, own: set[int], me: int | None) -> list[int]:
    """Pids whose command line matches the regular expression `pattern`, ours excluded.

    Ours: driftcheck, its ancestors, and its children (the facts scripts other probes run at the same
    moment carry package names such as "vllm" in their source on the command line).
    """
    regex = re.compile(pattern)
    matched = []
    for name in candidates:
        pid = int(name)
        if pid in own:
            continue
        try:
            argv = _nul_split(host.read_bytes(f"/proc/{pid}/cmdline"))
        except OSError:
            continue
        if argv and regex.search(" ".join(argv)) and not (me and _descends_from(host, pid, me)):
            matched.append(pid)
    return sorted(matched)


def process_key(cmdline: list[str], comm: str | None) -> str:
    """A stable name for a process: `-m` module, else the script a Python runs, else the program name."""
    if not cmdline:
        return comm or "unknown"
    program = os.path.basename(cmdline[0])
    if re.match(r"^python[\d.]*$", program):
        args = cmdline[1:]
        skip = False
        for i, arg in enumerate(args):
            if skip:
                skip = False
            elif arg == "-m" and i + 1 < len(args):
                return args[i + 1]
            elif arg.startswith("-m") and len(arg) > 2:
                return arg[2:]
            elif arg == "-c":
                return f"{program} -c"
            elif arg in ("-W", "-X", "--check-hash-based-pycs"):
                skip = True  # these options take a value: it is not the script
            elif not arg.startswith("-"):
                return os.path.basename(arg)
    return program or comm or "unknown"


def performance_libraries(maps: str) -> dict[str, bool]:
    """path → deleted, for the mapped shared objects that decide inference speed (catalog `maps`)."""
    libraries = name_catalog().mapped_libraries()
    found: dict[str, bool] = {}
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5]
        deleted = path.endswith(_DELETED)
        path = path.removesuffix(_DELETED)
        name = os.path.basename(path)
        if path.startswith("/") and _MAPPED_SO.search(name) and any(lib in path for lib in libraries):
            found[path] = found.get(path, False) or deleted
    return found


def nccl_mapped(maps: str) -> dict[str, bool | list[str]]:
    """{loaded, net_plugins}: whether the process mapped NCCL, and the paths of the NCCL network plugins it
    mapped. NCCL loads a plugin when it starts its first communicator; one that failed to load leaves NCCL
    on its internal IB or socket transport, which NCCL says only at NCCL_DEBUG=INFO."""
    loaded, plugins = False, set()
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue
        path = fields[5].removesuffix(_DELETED)
        name = os.path.basename(path)
        loaded = loaded or bool(_NCCL_CORE.match(name))
        if _NCCL_NET.match(name):
            plugins.add(path)
    return {"loaded": loaded, "net_plugins": sorted(plugins)}


def mapped_gpus(maps: str) -> list[int]:
    """Minor numbers of the /dev/nvidiaN devices the process has mapped (the GPUs it uses)."""
    minors = {int(m.group(1)) for line in maps.splitlines()
              if (m := _GPU_DEVICE.match(line.split(None, 5)[-1] if line.count(" ") >= 5 else ""))}
    return sorted(minors)


def _numa_policies(numa_maps: str) -> list[str]:
    """The distinct memory policies of the process's mappings (`default`, `bind:0`, `interleave:0-1`)."""
    return sorted({line.split()[1] for line in numa_maps.splitlines() if len(line.split()) > 1})


def _cgroup(text: str) -> dict[str, str]:
    """controllers → path, one entry per hierarchy ("unified" for cgroup v2)."""
    result: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            result[parts[1] or "unified"] = parts[2]
    return result


def _sha256(host: Host, paths: list[str]) -> dict[str, str]:
    """path → sha256 of each file, by `sha256sum` on the host (so it works over SSH and in a recording)."""
    if not paths:
        return {}
    try:
        result = host.run(["sha256sum", "--", *sorted(paths)], timeout_s=25.0)
    except (OSError, CommandTimeout, ConnectionLost):
        return {}
    hashes: dict[str, str] = {}
    for line in result.stdout.splitlines():
        digest, _, path = line.partition("  ")
        if re.fullmatch(r"[0-9a-f]{64}", digest):
            hashes[path] = digest
    return hashes
