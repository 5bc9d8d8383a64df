"""`nccl` probe: what decides how NCCL talks: its variables, config files, library, RDMA devices and NICs.

NCCL reads `NCCL_*` variables, then `$NCCL_CONF_FILE` or `~/.nccl.conf`, then `/etc/nccl.conf`. Which
libnccl gets loaded depends on the loader path and on the nvidia-nccl wheel of the interpreter that
runs the benchmark (torch's own view of it belongs to the `torch` probe). InfiniBand/RoCE ports and
network interfaces decide which transport it picks and how fast it goes.
"""

from __future__ import annotations

import re

from driftcheck.errors import CommandTimeout, ConnectionLost, FactsScriptError, TargetPythonError
from driftcheck.hosts import Host, ScriptCall
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.probes.loader_cache import LDCONFIG_ARGVS, loader_cache
from driftcheck.probes.redact import Redactor
from driftcheck.probes.sysread import RawView, SysReader, to_int
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty

IB_DIR = "/sys/class/infiniband"
NET_DIR = "/sys/class/net"
SYSTEM_CONF = "/etc/nccl.conf"
USER_CONF = "~/.nccl.conf"
IB_PORT_FILES = ("state", "phys_state", "rate", "link_layer")
# A port's error counters (ports/<n>/counters/): a cable or transceiver going bad shows as symbol errors and
# link recoveries, a flapping link as link_downed, long before the port leaves ACTIVE. Throughput and
# congestion counters (port_xmit_data, port_xmit_wait, port_xmit_discards) are left out: they measure
# traffic, not faults. A port without a PMA answers "N/A (no PMA)" (read as null).
IB_ERROR_COUNTERS = ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
                     "port_rcv_remote_physical_errors", "local_link_integrity_errors",
                     "excessive_buffer_overrun_errors")
NET_FILES = ("mtu", "speed", "operstate")
_LIBNCCL = re.compile(r"^libnccl\.so(\.\d+)*$")
_NCCL_WHEEL = re.compile(r"^nvidia_nccl(?:_cu\d+)?-(?P<version>[^-]+)\.dist-info$")


class NcclProbe(Probe):
    """Built with the user's redactor: NCCL variables and config values are stored like env values."""

    name = "nccl"
    description = "NCCL_* variables, nccl.conf files, libnccl version, InfiniBand/RoCE ports, network interfaces"
    timeout_s = 15.0
    needs_redactor = True
    shared_commands = LDCONFIG_ARGVS

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def interpreter_calls(self, host: Host, options: ProbeOptions) -> list[ScriptCall]:
        return [_SYS_PATH]

    def gather(self, host: Host, options: ProbeOptions) -> dict[str, object]:
        environ = host.environ()
        reader = SysReader(host)
        conf_paths = {SYSTEM_CONF: SYSTEM_CONF}
        if environ.get("HOME"):
            conf_paths[USER_CONF] = f"{environ['HOME'].rstrip('/')}/.nccl.conf"
        if environ.get("NCCL_CONF_FILE"):
            conf_paths[environ["NCCL_CONF_FILE"]] = environ["NCCL_CONF_FILE"]
        conf_files = {key: reader.text(path) for key, path in conf_paths.items()}
        for device in reader.listing(IB_DIR) or []:
            reader.text(f"{IB_DIR}/{device}/fw_ver")
            for port in reader.listing(f"{IB_DIR}/{device}/ports") or []:
                for name in IB_PORT_FILES:
                    reader.text(f"{IB_DIR}/{device}/ports/{port}/{name}")
                counters = f"{IB_DIR}/{device}/ports/{port}/counters"
                for name in set(reader.listing(counters) or []) & set(IB_ERROR_COUNTERS):
                    reader.text(f"{counters}/{name}")
        for iface in reader.listing(NET_DIR) or []:
            for name in NET_FILES:
                reader.text(f"{NET_DIR}/{iface}/{name}")
        raw = reader.raw()
        raw["env"] = self.redactor.environ({k: v for k, v in environ.items() if k.startswith("NCCL_")})
        raw["conf_files"] = {key: None if text is None else self.redactor.environ(parse_conf(text))
                             for key, text in conf_files.items()}
        raw["libraries"] = _find_libraries(host, reader, environ)
        return raw

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict) or "files" not in raw:
            raise ValueError("nccl raw material is not a recorded read")
        view = RawView(raw)
        env: JSONObject = {str(k): str(v) for k, v in sorted(object_or_empty(raw.get("env")).items())}
        conf_files: JSONObject = {key: values for key, values in sorted(object_or_empty(raw.get("conf_files")).items())
                                  if values is not None}
        libraries = dict(sorted(object_or_empty(raw.get("libraries")).items()))
        infiniband = _infiniband(view)
        net = _net(view)
        if not (env or conf_files or libraries or infiniband or net):
            raise ProbeUnavailable("no NCCL variables, config, library, InfiniBand device or network interface")
        return {"env": env, "conf_files": conf_files, "library": preferred_library(libraries),
                "libraries": libraries, "infiniband": infiniband, "net": net}


