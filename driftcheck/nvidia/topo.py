"""`nvidia-smi topo -m` (the connection matrix) to the `topology` member of the `pcie` data shape.

Real outputs vary: tab- or space-separated, header wrapped in underline escapes (raw ESC, or the
U+FFFD a paste leaves behind), header tokens glued together by a paste (`NIC11CPU Affinity`), NICs
named in a NIC Legend or directly (`mlx5_0`), optional NUMA Affinity and GPU NUMA ID columns, empty
cells. The rows carry the facts, so they are read by token: a row is a device label, one level per
device, then the affinity columns the header names, in the header's order.
"""

from __future__ import annotations

import re

from driftcheck.nvidia.values import NvidiaFormatError, text_value
from driftcheck.snapshot.jsontypes import JSONObject, list_or_empty, object_or_empty

_ESCAPE = re.compile(r"(?:\x1b|\ufffd)\[[0-9;]*m")
_LEVEL = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|PSB|SOC|NV\d+|NVB|N/A|CNS|C2C)$")
_NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_PLAIN_LEVELS = frozenset({"X", "SYS", "NODE", "PHB", "PXB", "PIX", "PSB", "SOC", "NVB", "N/A", "CNS", "C2C"})
# More devices than any one machine's matrix shows (8-16 GPUs and up to a few dozen NICs): the pairs grow as
# the square of the devices, so a larger matrix (a 3000 x 3000 one took a minute and 2.4 GB) is refused.
MAX_DEVICES = 256
_EXTRA_COLUMNS = (("CPU Affinity", "cpu_affinity"), ("NUMA Affinity", "numa_affinity"), ("GPU NUMA ID", "gpu_numa_id"))


def _clean(text: str) -> list[str]:
    return [_ESCAPE.sub("", line).rstrip() for line in text.replace("\r\n", "\n").split("\n")]


def _matrix_rows(lines: list[str]) -> tuple[int, list[list[str]]]:
    """(index of the header line, token rows of the matrix) — rows run until the first blank line."""
    for start, line in enumerate(lines):
        tokens = line.split()
        if len(tokens) >= 2 and tokens[1] == "X" and start > 0:
            rows = []
            for row in lines[start:]:
                if not row.strip() or row.strip().startswith("Legend"):
                    break
                rows.append(_cells(row))
                if len(rows) > MAX_DEVICES:
                    raise NvidiaFormatError(f"the topology matrix has more than {MAX_DEVICES} devices, more than "
                                            "any one machine shows")
            return start - 1, rows
    raise NvidiaFormatError(_no_matrix_reason(lines))


def _cells(row: str) -> list[str]:
    """A row's cells. A tab-separated row keeps its empty cells (a CPU Affinity that a job's cpuset leaves
    empty), so the columns after them keep their places; a space-aligned row can only be split at blanks."""
    if "\t" not in row:
        return row.split()
    cells = [cell.strip() for cell in row.split("\t")]
    while len(cells) > 1 and not cells[-1]:
        cells.pop()
    return cells


def _affinity_cells(tail: list[str], columns: int) -> list[str]:
    """The affinity columns' values among a row's cells after its levels. nvidia-smi puts an empty cell before
    the last column, GPU NUMA ID (`0-23\t0\t\tN/A` under `CPU Affinity  NUMA Affinity  GPU NUMA ID`): the
    columns before it are read by place, the last one is the last cell written."""
    if columns == 0:
        return []
    last = next((cell for cell in reversed(tail[columns - 1:]) if cell), "")
    return [*tail[:columns - 1], last]


def _no_matrix_reason(lines: list[str]) -> str:
    error = next((line.strip() for line in lines if line.strip().upper().startswith(("ERROR", "FAILED"))), None)
    if error:
        return f"nvidia-smi topo -m printed an error instead of a matrix: {error}"
    return "no connection matrix (a 'GPU0  X ...' row) found: not nvidia-smi topo -m output"


_HEADER_DEVICE = re.compile(r"(?:\S*m)?(GPU\d+|NIC\d+|mlx\S+)")


def header_device_names(header: str) -> list[str]:
    """The devices a matrix's header line names, in column order (GPU0, NIC0, mlx5_0)."""
    return [found.group(1) for token in header.split() if (found := _HEADER_DEVICE.fullmatch(token))]


def _columns(header: str, labels: list[str]) -> list[str]:
    """The matrix's columns: its rows' labels, or the header's devices when the rows stop early (a paste cut
    after the GPU rows) and the rows present are the header's first devices in order."""
    named = header_device_names(header)
    return named if len(named) > len(labels) and named[:len(labels)] == labels else labels


