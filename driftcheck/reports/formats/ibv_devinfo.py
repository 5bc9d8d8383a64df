"""`ibv_devinfo` (and `-v`): the RDMA devices and their ports, into the `nccl` probe's `infiniband` shape.

Each device opens with `hca_id: mlx5_0`, its `key: value` lines (`fw_ver` among them) follow, then per port
`port: 1` and its `state`, `link_layer` and, with `-v`, `phys_state`, `active_width`, `active_speed`. The probe
reads /sys/class/infiniband, where the same facts are spelled `4: ACTIVE` and `5: LinkUp`: ibv_devinfo's
`PORT_ACTIVE (4)` is written `ACTIVE` and `LINK_UP (5)` `LinkUp` so the two agree (as ibstat's are). Its width
and speed are no spelling of sysfs's `rate` and stay raw fields, as do GUIDs and the `-v` capability lists
(their continuation lines folded into the field). Lines before the first `hca_id` (a paste that starts inside
a port) are no device's and stay unclaimed; a port cut before its `link_layer`, or a device cut before its
ports, marks the list cut; the device list is never claimed whole (users paste a few of many).
"""

from __future__ import annotations

import re

from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject, member_object

_HCA = re.compile(r"^\s*hca_id:\s*(?P<hca>\S+)\s*$")
_PORT = re.compile(r"^\s+port:\s+(?P<port>\d+)\s*$")
_FIELD = re.compile(r"^\s+(?P<key>[A-Za-z][\w\[\] ]*?):\s*(?P<value>.*?)\s*$")
# A continuation of the field above (the `-v` flag lists): one flag name alone on its line.
_MORE = re.compile(r"^\s*[A-Z][A-Z0-9_]*\s*$")
_VERSION = re.compile(r"^\d+(\.\d+)+$")
# ibv_devinfo's port states and physical states as sysfs names them (`4: ACTIVE`, `5: LinkUp`).
_STATES = {"PORT_ACTIVE": "ACTIVE", "PORT_DOWN": "DOWN", "PORT_INIT": "INIT", "PORT_ARMED": "ARMED"}
_PHYS = {"LINK_UP": "LinkUp", "DISABLED": "Disabled", "POLLING": "Polling", "SLEEP": "Sleep"}
# The command, alone or after the user's prompt (`[user@host ~]$ ibv_devinfo -v`).
_COMMAND = re.compile(r"^(?:.*[$#]\s*)?\S*ibv_devinfo(?:\s+-\S+)*\s*$")
INFINIBAND = "probes.nccl.data.infiniband"


def detect(text: str) -> bool:
    """An `hca_id:` line followed by ibv_devinfo's `transport:` line."""
    return bool(re.search(r"^\s*hca_id:\s*\S+\s*\n\s+transport:", text.replace("\r", ""), re.MULTILINE))


def starts(lines: list[str], i: int) -> bool:
    """The first `hca_id:` line of a block (the line above is none of a device's)."""
    if not _HCA.match(lines[i]):
        return False
    above = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
    return not (_FIELD.match(above) or _HCA.match(above) or _PORT.match(above))


def parse(text: str) -> Parsed:
    """The `nccl` probe's InfiniBand devices and ports of a pasted ibv_devinfo."""
    paste = Paste.of(text)
    adapters: dict[str, JSONObject] = {}
    fields: dict[str, str] = {}
    hca: str | None = None
    port: str | None = None
    last_field: str | None = None
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        head, port_line, item = _HCA.match(line), _PORT.match(line), _FIELD.match(line)
        if head:
            hca, port, last_field = head["hca"], None, None
            adapters[hca] = {"ports": {}}
        elif hca and port_line:
            port, last_field = port_line["port"], None
            member_object(adapters[hca], "ports")[port] = {}
        elif hca and item:
            last_field = _read(adapters[hca], port, item["key"], item["value"], fields, hca)
        elif hca and last_field and _MORE.match(line):
            fields[last_field] = f"{fields[last_field]} {line.strip()}".strip()
        elif _COMMAND.match(line):
            paste.noise.append(i)
        else:
            continue
        paste.claim(i)
    if not adapters:
        raise ValueError("an ibv_devinfo output without an hca_id")
    last = next(reversed(adapters.values()))
    ports = member_object(last, "ports")
    last_port = next(reversed(ports.values()), None) if ports else None
    # ibv_devinfo ends every port with its link layer: a last device without one was cut by the paste.
    cut = [INFINIBAND] if not isinstance(last_port, dict) or "link_layer" not in last_port else []
    return Parsed(probes={"nccl": {"infiniband": adapters}}, variant="ibv_devinfo", fields=fields,
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines(), cut=cut)


def _read(adapter: JSONObject, port: str | None, key: str, value: str, fields: dict[str, str],
          hca: str) -> str | None:
    """One `key: value` line of a device or of its current port; the raw field's name when kept raw."""
    if port is None:
        if key == "fw_ver" and _VERSION.match(value):
            adapter["fw_ver"] = value
            return None
        name = f"{hca} {key}"
    else:
        entry = member_object(member_object(adapter, "ports"), port)
        word = value.split(" ")[0]
        if key == "state" and word in _STATES:
            entry["state"] = _STATES[word]
            return None
        if key == "phys_state" and word in _PHYS:
            entry["phys_state"] = _PHYS[word]
            return None
        if key == "link_layer" and value in ("InfiniBand", "Ethernet"):
            entry["link_layer"] = value
            return None
        name = f"{hca} port {port} {key}"
    fields[name] = value
    return name


FORMAT = Format("ibv-devinfo", "ibv_devinfo", "infiniband", detect, parse, starts,
                start_hint=r"\s*hca_id:")