def parse_conf(text: str) -> dict[str, str]:
    """`NAME=value` lines of an nccl.conf; comments and blank lines skipped."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        name, sep, value = line.partition("=")
        if sep and name.strip():
            values[name.strip()] = value.strip()
    return values


def preferred_library(libraries: JSONObject) -> JSONObject | None:
    """The libnccl a benchmark most likely loads: the target interpreter's wheel, else the loader's."""
    for source in ("wheel", "ld_library_path", "ldconfig"):
        for path, entry in libraries.items():
            if isinstance(entry, dict) and entry.get("source") == source:
                return {"path": path, **entry}
    return None


def _version_from_names(names: list[str]) -> str | None:
    """The fullest version among `libnccl.so.2.21.5`-style names in one directory."""
    versions = [n[len("libnccl.so."):] for n in names if _LIBNCCL.match(n) and n.count(".") >= 4]
    return max(versions, key=lambda v: tuple(to_int(p) or 0 for p in v.split(".")), default=None)


# The target interpreter's sys.path, where an nvidia-nccl wheel's library lies: the python probe's question.
_SYS_PATH = ScriptCall("python_facts", timeout_s=10.0)


def _find_libraries(host: Host, reader: SysReader, environ: dict[str, str]) -> JSONObject:
    """path → {version, source} for every libnccl the loader or the target interpreter would find."""
    found: JSONObject = {}
    for directory in filter(None, environ.get("LD_LIBRARY_PATH", "").split(":")):
        names = reader.listing(directory) or []
        for name in names:
            if _LIBNCCL.match(name) and name.count(".") == 2:
                found[f"{directory.rstrip('/')}/{name}"] = {"version": _version_from_names(names),
                                                           "source": "ld_library_path"}
    ldconfig = loader_cache(host)
    for line in (ldconfig.stdout if ldconfig and ldconfig.returncode == 0 else "").splitlines():
        match = re.match(r"\s*(libnccl\.so[.\d]*)\s.*=>\s*(\S+)$", line)
        if match and match.group(2) not in found:
            directory = match.group(2).rsplit("/", 1)[0]
            found[match.group(2)] = {"version": _version_from_names(reader.listing(directory) or []),
                                     "source": "ldconfig"}
    try:
        facts = host.python(_SYS_PATH.script_name, _SYS_PATH.args, _SYS_PATH.timeout_s)
    except (OSError, CommandTimeout, ConnectionLost, TargetPythonError, FactsScriptError):
        facts = None
    for entry in list_or_empty(object_or_empty(facts).get("sys_path")):
        if not isinstance(entry, str):
            continue
        names = reader.listing(entry) or []
        wheel = next((m for m in map(_NCCL_WHEEL.match, names) if m), None)
        if wheel is None:
            continue
        lib_dir = f"{entry.rstrip('/')}/nvidia/nccl/lib"
        for name in reader.listing(lib_dir) or []:
            if _LIBNCCL.match(name):
                found[f"{lib_dir}/{name}"] = {"version": wheel.group("version"), "source": "wheel"}
    return found


def _infiniband(view: RawView) -> JSONObject | None:
    """Devices with their ports; None when there is no /sys/class/infiniband (no RDMA stack)."""
    devices = view.listing(IB_DIR)
    if devices is None:
        return None
    result: JSONObject = {}
    for device in devices:
        ports: JSONObject = {}
        for port in view.listing(f"{IB_DIR}/{device}/ports") or []:
            base = f"{IB_DIR}/{device}/ports/{port}"
            ports[port] = {"state": _after_colon(view.stripped(f"{base}/state")),
                           "phys_state": _after_colon(view.stripped(f"{base}/phys_state")),
                           "rate": view.stripped(f"{base}/rate"),
                           "link_layer": view.stripped(f"{base}/link_layer"),
                           "counters": _port_counters(view, f"{base}/counters")}
        result[device] = {"fw_ver": view.stripped(f"{IB_DIR}/{device}/fw_ver"), "ports": ports}
    return result


def _port_counters(view: RawView, directory: str) -> JSONObject | None:
    """The error counters a port has; None when it has no counters directory (or it was not readable)."""
    names = view.listing(directory)
    if names is None:
        return None
    return {name: view.integer(f"{directory}/{name}") for name in IB_ERROR_COUNTERS if name in names}


def _after_colon(value: str | None) -> str | None:
    """`4: ACTIVE` → `ACTIVE` (the number is the same fact in another form)."""
    return None if value is None else value.split(":", 1)[-1].strip()


def _net(view: RawView) -> JSONObject:
    result: JSONObject = {}
    for iface in view.listing(NET_DIR) or []:
        base = f"{NET_DIR}/{iface}"
        speed = view.integer(f"{base}/speed")
        result[iface] = {"mtu": view.integer(f"{base}/mtu"),
                         # The kernel reports -1 (or refuses to answer) when a link has no speed.
                         "speed_mbps": speed if speed is not None and speed >= 0 else None,
                         "operstate": view.stripped(f"{base}/operstate")}
    return result