def parse_topo(text: str) -> JSONObject:
    """The topology dict (devices, pairs, cpu_affinity, numa_affinity, gpu_numa_id, nics) of a topo matrix.

    Rows the text cuts off at the end (a paste that stops after the GPU rows) lose nothing of the rows before
    them: each row holds its level to every device the header names, so `devices` is the header's and the
    pairs of every row present are read; which rows are missing is for the caller to judge."""
    lines = _clean(text)
    header_at, rows = _matrix_rows(lines)
    header = lines[header_at]
    devices = _columns(header, [row[0] for row in rows])
    extras = [key for label, key in sorted(_EXTRA_COLUMNS, key=lambda item: header.find(item[0]))
              if label in header]
    pairs: dict[str, str] = {}
    affinity: dict[str, dict[str, str | None]] = {key: {} for _, key in _EXTRA_COLUMNS}
    for i, row in enumerate(rows):
        cells = row[1:1 + len(devices)]
        if row[0] != devices[i]:
            raise NvidiaFormatError(f"topology row {row[0]!r} stands where the header names {devices[i]!r}")
        if len(cells) < len(devices) or not all(cell in _PLAIN_LEVELS or _LEVEL.match(cell) for cell in cells):
            raise NvidiaFormatError(f"topology row {row[0]!r} does not hold one level per device: {' '.join(row)}")
        if cells[i] != "X":
            raise NvidiaFormatError(f"topology row {row[0]!r} has no X on the diagonal")
        for j in range(i + 1, len(devices)):
            pairs[f"{devices[i]}~{devices[j]}"] = cells[j]
        if devices[i].startswith("GPU"):
            values = _affinity_cells(row[1 + len(devices):], len(extras))
            for key, value in zip(extras, values, strict=False):
                affinity[key][devices[i]] = text_value(value)
            for key in extras[len(values):]:
                affinity[key][devices[i]] = None
    nics: dict[str, str | None] = {m.group(1): m.group(2) for line in lines[header_at:]
                                   if (m := _NIC_LEGEND.match(line))}
    for device in devices:
        if device.startswith("NIC"):
            nics.setdefault(device, None)  # a legend line mangled by a paste names nothing readable
        elif not device.startswith("GPU"):
            nics[device] = device  # older drivers name NICs in the header directly (mlx5_0)
    return {
        "devices": devices,
        "pairs": pairs,
        "cpu_affinity": affinity["cpu_affinity"] if "cpu_affinity" in extras else None,
        "numa_affinity": affinity["numa_affinity"] if "numa_affinity" in extras else None,
        "gpu_numa_id": affinity["gpu_numa_id"] if "gpu_numa_id" in extras else None,
        "nics": nics,
    }


def merge_topology(pcie: JSONObject, topology: JSONObject) -> JSONObject:
    """`pcie` with the topo matrix added, and each GPU's CPU affinity and NUMA node taken from its row."""
    gpus = {key: dict(object_or_empty(entry)) for key, entry in object_or_empty(pcie["gpus"]).items()}
    cpu_affinity = object_or_empty(topology.get("cpu_affinity"))
    numa_affinity = object_or_empty(topology.get("numa_affinity"))
    for entry in gpus.values():
        label = f"GPU{entry['index']}"
        affinity = cpu_affinity.get(label)
        numa = numa_affinity.get(label)
        if affinity is not None:
            entry["cpu_affinity"] = affinity
        if isinstance(numa, str) and numa.isdigit():
            entry["numa_node"] = int(numa)
    return {**pcie, "topology": topology, "gpus": gpus}


def topology_devices(topology: JSONObject) -> list[str]:
    """The device labels (GPU0, NIC0, mlx5_0, ...) of a topology `parse_topo` read, in matrix order."""
    return [str(device) for device in list_or_empty(topology.get("devices"))]


def rows_read(topology: JSONObject) -> int:
    """How many rows of the matrix the text held: the devices whose pairs with every later device are read
    (the last row adds no pair, so a matrix missing only its last row reads as whole)."""
    devices = topology_devices(topology)
    held = object_or_empty(topology.get("pairs"))
    return next((i for i, device in enumerate(devices[:-1]) if f"{device}~{devices[i + 1]}" not in held),
                len(devices))


def cut_among_gpus(topology: JSONObject, named: int) -> bool:
    """Whether a matrix whose header names `named` devices was cut before the end of its GPU rows (or holds
    columns its rows could not be matched with): its rows would read as a smaller machine. A matrix cut only
    after its GPU rows has every pair of a GPU."""
    devices, rows = topology_devices(topology), rows_read(topology)
    return rows < named and (len(devices) < named or any(device.startswith("GPU") for device in devices[rows:]))
