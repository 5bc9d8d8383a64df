"""`lspci -vv` (whole, or grepped to its `LnkCap:`/`LnkSta:` lines): a GPU's PCIe link, into `pcie.sysfs`.

lspci prints each device as `2f:00.0 VGA compatible controller: <name>` and, with `-vv`, the Express
capability's `LnkCap: Port #0, Speed 32GT/s, Width x16, ...` (what the device can do) and `LnkSta: Speed
16GT/s (downgraded), Width x8 (downgraded)` (what the link trained to). These are the registers the kernel
shows as /sys/bus/pci/devices/<bdf>/{max,current}_link_{speed,width}, which the `pcie` probe keeps under
`sysfs` keyed by the kernel's bus id (`0000:2f:00.0`): the import writes them in the kernel's spelling
(`32.0 GT/s PCIe`, width 16) so a paste compares with a probed machine. Only display devices (VGA, 3D and
display controllers, processing accelerators) are taken; a device named by `lspci -s <bdf>` whose header is
not pasted counts as the one the user asked about. Link lines of no named device (a grep without the
command or header) give no fact: which device they belong to is not in the text. A device whose paste ends
before its link lines gives nothing either: the paste is refused, saying so.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject, member_object

_BDF = r"(?:(?P<domain>[0-9a-fA-F]{4}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})\.(?P<fn>[0-7])"
_HEADER = re.compile(rf"^\s*{_BDF} (?P<cls>[A-Za-z0-9][\w /-]*?)(?: \[[0-9a-fA-F]{{4}}\])?: (?P<name>\S.*)$")
_COMMAND = re.compile(r"\blspci\b(?P<args>[^|`]*)")
_SELECT = re.compile(rf"-s\s*{_BDF}\b")
_STATE = r"(?: \((?:ok|downgraded)\))?"
_LINK = re.compile(rf"^\s*(?P<reg>LnkCap|LnkSta):\s*(?:Port #\d+,\s*)?Speed (?P<speed>[\d.]+)GT/s{_STATE},"
                   rf"\s*Width x(?P<width>\d+){_STATE}")
_DISPLAY = ("VGA compatible controller", "3D controller", "Display controller", "Processing accelerators")
_DETECT_LINK = re.compile(r"^[ \t]*(?:LnkCap|LnkSta):[ \t]*(?:Port #\d+,[ \t]*)?Speed [\d.]+GT/s", re.MULTILINE)
_DETECT_DEVICE = re.compile(rf"^[ \t]*{_BDF} [A-Za-z0-9][\w /-]*?(?: \[[0-9a-fA-F]{{4}}\])?: \S.*\n"
                            r"[ \t]+(?:Subsystem|Control|Flags|Capabilities):", re.MULTILINE)
SYSFS = "probes.pcie.data.sysfs"


def detect(text: str) -> bool:
    """lspci's `LnkCap:`/`LnkSta:` lines, or a device header followed by lspci's indented `-v` lines."""
    text = text.replace("\r", "")
    return bool(_DETECT_LINK.search(text) or _DETECT_DEVICE.search(text))


def starts(lines: list[str], i: int) -> bool:
    """A line running lspci with `-v` (a prompt's or a fence's first line)."""
    command = _COMMAND.search(lines[i])
    return bool(command and "-v" in command["args"]) and not _LINK.match(lines[i])


def _kernel_bdf(match: re.Match[str]) -> str:
    """A bus id in the kernel's sysfs form (`0000:2f:00.0`); lspci omits the domain when it is 0."""
    domain = match["domain"] or "0000"
    return f"{domain.lower()}:{match['bus'].lower()}:{match['dev'].lower()}.{match['fn']}"


def _speed(gts: str) -> str:
    """lspci's `16GT/s` as the kernel writes it: `16.0 GT/s PCIe` (`2.5 GT/s PCIe`)."""
    return f"{float(gts):.1f} GT/s PCIe"


def parse(text: str) -> Parsed:
    """The PCIe links of the display devices a pasted lspci names."""
    paste = Paste.of(text)
    devices: dict[str, JSONObject] = {}  # bdf -> {"display": bool | None, "link": {...}}
    fields: dict[str, str] = {}
    current: str | None = None
    orphans = 0
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        header, link, command = _HEADER.match(line), _LINK.match(line), _COMMAND.search(line)
        if header:
            current = _kernel_bdf(header)
            entry = devices.setdefault(current, {"display": None, "link": {}})
            entry["display"] = header["cls"] in _DISPLAY
            fields[f"{current} device"] = f"{header['cls']}: {header['name']}"
        elif link:
            if current is None:
                orphans += 1
                fields[f"unattributed {link['reg']} {orphans}"] = line.strip()
            else:
                _read_link(member_object(devices[current], "link"), link)
        elif command and (selected := _SELECT.search(command["args"])):
            current = _kernel_bdf(selected)
            devices.setdefault(current, {"display": None, "link": {}})
            paste.noise.append(i)
        elif command:
            paste.noise.append(i)
        else:
            continue
        paste.claim(i)
    sysfs = {bdf: entry["link"] for bdf, entry in devices.items() if entry["link"] and entry["display"] is not False}
    if not sysfs:
        raise ValueError(_why_nothing(devices, orphans))
    return Parsed(probes={"pcie": {"source": "lspci", "sysfs": sysfs}}, variant="lspci", fields=fields,
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines())


def _read_link(link: JSONObject, match: re.Match[str]) -> None:
    """LnkCap is what the device can do (sysfs `max_*`), LnkSta what it trained to (`current_*`)."""
    side = "max" if match["reg"] == "LnkCap" else "current"
    link[f"{side}_link_speed"] = _speed(match["speed"])
    link[f"{side}_link_width"] = int(match["width"])


def _why_nothing(devices: dict[str, JSONObject], orphans: int) -> str:
    if orphans and not devices:
        return "its link lines name no device (no `lspci -s <bus id>` command or device line above them)"
    if any(entry["display"] for entry in devices.values()):
        return "the paste ends before its display device's LnkCap/LnkSta lines"
    return "it shows no display device's LnkCap/LnkSta lines"


FORMAT = Format("lspci-link", "lspci -vv", "lspci", detect, parse, starts,
                start_hint=r".*\blspci\b")
