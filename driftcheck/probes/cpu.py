"""`cpu` probe: CPU idle states, the C-state limits, PCIe ASPM policy, the IRQ affinity of GPUs and NICs,
and the devfreq governors of boards whose memory bus speed is governed.

A disabled deep C-state shortens the wake-up of a CPU that launches GPU kernels (and a re-enabled one
lengthens it); ASPM puts idle PCIe links to sleep; an interrupt of a NIC or a GPU served on the far
socket costs a cross-socket hop. Idle states are summarised per state name over CPUs ("C6 disabled on
12 of 64 CPUs"), never per CPU; IRQs per PCI device (bus id), as how many of its IRQs go to which CPUs.
Everything is read from /proc and /sys through the Host; a file that exists but may not be read is
recorded as "denied", one that is absent as null.
"""

from __future__ import annotations

import re
from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.sysread import DENIED, RawView, SysReader, to_int

CPU_DIR = "/sys/devices/system/cpu"
CPUIDLE_DIR = f"{CPU_DIR}/cpuidle"
MAX_CSTATE = {"intel_idle": "/sys/module/intel_idle/parameters/max_cstate",
              "processor": "/sys/module/processor/parameters/max_cstate"}
ASPM_POLICY = "/sys/module/pcie_aspm/parameters/policy"
PCI_DEVICES = "/sys/bus/pci/devices"
DEVFREQ_DIR = "/sys/class/devfreq"
STATE_FILES = ("name", "disable", "latency")

# An MSI/MSI-X chip name carries the bus id of its device: `PCI-MSIX-0000:3b:00.0`, `IR-PCI-MSI-0000:...`.
_MSI_DEVICE = re.compile(r"\bPCI-MSIX?-([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\b")
# PCI class codes (the top byte) whose IRQs matter to a benchmark: 0x02 network (and InfiniBand), 0x03 display.
_DEVICE_KINDS = {"0x02": "nic", "0x03": "gpu"}


class CpuProbe(Probe):
    name = "cpu"
    description = "CPU idle states and C-state limits, PCIe ASPM policy, IRQ affinity of GPUs and NICs"
    timeout_s = 15.0

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        reader = SysReader(host)
        reader.text(f"{CPUIDLE_DIR}/current_driver")
        reader.text(f"{CPUIDLE_DIR}/current_governor_ro")
        reader.text(f"{CPUIDLE_DIR}/current_governor")
        for cpu in _numbered(reader.listing(CPU_DIR), "cpu"):
            for state in _numbered(reader.listing(f"{CPU_DIR}/{cpu}/cpuidle"), "state"):
                for name in STATE_FILES:
                    reader.text(f"{CPU_DIR}/{cpu}/cpuidle/{state}/{name}")
        for path in (*MAX_CSTATE.values(), ASPM_POLICY):
            reader.text(path)
        for device in reader.listing(DEVFREQ_DIR) or []:
            reader.text(f"{DEVFREQ_DIR}/{device}/governor")
        devices = _msi_irqs(reader.text("/proc/interrupts"))
        for bus_id, irqs in devices.items():
            if _kind(reader.text(f"{PCI_DEVICES}/{bus_id}/class")):
                for irq in irqs:
                    reader.text(f"/proc/irq/{irq}/smp_affinity_list")
        return reader.raw()

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or "files" not in raw:
            raise ValueError("cpu raw material is not a recorded /proc and /sys read")
        view = RawView(raw)
        return {
            "idle": _idle(view),
            "max_cstate": {module: _value_or_denied(view, path) for module, path in MAX_CSTATE.items()},
            "pcie_aspm_policy": _aspm_policy(view),
            "irq_affinity": _irq_affinity(view),
            "devfreq": _devfreq(view),
        }


def _devfreq(view: RawView) -> dict[str, Any] | str | None:
    """device -> {governor} of the devfreq devices (memory buses and GPUs of SoC boards such as Jetson);
    None when the class is absent (most servers)."""
    devices = view.listing(DEVFREQ_DIR)
    if devices is None:
        return DENIED if view.is_denied(DEVFREQ_DIR) else None
    return {device: {"governor": DENIED if view.is_denied(f"{DEVFREQ_DIR}/{device}/governor")
                     else view.stripped(f"{DEVFREQ_DIR}/{device}/governor")} for device in sorted(devices)}


