"""Whether this machine has an NVIDIA driver at all: a look of microseconds before NVML or nvidia-smi.

Without /proc/driver/nvidia (present wherever the kernel module is loaded, containers included) and without a
/dev/nvidia* node, loading NVML (which searches the library path) and spawning nvidia-smi, each in an isolated
child, only take time (half a second of every snapshot) to say there is nothing to read. Only this machine is
looked at: over SSH or in a replay, nvidia-smi runs there and answers for itself.
"""

from __future__ import annotations

from driftcheck.hosts import Host

DRIVER_DIRECTORY = "/proc/driver/nvidia"


def missing_driver(host: Host) -> str | None:
    """Why `host` (this machine) has no NVIDIA driver to ask; None when it may have one, or is not this machine."""
    if not host.capabilities.in_process or host.exists(DRIVER_DIRECTORY):
        return None
    try:
        devices = host.list_dir("/dev")
    except OSError:
        return None  # cannot tell: let NVML and nvidia-smi say
    if any(name.startswith("nvidia") for name in devices):
        return None
    return f"no NVIDIA driver on this host (no {DRIVER_DIRECTORY}, no /dev/nvidia*): NVML and nvidia-smi not tried"
