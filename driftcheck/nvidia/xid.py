"""Xid errors the NVIDIA driver wrote to the kernel log, counted per GPU and Xid code: since boot, and in the boot
before (what may have led to the reboot).

The driver logs each error as `NVRM: Xid (PCI:0000:9b:00): 119, pid=..., name=..., <what happened>` (as a
recorded `dmesg -T` of an H100 node shows it, leptonai/gpud xid testdata), with the GPU's PCI domain, bus and
device but no function. The current boot's kernel messages are read with `journalctl -k -b 0` (journalctl 252's
`--help`: `-k` the kernel log of the current boot, `-b` a boot, `-g` entries whose message matches a pattern);
where the journal cannot be read the counts stay unknown (null), never "no Xid".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from driftcheck.errors import CommandTimeout
from driftcheck.hosts import Host
from driftcheck.nvidia.values import normalize_bus_id
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty

# The boots read: the current one (0), the one before (-1; journalctl: "Data from the specified boot (-1) is not
# available" where there is none).
CURRENT_BOOT, PREVIOUS_BOOT = "0", "-1"


def kernel_log_argv(boot: str) -> tuple[str, ...]:
    """journalctl reading the Xid lines of one boot's kernel messages."""
    return ("journalctl", "-k", "-b", boot, "--no-pager", "-g", "NVRM: Xid")


KERNEL_LOG_ARGV = kernel_log_argv(CURRENT_BOOT)
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?\): (\d+)\b")
# journalctl -g exits 1 when no entry matches (printing "-- No entries --"); another exit is a journal it could not
# read.
_READ_EXITS = (0, 1)


def xid_counts(log: str) -> dict[str, dict[str, int]]:
    """Per GPU (its bus id without the function, `00000000:9B:00`), how many times each Xid code was logged."""
    counts: dict[str, dict[str, int]] = {}
    for match in _XID.finditer(log):
        bus = normalize_bus_id(match.group(1)) or match.group(1)
        per_gpu = counts.setdefault(bus, {})
        per_gpu[match.group(2)] = per_gpu.get(match.group(2), 0) + 1
    return counts


def read_kernel_xid_log(host: Host, boot: str = CURRENT_BOOT) -> str | None:
    """The Xid lines of one boot's kernel log (the current one by default), or None when it cannot be read."""
    try:
        result = host.run(list(kernel_log_argv(boot)), timeout_s=20.0)
    except (OSError, CommandTimeout):
        return None
    # Anything on stderr ("No journal files were found.", a hint that the user sees only some messages) leaves
    # the log unread or partial: no count can be told from it.
    if result.returncode not in _READ_EXITS or result.stderr.strip():
        return None
    return result.stdout


def attach_xids(gpus: Mapping[str, JSONValue], log: str | None, field: str = "xid_since_boot") -> None:
    """Give each GPU record its Xid counts under `field` ({code: count}, {} when none was logged; null when the
    log could not be read), matched by bus id without the function."""
    counts = xid_counts(log) if log is not None else None
    for record in gpus.values():
        if not isinstance(record, dict):
            continue
        bus = str(object_or_empty(record).get("pci_bus_id") or "")
        slot = bus.rsplit(".", 1)[0] if "." in bus else bus
        found: JSONObject | None = None
        if counts is not None:
            found = dict(counts.get(slot, {}))
        record[field] = found
