"""`daemons` probe: which of the daemons that change how GPUs and CPUs serve a benchmark are running.

A CUDA MPS control daemon makes every CUDA program of its user share the GPUs through one server (and
caps their SMs by `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`); irqbalance moves device interrupts between CPUs
as it likes; the persistence daemon keeps the driver loaded (without it, every CUDA start pays the
initialisation); Fabric Manager brings up NVSwitch (without it, multi-GPU jobs on HGX boards fail or fall
back); DCGM's host engine may profile the GPUs. Found by the names in /proc/*/comm (cut to 15 characters
by the kernel), told apart by /proc/*/cmdline where the cut names collide. All reads go through the Host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.probes.sysread import DENIED, RawView, SysReader

# comm (as the kernel cuts it, 15 characters) -> daemon name; MPS's control and server share one comm.
DAEMON_COMMS = {
    "irqbalance": "irqbalance",
    "nvidia-persiste": "nvidia-persistenced",
    "nv-fabricmanage": "nv-fabricmanager",
    "nv-hostengine": "nv-hostengine",
    "nvidia-cuda-mps": "nvidia-cuda-mps",
}
MPS_COMM = "nvidia-cuda-mps"
MPS_DEFAULT_PIPE_DIRECTORY = "/tmp/nvidia-mps"
# systemd units whose state a reboot may leave wrong (the process list says whether they run; the unit
# says whether they failed, were stopped or are not installed).
SERVICES = ("nvidia-persistenced", "nvidia-fabricmanager")
MPS_ENV = ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT")
_COMM_FILE = re.compile(r"^/proc/(\d+)/comm$")


class DaemonsProbe(Probe):
    name = "daemons"
    description = "running daemons that change GPU and CPU service: CUDA MPS, irqbalance, persistenced, fabric manager"
    timeout_s = 15.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        reader = SysReader(host)
        pids = [name for name in reader.listing("/proc") or [] if name.isdigit()]
        if not pids:
            raise ProbeUnavailable("no process list in /proc")
        for pid in pids:
            if (reader.text(f"/proc/{pid}/comm") or "").strip() == MPS_COMM:
                reader.text(f"/proc/{pid}/cmdline")
                reader.text(f"/proc/{pid}/environ")
        own_env = host.environ()
        pipe_dirs = {own_env.get("CUDA_MPS_PIPE_DIRECTORY") or MPS_DEFAULT_PIPE_DIRECTORY}
        for pid in _mps_pids(RawView(reader.raw()), pids):
            pipe_dirs.add(_environ(reader.text(f"/proc/{pid}/environ")).get("CUDA_MPS_PIPE_DIRECTORY")
                          or MPS_DEFAULT_PIPE_DIRECTORY)
        for directory in sorted(pipe_dirs):
            reader.listing(directory)
        raw = reader.raw()
        raw["systemctl"] = _systemctl(host, reader)
        raw["pids"] = pids
        raw["environ"] = {name: own_env[name] for name in MPS_ENV if name in own_env}
        return raw

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or "files" not in raw:
            raise ValueError("daemons raw material is not a recorded /proc read")
        view = RawView(raw)
        pids = [str(p) for p in raw.get("pids") or []]
        running: dict[str, int] = {}
        for pid in pids:
            name = _daemon_of(view, pid)
            if name:
                running[name] = running.get(name, 0) + 1
        return {"running": running, "mps": _mps(view, pids, dict(raw.get("environ") or {})),
                "services": parse_services(raw.get("systemctl"))}

    def recorded_processes(self, data: Mapping[str, object] | None, files: Mapping[str, bytes],
                           options: ProbeOptions) -> set[int]:
        """The daemons found (MPS, irqbalance, ...): a replay must find them running."""
        return {int(found.group(1)) for path, content in files.items()
                if (found := _COMM_FILE.match(path)) and content.strip().decode(errors="replace") in DAEMON_COMMS}


def _systemctl(host: Host, reader: SysReader) -> dict[str, Any] | None:
    """`systemctl is-active` of SERVICES, only where systemd is init (/run/systemd/system exists); None
    elsewhere (a container, another init): there the question has no answer, which is not "inactive"."""
    if "system" not in (reader.listing("/run/systemd") or []):
        return None
    try:
        result = host.run(["systemctl", "is-active", *SERVICES], timeout_s=10.0)
    except OSError as exc:
        return {"error": type(exc).__name__}
    return {"stdout": result.stdout, "returncode": result.returncode}


def parse_services(raw: dict[str, Any] | None) -> dict[str, str] | None:
    """unit -> its state (active, inactive, failed, activating, ...) from `systemctl is-active`, which
    prints one line per unit asked (and exits non-zero when any is not active); None without systemd."""
    if not raw or "stdout" not in raw:
        return None
    states = [line.strip() for line in str(raw["stdout"]).splitlines() if line.strip()]
    return dict(zip(SERVICES, states, strict=True)) if len(states) == len(SERVICES) else None


def _environ(text: str | None) -> dict[str, str]:
    """A /proc/PID/environ (NUL-separated NAME=value) as a dict."""
    pairs = (item.partition("=") for item in (text or "").split("\0") if item)
    return {name: value for name, sep, value in pairs if sep}


def _daemon_of(view: RawView, pid: str) -> str | None:
    """The daemon name of process `pid`, None for any other process; MPS's control and server apart."""
    comm = (view.stripped(f"/proc/{pid}/comm") or "")
    name = DAEMON_COMMS.get(comm)
    if name != MPS_COMM:
        return name
    program = (view.text(f"/proc/{pid}/cmdline") or "").split("\0")[0]
    return "nvidia-cuda-mps-server" if program.endswith("server") else "nvidia-cuda-mps-control"


def _mps_pids(view: RawView, pids: list[str]) -> list[str]:
    return [pid for pid in pids if (view.stripped(f"/proc/{pid}/comm") or "") == MPS_COMM]


def _mps(view: RawView, pids: list[str], own_env: dict[str, str]) -> dict[str, Any]:
    """The MPS daemon's pipe directory and thread cap (its environment, else ours), and whether its
    control pipe is there: a pipe left by a daemon that died makes CUDA programs wait on it."""
    daemon_env: dict[str, str] | str = {}
    seen: str | None = None
    for pid in _mps_pids(view, pids):
        if _daemon_of(view, pid) != "nvidia-cuda-mps-control":
            continue
        path = f"/proc/{pid}/environ"
        daemon_env = DENIED if view.is_denied(path) else _environ(view.text(path))
        seen = DENIED if daemon_env == DENIED else "read"
    env = daemon_env if isinstance(daemon_env, dict) and daemon_env else own_env
    pipe_directory = env.get("CUDA_MPS_PIPE_DIRECTORY") or MPS_DEFAULT_PIPE_DIRECTORY
    listing = view.listing(pipe_directory)
    control_pipe: bool | str | None = "control" in listing if listing is not None else None
    if listing is None and view.is_denied(pipe_directory):
        control_pipe = DENIED
    return {
        "pipe_directory": pipe_directory,
        "control_pipe": control_pipe if control_pipe is not None else False,
        "active_thread_percentage": env.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        # Whose settings these are: the control daemon's ("read"), ours (None: no daemon), or unknown.
        "daemon_environ": seen,
    }