def _numbered(names: list[str] | None, prefix: str) -> list[str]:
    """Entries named `<prefix><number>`, in numeric order."""
    found = [n for n in names or [] if re.fullmatch(rf"{prefix}\d+", n)]
    return sorted(found, key=lambda n: int(n[len(prefix):]))


def _value_or_denied(view: RawView, path: str) -> int | str | None:
    """A module parameter as a number (or its text), "denied" when unreadable, None when absent."""
    if view.is_denied(path):
        return DENIED
    text = view.stripped(path)
    number = to_int(text)
    return number if number is not None else text


def _aspm_policy(view: RawView) -> str | None:
    """The bracketed choice of `[default] performance powersave powersupersave`."""
    if view.is_denied(ASPM_POLICY):
        return DENIED
    text = view.stripped(ASPM_POLICY)
    if text is None:
        return None
    match = re.search(r"\[([^\]]+)\]", text)
    return match.group(1) if match else text or None


def _idle(view: RawView) -> dict[str, Any] | None:
    """The cpuidle driver and governor, and per state name: its exit latency and on how many CPUs it is
    disabled. None when no CPU has cpuidle states (a kernel without cpuidle, or /sys not visible)."""
    states: dict[str, dict[str, Any]] = {}
    for cpu in _numbered(view.listing(CPU_DIR), "cpu"):
        for state in _numbered(view.listing(f"{CPU_DIR}/{cpu}/cpuidle"), "state"):
            base = f"{CPU_DIR}/{cpu}/cpuidle/{state}"
            name = view.stripped(f"{base}/name") or state
            entry = states.setdefault(name, {"index": int(state[len("state"):]), "latency_us": None, "cpus": 0,
                                             "disabled_cpus": 0})
            entry["cpus"] += 1
            latency = view.integer(f"{base}/latency")
            if latency is not None:
                # Equal on every CPU in practice; the worst one is what a waking CPU may pay.
                entry["latency_us"] = max(latency, entry["latency_us"] or 0)
            if view.is_denied(f"{base}/disable"):
                entry["disabled_cpus"] = DENIED
            elif view.integer(f"{base}/disable") and entry["disabled_cpus"] != DENIED:
                entry["disabled_cpus"] += 1
    driver = view.stripped(f"{CPUIDLE_DIR}/current_driver")
    if not states and driver is None:
        return None
    governor = view.stripped(f"{CPUIDLE_DIR}/current_governor_ro") or view.stripped(f"{CPUIDLE_DIR}/current_governor")
    return {"driver": driver, "governor": governor, "states": states}


def _msi_irqs(text: str | None) -> dict[str, list[str]]:
    """bus id -> the numbers of its MSI/MSI-X IRQs, from /proc/interrupts."""
    devices: dict[str, list[str]] = {}
    for line in (text or "").splitlines():
        number, sep, rest = line.partition(":")
        match = _MSI_DEVICE.search(rest)
        if sep and number.strip().isdigit() and match:
            devices.setdefault(match.group(1), []).append(number.strip())
    return devices


def _kind(pci_class: str | None) -> str | None:
    """"gpu" or "nic" for a PCI class code such as `0x030200`, None for any other device."""
    return _DEVICE_KINDS.get((pci_class or "").strip()[:4])


def _irq_affinity(view: RawView) -> dict[str, Any] | str | None:
    """Per GPU and NIC (bus id): its kind, how many MSI IRQs it has, and how many go to each CPU list.

    None when /proc/interrupts was not readable; a device whose affinity files are unreadable counts
    them under "denied"."""
    text = view.text("/proc/interrupts")
    if text is None:
        return DENIED if view.is_denied("/proc/interrupts") else None
    devices: dict[str, Any] = {}
    for bus_id, irqs in _msi_irqs(text).items():
        kind = _kind(view.text(f"{PCI_DEVICES}/{bus_id}/class"))
        if kind is None:
            continue
        spread: dict[str, int] = {}
        for irq in irqs:
            path = f"/proc/irq/{irq}/smp_affinity_list"
            cpus = DENIED if view.is_denied(path) else view.stripped(path)
            if cpus is not None:
                spread[cpus] = spread.get(cpus, 0) + 1
        devices[bus_id] = {"kind": kind, "irqs": len(irqs), "cpus": spread}
    return devices
