"""`nvidia-smi` with no arguments: the boxed table users paste most often.

One header box with the driver and CUDA versions, then per GPU a block of two or three table rows
(index, name, persistence, bus id, display, ECC / fan, temperature, performance state, power draw and
cap, memory, utilisation, compute mode / MIG mode), then the processes box. Names may be cut with `...`
to fit the column. GPUs are keyed by bus id, as for any nvidia-smi output without UUIDs; the values go
through the same converters (`driftcheck.nvidia.values`) as `nvidia-smi -q`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from driftcheck.nvidia.values import flag, integer, mebibytes, normalize_bus_id, text_value, watts
from driftcheck.reports.formats.base import GPU_PROCESSES, Format, Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, value_at

# Driver 610 renamed the header's versions: "KMD Version:" and "CUDA UMD Version:".
_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+(?:Driver|KMD) Version:\s*(\S+)(?:\s+CUDA(?: UMD)? Version:\s*(\S+))?")
# The third column is persistence mode on Linux (`On`/`Off`), the driver model on Windows (`WDDM`/`TCC`).
_FIRST = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(On|Off|N/A|WDDM|TCC)\s*\|"
                    r"\s*([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s+(\S+)\s*\|\s*(.*?)\s*\|$")
# The compute mode may hold a blank ("E. Process"); the fan cell may say "ERR!" (an unknown value).
_SECOND = re.compile(r"^\|\s*(\S+)\s+(\S+?)C?\s+(P\d+|\S+)\s+(\S+?)W?\s*/\s*(\S+?)W?\s*\|"
                     r"\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\S+?)%?\s+(\S.*?)\s*\|$")
# A GPU's first row, loosely: one `_FIRST` does not read leaves the GPU list unknown, never shorter.
_ANY_FIRST = re.compile(r"^\|\s+\d+\s+.*\|\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d")
# The GPU's third row: its MIG mode alone in the last cell.
_THIRD = re.compile(r"^\|\s*\|\s*\|\s*([^\s|]+)\s*\|$")
# The box of MIG devices that follows the GPUs' box: its rows are no longer a GPU's.
_MIG_DEVICES = re.compile(r"^\|\s*MIG devices:")
_PROCESS = re.compile(r"^\|\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(.+?)\s+(\d+)MiB\s*\|$")


_TIMESTAMP = re.compile(r"^\s*\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4}\s*$")


def starts(lines: list[str], i: int) -> bool:
    """The date line nvidia-smi prints first, or the header box's top border when no date line precedes it."""
    line = lines[i].strip()
    if _TIMESTAMP.match(line):
        return i + 1 < len(lines) and lines[i + 1].strip().startswith("+-")
    return (line.startswith("+-") and i + 1 < len(lines) and "NVIDIA-SMI" in lines[i + 1]
            and not (i > 0 and _TIMESTAMP.match(lines[i - 1])))


def detect(text: str) -> bool:
    """Whether `text` holds nvidia-smi's header box."""
    return bool(_HEADER.search(text)) and "Bus-Id" in text


def _gpu(first: re.Match[str], index: int) -> JSONObject:
    bus_id = normalize_bus_id(first.group(4))
    return {"index": index, "pci_bus_id": bus_id, "name": first.group(2).strip(),
            "persistence_mode": flag(first.group(3)), "ecc": {"volatile": {"uncorrected": integer(first.group(6))}}}


def _fill(gpu: JSONObject, second: re.Match[str]) -> None:
    fan = text_value(second.group(1).rstrip("%"))
    gpu.update({"fan_speed_pct": integer(fan), "temperature": {"gpu_c": integer(second.group(2))},
                "performance_state": text_value(second.group(3)),
                # The Cap is the limit the driver enforces, which may be below the one requested (`-pl`).
                "power": {"draw_w": watts(second.group(4)), "enforced_limit_w": watts(second.group(5))},
                "memory": {"used_mib": mebibytes(second.group(6)), "total_mib": mebibytes(second.group(7))},
                "utilization": {"gpu_pct": integer(second.group(8))}, "compute_mode": text_value(second.group(9))})


