"""`ibstat`: the InfiniBand/RoCE adapters (CAs) and their ports, into the `nccl` probe's `infiniband` shape.

ibstat prints `CA 'mlx5_0'`, the adapter's `Key: value` lines (firmware version among them), then per port
`Port 1:` and its state, physical state, rate and link layer. The probe reads /sys/class/infiniband, where
the same facts are spelled `4: ACTIVE`, `5: LinkUp`, `200 Gb/sec (4X HDR)`: ibstat's `Active` is written
`ACTIVE` so the two agree; its rate (`200`, no unit nor width) stays a raw field rather than a different
spelling of the probe's. A firmware masked by the user (`...`) is no version. Users often paste a few CAs
out of many (an `...` line marks the rest): the adapter list is never claimed whole.
"""

from __future__ import annotations

import re

from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject, member_object

_CA = re.compile(r"^\s*CA '(?P<ca>[^']+)'\s*$")
_PORT = re.compile(r"^\s+Port (?P<port>\d+):\s*$")
_FIELD = re.compile(r"^\s+(?P<key>[A-Za-z][A-Za-z ]*?):\s*(?P<value>.*?)\s*$")
_VERSION = re.compile(r"^\d+(\.\d+)+$")
# ibstat's port states as sysfs names them (`4: ACTIVE`).
_STATES = {"Active": "ACTIVE", "Down": "DOWN", "Initializing": "INIT", "Armed": "ARMED"}
_COMMAND = re.compile(r"^\s*\S*ibstat\s*$")


def detect(text: str) -> bool:
    """A `CA '<name>'` line followed by ibstat's `CA type:` line."""
    return bool(re.search(r"^\s*CA '[^']+'\s*\n\s+CA type:", text.replace("\r", ""), re.MULTILINE))


def starts(lines: list[str], i: int) -> bool:
    """The first `CA '...'` line of a block (not one following another CA's lines)."""
    above = lines[i - 1] if i > 0 else ""
    return bool(_CA.match(lines[i])) and not (_CA.match(above) or _FIELD.match(above))


def parse(text: str) -> Parsed:
    """The `nccl` probe's InfiniBand adapters and ports of a pasted ibstat."""
    paste = Paste.of(text)
    adapters: dict[str, JSONObject] = {}
    fields: dict[str, str] = {}
    ca: str | None = None
    port: str | None = None
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        head, port_line, item = _CA.match(line), _PORT.match(line), _FIELD.match(line)
        if head:
            ca, port = head["ca"], None
            adapters[ca] = {"ports": {}}
        elif ca and port_line:
            port = port_line["port"]
            member_object(adapters[ca], "ports")[port] = {}
        elif ca and item:
            _read(adapters[ca], port, item["key"], item["value"], fields, ca)
        elif _COMMAND.match(line):
            paste.noise.append(i)
        else:
            continue
        paste.claim(i)
    if not adapters:
        raise ValueError("an ibstat output without a CA")
    last = next(reversed(adapters.values()))
    ports = member_object(last, "ports")
    last_port = next(reversed(ports.values()), None) if ports else None
    # ibstat ends every port with its link layer: a last port without it was cut by the paste.
    cut = ["probes.nccl.data.infiniband"] if not isinstance(last_port, dict) or "link_layer" not in last_port else []
    return Parsed(probes={"nccl": {"infiniband": adapters}}, variant="ibstat", fields=fields,
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines(), cut=cut)


def _read(adapter: JSONObject, port: str | None, key: str, value: str, fields: dict[str, str], ca: str) -> None:
    """One `Key: value` line of an adapter or of its current port."""
    if port is None:
        if key == "Firmware version" and _VERSION.match(value):
            adapter["fw_ver"] = value
        else:
            fields[f"{ca} {key}"] = value
        return
    entry = member_object(member_object(adapter, "ports"), port)
    if key == "State" and value in _STATES:
        entry["state"] = _STATES[value]
    elif key == "Physical state" and re.fullmatch(r"[A-Za-z]+", value):
        entry["phys_state"] = value
    elif key == "Link layer" and value in ("InfiniBand", "Ethernet"):
        entry["link_layer"] = value
    else:
        fields[f"{ca} port {port} {key}"] = value


FORMAT = Format("ibstat", "ibstat", "infiniband", detect, parse, starts,
                start_hint=r"\s*CA '")
