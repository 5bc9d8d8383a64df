"""`clocksource` probe: the clock the kernel keeps time with, and the ones it could use instead.

Every timer call of the machine (a benchmark's timestamps, a runtime polling for a kernel to finish) reads
the kernel's current clocksource. A VM that boots on `hpet` or `acpi_pm` instead of `tsc` makes each of those
calls slow, which moves benchmark timings with nothing else changed. Both files are read through the Host
(`/sys/devices/system/clocksource/clocksource0`); `parse_clocksource` is a pure function of their text.
"""

from __future__ import annotations

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeDenied, ProbeOptions, ProbeUnavailable

CLOCKSOURCE_DIR = "/sys/devices/system/clocksource/clocksource0"
CURRENT = f"{CLOCKSOURCE_DIR}/current_clocksource"
AVAILABLE = f"{CLOCKSOURCE_DIR}/available_clocksource"


class ClocksourceProbe(Probe):
    name = "clocksource"
    description = "the kernel's current clocksource (tsc, hpet, acpi_pm, kvm-clock, ...) and those available"
    timeout_s = 5.0

    def gather(self, host: Host, options: ProbeOptions) -> dict[str, str | None]:
        current = _read(host, CURRENT)
        if current is None:
            raise ProbeUnavailable(f"no {CURRENT}: not a Linux host, or /sys is not mounted")
        return {"current": current, "available": _read(host, AVAILABLE)}

    def parse(self, raw: object) -> dict[str, object]:
        if not isinstance(raw, dict) or not isinstance(raw.get("current"), str):
            raise ValueError("clocksource raw material holds no current_clocksource text")
        available = raw.get("available")
        return parse_clocksource(raw["current"], available if isinstance(available, str) else None)


def _read(host: Host, path: str) -> str | None:
    """The text of `path`, None when it is absent; a file that may not be read denies the probe."""
    try:
        return host.read_bytes(path).decode("utf-8", errors="replace")
    except PermissionError as exc:
        raise ProbeDenied(f"{path}: {exc.strerror or 'permission denied'}") from None
    except FileNotFoundError:
        return None


def parse_clocksource(current: str, available: str | None) -> dict[str, object]:
    """{current, available} from the two files: the clocksource in use, and the names the kernel offers
    (sorted: the file lists them in registration order, which says nothing about speed); `available` is
    None when its file was absent."""
    name = current.strip()
    if not name or len(name.split()) != 1:
        raise ValueError(f"current_clocksource holds {current!r}, not one clocksource name")
    return {"current": name, "available": None if available is None else sorted(available.split())}
