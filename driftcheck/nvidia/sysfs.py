"""Linux sysfs as the second source of PCIe link facts: `/sys/bus/pci/devices/<bdf>/{current,max}_link_*`,
read through a Host for every NVIDIA display-class device, plus ACS control from config space where
the kernel lets us read the extended capabilities (root only).
"""

from __future__ import annotations

from collections.abc import Mapping

from driftcheck.hosts import Host
from driftcheck.snapshot.jsontypes import JSONObject

PCI_DEVICES = "/sys/bus/pci/devices"
NVIDIA_VENDOR = "0x10de"
_LINK_FILES = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")
_ACS_CAPABILITY = 0x000D


def _read(host: Host, path: str) -> str | None:
    try:
        return host.read_text(path).strip()
    except OSError:
        return None


def gather_sysfs(host: Host) -> dict[str, dict[str, str | None]]:
    """Raw link files (and config space as hex) of every NVIDIA display device; {} when there is none."""
    try:
        names = host.list_dir(PCI_DEVICES)
    except OSError:
        return {}
    found: dict[str, dict[str, str | None]] = {}
    for bdf in names:
        base = f"{PCI_DEVICES}/{bdf}"
        if _read(host, f"{base}/vendor") != NVIDIA_VENDOR or not (_read(host, f"{base}/class") or "").startswith(
                "0x03"):
            continue
        entry = {name: _read(host, f"{base}/{name}") for name in _LINK_FILES}
        try:
            entry["config"] = host.read_bytes(f"{base}/config").hex()
        except OSError:
            entry["config"] = None
        found[bdf] = entry
    return found


def acs_control(config: bytes) -> str | None:
    """The ACS Control register (hex) from a device's config space, None if it has no ACS capability.

    Unprivileged reads of sysfs `config` stop at 64 bytes, before the extended capabilities at 0x100.
    """
    offset, visited = 0x100, set()
    while offset and offset + 8 <= len(config) and offset not in visited:
        visited.add(offset)
        header = int.from_bytes(config[offset:offset + 4], "little")
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == _ACS_CAPABILITY:
            return f"0x{int.from_bytes(config[offset + 6:offset + 8], 'little'):04x}"
        offset = (header >> 20) & 0xFFC
    return None


def _width(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _text(entry: Mapping[str, object], name: str) -> str | None:
    """The text of one gathered file (None: unreadable)."""
    value = entry.get(name)
    return value if isinstance(value, str) else None


def parse_sysfs(raw: Mapping[str, Mapping[str, object]]) -> JSONObject:
    """The `sysfs` member of the pcie data: link speed strings, widths as integers, ACS control."""
    parsed: JSONObject = {}
    for bdf, entry in sorted(raw.items()):
        config = _text(entry, "config")
        parsed[bdf] = {"current_link_speed": _text(entry, "current_link_speed"),
                       "current_link_width": _width(_text(entry, "current_link_width")),
                       "max_link_speed": _text(entry, "max_link_speed"),
                       "max_link_width": _width(_text(entry, "max_link_width")),
                       "acs_ctl": acs_control(bytes.fromhex(config)) if config else None}
    return parsed