def parse(text: str) -> Parsed:
    """The `gpu` probe (and `pcie` GPU list) of the table."""
    paste = Paste.of(text)
    header = None
    gpus: list[JSONObject] = []
    current: JSONObject | None = None
    processes: list[re.Match[str]] = []
    in_processes = False
    rows_begun = processes_closed = False
    unread_rows = 0
    for i, line in enumerate(paste.lines):
        stripped = line.strip()
        if not header and (match := _HEADER.search(line)):
            header = match
        elif _TIMESTAMP.match(line):
            pass
        elif _MIG_DEVICES.match(stripped):
            current = None
        elif "Processes:" in stripped:
            in_processes = True
        elif in_processes and (proc := _PROCESS.match(stripped)):
            processes.append(proc)
        elif in_processes and (stripped.startswith("|=") or "No running processes" in stripped):
            rows_begun = True
        elif in_processes and rows_begun and stripped.startswith("+"):
            processes_closed = True
        elif not in_processes and (first := _FIRST.match(stripped)):
            current = _gpu(first, int(first.group(1)))
            gpus.append(current)
        elif not in_processes and _ANY_FIRST.match(stripped):
            unread_rows += 1
            continue
        elif current is not None and not in_processes and (second := _SECOND.match(stripped)):
            _fill(current, second)
        elif current is not None and not in_processes and (third := _THIRD.match(stripped)):
            current["mig"] = {"mode_current": text_value(third.group(1))}
        elif not (stripped.startswith(("+", "|")) or not stripped):
            continue
        paste.claim(i)
    if header is None:
        raise ValueError("no NVIDIA-SMI header box")
    for proc in processes:
        owner = next((g for g in gpus if str(g["index"]) == proc.group(1)), None)
        if owner is None:
            continue
        listed = owner.setdefault("processes", {})
        if isinstance(listed, dict):
            listed[proc.group(4)] = {"pid": int(proc.group(4)), "type": proc.group(5), "name": proc.group(6).strip(),
                                     "used_memory_mib": int(proc.group(7))}
    if processes_closed:
        for gpu in gpus:
            gpu.setdefault("processes", {})  # the whole box was pasted: a GPU it does not list runs nothing
    keyed: JSONObject = {str(g["pci_bus_id"]): g for g in gpus}  # the row's bus id, always read
    # The GPU list is whole when the processes box follows it and every GPU row was read; a paste that stops
    # among the GPUs (or a row no pattern reads) says nothing of how many there are.
    whole = in_processes and unread_rows == 0
    cuda = header.group(3) if header.group(3) and re.fullmatch(r"\d+(\.\d+)+", header.group(3)) else None
    data: JSONObject = {"source": FORMAT.name, "driver_version": header.group(2), "cuda_driver_version": cuda,
                        "gpu_count": len(gpus) if whole else None, "gpus": keyed}
    pcie: JSONObject = {"source": FORMAT.name,
                        "gpus": {key: {"index": value_at(g, "index"), "pci_bus_id": key} for key, g in keyed.items()}}
    complete = (["probes.gpu.data.gpus", "probes.pcie.data.gpus"] if whole else []) + (
        [GPU_PROCESSES] if gpus and processes_closed else [])
    return Parsed(probes={"gpu": _pruned(data), "pcie": pcie}, role="gpu", variant=f"NVIDIA-SMI {header.group(1)}",
                  unclaimed=paste.unclaimed(), noise=paste.noise_lines(), complete=complete,
                  cut=[] if whole else ["probes.gpu.data.gpus"])


def _pruned(value: Mapping[str, JSONValue]) -> JSONObject:
    """`value` without unreadable (None) members and the groups they leave empty; `processes: {}` stays."""
    kept: JSONObject = {}
    for key, member in value.items():
        if isinstance(member, dict):
            member = _pruned(member)
            if not member and key != "processes":
                continue
        if member is not None:
            kept[key] = member
    return kept


FORMAT = Format("nvidia-smi-table", "nvidia-smi", "nvidia-smi", detect, parse, starts,
                start_hint=r"\s*(?:\+-|\w{3} \w{3} +\d+ \d\d:)")
