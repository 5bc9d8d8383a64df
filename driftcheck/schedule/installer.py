"""Snapshots nobody has to remember: a systemd service + timer pair (or a cron entry) that takes one
after every boot and every DURATION.

systemd, when it runs the machine (or when `root` names a directory to write a machine image's units
into, as `systemctl --root` does): `driftcheck-scheduled.service` + `driftcheck-scheduled.timer`
(label `scheduled`), and with `at_boot` `driftcheck-boot.service` (label `boot`), ordered after
`nvidia-persistenced.service` when that unit exists, so the driver is up. System-wide as root, as the
user's units otherwise. Where systemd does not run (a container) and no root is given: a cron entry,
in `/etc/cron.d/driftcheck` as root, in the user's crontab otherwise.

Every file (and crontab block) written carries a marker line with the settings; a file without it
is the user's and is never overwritten. `remove` takes away exactly what carries the marker, and
the links that enabled it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from driftcheck.errors import DriftcheckError, UsageError

MARKER = "# driftcheck-schedule:"
# sha256 of every other line of the file as written: a file whose lines no longer match was edited by
# someone, and is left alone (named, never overwritten or removed without a word).
DIGEST = "# driftcheck-digest:"
# systemd and cron take absurd spans, but a snapshot every few centuries is a typo, not a schedule.
MAX_EVERY_S = 366 * 86400
# C0 and C1 controls and the Unicode line separators: systemd and cron end a line only at \n, but Python's
# str.splitlines (and many a reader) also at U+0085 and U+2028, so a unit holding one is not read back as written.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
HEADER = "# Written by `driftcheck schedule install`; `driftcheck schedule remove` takes it away."
BOOT_SERVICE = "driftcheck-boot.service"
SCHEDULED_SERVICE = "driftcheck-scheduled.service"
TIMER = "driftcheck-scheduled.timer"
UNITS = (BOOT_SERVICE, SCHEDULED_SERVICE, TIMER)
PERSISTENCED = "nvidia-persistenced.service"
CRON_FILE = "driftcheck"
DEFAULT_CRON_DIR = Path("/etc/cron.d")
CRONTAB_BEGIN = "# BEGIN driftcheck schedule"
CRONTAB_END = "# END driftcheck schedule"
# Where a unit may live on a machine, as systemd looks for them (system manager).
_SYSTEM_UNIT_DIRS = ("etc/systemd/system", "run/systemd/system", "lib/systemd/system", "usr/lib/systemd/system")
# Variables that decide where driftcheck keeps its key and store: the scheduled run must use the same.
_HOME_VARIABLES = ("DRIFTCHECK_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
_UNITS_OF_TIME = (("w", 604800), ("d", 86400), ("h", 3600), ("min", 60), ("s", 1))
_DURATION_PART = re.compile(r"(\d+)\s*(weeks?|w|days?|d|hours?|h|minutes?|min|m|seconds?|sec|s)")


@dataclass(frozen=True)
class Settings:
    """What `schedule install` was asked for."""

    every_s: int = 86400
    at_boot: bool = False
    python: str | None = None
    bench: str | None = None
    # node_exporter's textfile directory: after each snapshot, `driftcheck export prometheus` keeps
    # driftcheck.prom there fresh (a check against the baseline, the machine's facts).
    textfile_dir: str | None = None

    @property
    def every(self) -> str:
        return format_duration(self.every_s)


@dataclass(frozen=True)
class Target:
    """Where a schedule goes: systemd units (system or user, live or under `root`) or cron."""

    kind: str  # "systemd" or "cron"
    user: bool
    root: Path | None = None
    cron_dir: Path = DEFAULT_CRON_DIR

    @property
    def unit_dir(self) -> Path:
        if self.user:
            relative = "etc/systemd/user" if self.root else str(_user_config() / "systemd" / "user").lstrip("/")
        else:
            relative = "etc/systemd/system"
        return (self.root or Path("/")) / relative


@dataclass
class Installed:
    """What is installed now, as found on disk: for `schedule status` and `remove`."""

    target: Target
    settings: Settings | None = None
    files: list[Path] = field(default_factory=list)
    links: list[Path] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.target.kind, "user": self.target.user,
                "root": str(self.target.root) if self.target.root else None,
                "settings": {**asdict(self.settings), "every": self.settings.every} if self.settings else None,
                "files": [str(p) for p in self.files], "links": [str(p) for p in self.links]}


@dataclass(frozen=True)
class Outcome:
    """What install or remove did, for the message."""

    target: Target
    written: list[Path]
    removed: list[Path]
    notes: list[str]


def _user_config() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def parse_duration(text: str) -> int:
    """Seconds in a systemd-style time span (`1d`, `6h`, `90min`, `1h 30min`, `1w`); at least a minute."""
    compact = text.strip().lower()
    parts = _DURATION_PART.findall(compact)
    if not parts or _DURATION_PART.sub("", compact).strip():
        raise UsageError(f"--every {text!r}: not a duration (e.g. 1d, 6h, 30min, 1h30min)")
    seconds = sum(int(n) * _unit_seconds(unit) for n, unit in parts)
    if seconds > MAX_EVERY_S:
        raise UsageError(f"--every {text[:40]!r}: at most a year ({format_duration(MAX_EVERY_S)})")
    if seconds < 60:
        raise UsageError(f"--every {text!r}: at least a minute, please (a snapshot takes seconds)")
    return seconds


def _unit_seconds(unit: str) -> int:
    first = unit[0]
    if unit.startswith("min") or unit in ("m", "minute", "minutes"):
        return 60
    return {"w": 604800, "d": 86400, "h": 3600, "s": 1}[first]


def format_duration(seconds: int) -> str:
    """A time span systemd and people read: the largest unit that divides it (`1d`, `90min`)."""
    for unit, size in _UNITS_OF_TIME:
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def systemd_running() -> bool:
    """Whether systemd manages this machine (sd_booted(3): /run/systemd/system exists)."""
    return Path("/run/systemd/system").is_dir()


def choose_target(user: bool, root: Path | None, cron_dir: Path | None = None) -> Target:
    """systemd when `root` is given or systemd runs here, else cron; user units unless root runs this."""
    as_user = user or os.geteuid() != 0
    if root is not None:
        if not root.is_dir():
            raise UsageError(f"--root {root}: no such directory")
        return Target("systemd", as_user, root.resolve())
    kind = "systemd" if systemd_running() else "cron"
    return Target(kind, as_user, None, cron_dir or DEFAULT_CRON_DIR)


def driftcheck_argv(label: str, settings: Settings) -> list[str]:
    """The command a scheduled run executes: this interpreter, by absolute path, running driftcheck."""
    argv = [str(Path(sys.executable).absolute()), "-m", "driftcheck", "snapshot", "--quiet", "--label", label]
    if settings.python:
        argv += ["--python", str(Path(settings.python).absolute())]
    if settings.bench:
        argv += ["--bench", settings.bench]
    for word in argv:
        refuse_control_characters(word, "the scheduled command")
    return argv


def export_argv(settings: Settings) -> list[str] | None:
    """The command that refreshes the Prometheus textfile after a scheduled snapshot; None when none is asked."""
    if not settings.textfile_dir:
        return None
    argv = [str(Path(sys.executable).absolute()), "-m", "driftcheck", "export", "prometheus", "--textfile-dir",
            str(Path(settings.textfile_dir).absolute())]
    for word in argv:
        refuse_control_characters(word, "the scheduled command")
    return argv


def _environment() -> dict[str, str]:
    """The variables that point driftcheck at this user's key and store, for runs that start without them."""
    env = {"HOME": str(Path.home())}
    env.update({name: os.environ[name] for name in _HOME_VARIABLES if os.environ.get(name)})
    for name, value in env.items():
        refuse_control_characters(value, name)
    return env


def refuse_control_characters(value: str, what: str) -> str:
    """`value`, unless it holds a control character: a newline in a unit or cron file starts a directive or
    a job of its own, so no quoting makes it safe there (UsageError naming `what`)."""
    found = _CONTROL.search(value)
    if found:
        raise UsageError(f"{what} holds a control character ({found.group()!r}); a schedule cannot carry it "
                         "into a unit or cron file safely")
    return value


def _systemd_quote(word: str, expands_variables: bool = True) -> str:
    # `%` starts a specifier everywhere and `$` a variable in ExecStart=, not in Environment= ("Variable expansion
    # is not performed inside the strings, and $ has no special meaning": systemd.exec(5), since systemd 198), where
    # `$$` would stay two dollars; quote anything with spaces or quotes.
    escaped = word.replace("%", "%%")
    if expands_variables:
        escaped = escaped.replace("$", "$$")
    if re.search(r"[\s\"'\\;]", escaped):
        escaped = '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def _marker(settings: Settings, made_dirs: Sequence[str] = ()) -> str:
    # The directories install had to create go with the settings, so remove can take them away too.
    return f"{MARKER} " + json.dumps({**asdict(settings), "every": settings.every, "made_dirs": list(made_dirs)},
                                     sort_keys=True)


def _in_machine(path: Path, target: Target) -> str:
    """`path` as the machine sees it: without the --root prefix (an image's paths hold after deployment)."""
    return "/" + str(path.relative_to(target.root)) if target.root else str(path)


def _made_dirs(path: Path, target: Target) -> list[Path]:
    """The directories the install that wrote `path` created, as paths here."""
    for line in _file_lines(path.read_text("utf-8", errors="replace")):
        if line.startswith(MARKER):
            try:
                made = json.loads(line[len(MARKER):]).get("made_dirs", [])
                return [(target.root or Path("/")) / str(d).lstrip("/") for d in made]
            except (ValueError, AttributeError, TypeError):
                return []
    return []


def _missing_dirs(path: Path) -> list[Path]:
    """`path` and its ancestors that do not exist yet, outermost first."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    return list(reversed(missing))


def _service(label: str, settings: Settings, after: Sequence[str], install: str | None,
             made_dirs: Sequence[str]) -> str:
    env = " ".join(_systemd_quote(f"{k}={v}", expands_variables=False) for k, v in _environment().items())
    lines = [HEADER, _marker(settings, made_dirs), "[Unit]",
             f"Description=driftcheck snapshot ({label}): record the machine's state for later diffs"]
    lines += [f"After={unit}" for unit in after]
    lines += ["", "[Service]", "Type=oneshot", f"Environment={env}",
              "ExecStart=" + " ".join(_systemd_quote(w) for w in driftcheck_argv(label, settings))]
    export = export_argv(settings)
    if export:  # `-`: drift (exit 1) is in the metrics; it must not mark the snapshot's unit failed
        lines.append("ExecStartPost=-" + " ".join(_systemd_quote(w) for w in export))
    if install:
        lines += ["", "[Install]", f"WantedBy={install}"]
    return with_digest(lines)


def _timer(settings: Settings, made_dirs: Sequence[str]) -> str:
    lines = [HEADER, _marker(settings, made_dirs), "[Unit]", f"Description=driftcheck snapshot every {settings.every}",
             "", "[Timer]", f"OnBootSec={settings.every}", f"OnUnitActiveSec={settings.every}", "AccuracySec=1min",
             f"Unit={SCHEDULED_SERVICE}", "", "[Install]", "WantedBy=timers.target"]
    return with_digest(lines)


def _digest_of(lines: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(line for line in lines if not line.startswith(DIGEST)).encode()).hexdigest()


def with_digest(lines: Sequence[str]) -> str:
    """The file text of `lines` with a digest line after the first: what lets a later run tell an edit."""
    return "\n".join([lines[0], f"{DIGEST} sha256:{_digest_of(lines)}", *lines[1:]]) + "\n"


def _file_lines(text: str) -> list[str]:
    """The lines of a unit or cron file as systemd and cron read them: ended by \n only."""
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def is_unedited(text: str) -> bool:
    """Whether `text` is still exactly what driftcheck wrote (its digest line matches its other lines)."""
    lines = _file_lines(text)
    recorded = next((line[len(DIGEST):].strip() for line in lines if line.startswith(DIGEST)), None)
    return recorded == f"sha256:{_digest_of(lines)}"


def edited_files(paths: Sequence[Path]) -> list[Path]:
    """Those of `paths` (files of ours) whose content changed since driftcheck wrote them."""
    return [p for p in paths if p.is_file() and not is_unedited(p.read_text("utf-8", errors="replace"))]


def unit_exists(name: str, root: Path | None) -> bool:
    """Whether the system manager would find unit `name` (under `root`, when given)."""
    base = root or Path("/")
    return any((base / d / name).exists() for d in _SYSTEM_UNIT_DIRS)


def unit_texts(settings: Settings, target: Target,
               made_dirs: Sequence[str] = ()) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """(unit name -> text, unit name -> the target that wants it, notes) for `target`."""
    notes: list[str] = []
    units = {SCHEDULED_SERVICE: _service("scheduled", settings, (), None, made_dirs),
             TIMER: _timer(settings, made_dirs)}
    wanted_by = {TIMER: "timers.target"}
    if settings.at_boot:
        after: list[str] = []
        if target.user:
            notes.append("user units start when the user's manager does (at login, or at boot with "
                         "`loginctl enable-linger`); they cannot wait for nvidia-persistenced")
        elif unit_exists(PERSISTENCED, target.root):
            after.append(PERSISTENCED)
        else:
            notes.append(f"{PERSISTENCED} not found: the boot snapshot is not ordered after it")
        boot_target = "default.target" if target.user else "multi-user.target"
        units[BOOT_SERVICE] = _service("boot", settings, after, boot_target, made_dirs)
        wanted_by[BOOT_SERVICE] = boot_target
    return units, wanted_by, notes


def is_ours(path: Path) -> bool:
    """Whether the file at `path` was written by `schedule install` (carries the marker line)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return any(line.startswith(MARKER) for line, _ in zip(handle, range(5), strict=False))
    except OSError:
        return False


def _settings_from(text: str) -> Settings | None:
    for line in _file_lines(text):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER):])
                return Settings(int(data["every_s"]), bool(data["at_boot"]), data.get("python"), data.get("bench"),
                                data.get("textfile_dir"))
            except (ValueError, KeyError, TypeError):
                return None
    return None


def _link_path(target: Target, unit: str, wanted_by: str) -> Path:
    return target.unit_dir / f"{wanted_by}.wants" / unit


def _is_our_link(link: Path, target: Target) -> bool:
    return link.is_symlink() and os.readlink(link) == _link_value(target, link.name)


def _link_value(target: Target, unit: str) -> str:
    # As `systemctl --root` writes it: the path the unit will have on the running machine.
    return _in_machine(target.unit_dir / unit, target)


def _run(argv: Sequence[str]) -> None:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DriftcheckError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise DriftcheckError(f"{' '.join(argv)} failed: {message[-1] if message else f'exit {done.returncode}'}")


def _systemctl(target: Target, *args: str) -> None:
    if target.root is not None:
        return  # an image's units: linked by hand below, loaded when that machine boots
    _run(["systemctl", *(["--user"] if target.user else []), *args])


def install(settings: Settings, target: Target) -> Outcome:
    """Write and enable the schedule for `target`; replaces a schedule of ours, never a file of the user's."""
    if target.kind == "cron":
        return _install_cron(settings, target)
    for name in UNITS:
        path = target.unit_dir / name
        if path.exists() and not is_ours(path):
            raise UsageError(f"{path} exists and was not written by driftcheck; remove or rename it first")
    previous = find_installed(target)
    edited = edited_files(previous.files)
    if edited:
        raise UsageError(f"{edited[0]} was edited since driftcheck wrote it; move your version away (or remove "
                         "it) and install again: driftcheck does not overwrite an edit")
    _, wanted, _ = unit_texts(settings, target)
    for name, wants in wanted.items():
        link = _link_path(target, name, wants)
        if target.root is not None and (link.exists() or link.is_symlink()) and not _is_our_link(link, target):
            raise UsageError(f"{link} exists and is not driftcheck's link to {name}; driftcheck does not replace it")
    # A new install replaces ours whole: the directories the earlier one made are made again if needed.
    removed = _remove_systemd(previous) if previous.files else []
    _, wanted_by, _ = unit_texts(settings, target)
    made = _missing_dirs(target.unit_dir)
    if target.root is not None:
        made += [d for wants in sorted(set(wanted_by.values()))
                 for d in _missing_dirs(target.unit_dir / f"{wants}.wants")]
    made = sorted(set(made), key=lambda d: (len(d.parts), str(d)))
    units, wanted_by, notes = unit_texts(settings, target, [_in_machine(d, target) for d in made])
    written: list[Path] = []
    target.unit_dir.mkdir(parents=True, exist_ok=True)
    for name, text in units.items():
        path = target.unit_dir / name
        path.write_text(text, "utf-8")
        path.chmod(0o644)
        written.append(path)
    if target.root is not None:
        for name, wants in wanted_by.items():
            link = _link_path(target, name, wants)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.unlink(missing_ok=True)
            link.symlink_to(_link_value(target, name))
            written.append(link)
    else:
        _systemctl(target, "daemon-reload")
        _systemctl(target, "enable", "--now", TIMER)
        if BOOT_SERVICE in units:
            _systemctl(target, "enable", BOOT_SERVICE)
    return Outcome(target, written, [p for p in removed if not p.exists() and not p.is_symlink()], notes)


def _remove_systemd(installed: Installed) -> list[Path]:
    target = installed.target
    names = [p.name for p in installed.files]
    if target.root is None and names:
        _systemctl(target, "disable", "--now", *names)
    made = [d for path in installed.files for d in _made_dirs(path, installed.target)]
    removed = []
    for link in installed.links:
        link.unlink(missing_ok=True)
        removed.append(link)
    for path in installed.files:
        path.unlink(missing_ok=True)
        removed.append(path)
    for directory in sorted(set(made), key=lambda d: len(d.parts), reverse=True):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()  # install created it; only if nothing else has moved in since
            removed.append(directory)
    if target.root is None and names:
        _systemctl(target, "daemon-reload")
    return removed


def find_installed(target: Target) -> Installed:
    """The schedule of ours that `target` holds (no files when none)."""
    if target.kind == "cron":
        return _find_cron(target)
    found = Installed(target)
    for name in UNITS:
        path = target.unit_dir / name
        if path.is_file() and is_ours(path):
            found.files.append(path)
            if found.settings is None or name == TIMER:
                found.settings = _settings_from(path.read_text("utf-8", errors="replace"))
    if target.unit_dir.is_dir():
        for wants in sorted(target.unit_dir.glob("*.wants")):
            for link in sorted(wants.iterdir()):
                if link.is_symlink() and link.name in [p.name for p in found.files]:
                    found.links.append(link)
    return found


def remove(target: Target) -> Outcome:
    """Take away the schedule of ours that `target` holds; nothing else, and no file edited since it was
    written (those stay, named in the notes, for their editor to decide)."""
    installed = find_installed(target)
    edited = [] if target.kind == "cron" and target.user else edited_files(installed.files)
    notes = [f"{path} was edited since driftcheck wrote it: left in place; remove it yourself if you mean to"
             for path in edited]
    installed.files = [p for p in installed.files if p not in edited]
    installed.links = [link for link in installed.links if link.name not in {p.name for p in edited}
                       and _is_our_link(link, target)]
    if target.kind == "cron":
        return Outcome(target, [], _remove_cron(installed), notes)
    return Outcome(target, [], _remove_systemd(installed), notes)


# --- cron fallback -------------------------------------------------------------------------------------

def cron_schedule(seconds: int) -> str:
    """The five cron fields for "every `seconds`"; UsageError when cron cannot say it."""
    minutes, rest = divmod(seconds, 60)
    if rest == 0 and minutes < 60 and 60 % minutes == 0:
        return f"*/{minutes} * * * *" if minutes > 1 else "* * * * *"
    hours, rest = divmod(seconds, 3600)
    if rest == 0 and hours < 24 and 24 % hours == 0:
        return f"17 */{hours} * * *"
    if seconds == 86400:
        return "17 3 * * *"
    if seconds == 604800:
        return "17 3 * * 0"
    raise UsageError(f"cron cannot run something every {format_duration(seconds)}; choose a duration that "
                     "divides an hour or a day, 1d or 1w")


def _cron_command(label: str, settings: Settings) -> str:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in _environment().items())
    command = f"{env} " + " ".join(shlex.quote(w) for w in driftcheck_argv(label, settings)) + " >/dev/null"
    export = export_argv(settings)
    if export:  # after the snapshot, whatever its exit: the textfile says what the check found
        command += f"; {env} " + " ".join(shlex.quote(w) for w in export) + " >/dev/null"
    # cron turns a bare % into a newline and `\%` into `%`, but reads `\\%` as a backslash and a bare %: a
    # backslash the shell text holds before a % (only inside shlex's single quotes) is closed off from it first.
    return command.replace("\\%", "\\''%").replace("%", "\\%")


def cron_lines(settings: Settings, user_field: str | None) -> list[str]:
    """The cron entries: `@reboot` (with a minute for the driver to come up) and the schedule."""
    who = f" {user_field}" if user_field else ""
    lines = [HEADER, _marker(settings)]
    if settings.at_boot:
        lines.append(f"@reboot{who} sleep 60 && {_cron_command('boot', settings)}")
    lines.append(f"{cron_schedule(settings.every_s)}{who} {_cron_command('scheduled', settings)}")
    return lines


def _install_cron(settings: Settings, target: Target) -> Outcome:
    notes = ["systemd is not running here (PID 1 is not systemd): installed a cron entry instead; it runs "
             "only where a cron daemon does"]
    if target.user:
        current = _read_crontab()
        kept = _without_block(current)
        block = [CRONTAB_BEGIN, *cron_lines(settings, None), CRONTAB_END]
        _write_crontab(kept + block)
        return Outcome(target, [Path("crontab")], [], notes)
    path = target.cron_dir / CRON_FILE
    if path.exists() and not is_ours(path):
        raise UsageError(f"{path} exists and was not written by driftcheck; remove or rename it first")
    if not target.cron_dir.is_dir():
        raise UsageError(f"{target.cron_dir}: no such directory (is cron installed?)")
    if path.exists() and not is_unedited(path.read_text("utf-8", errors="replace")):
        raise UsageError(f"{path} was edited since driftcheck wrote it; move your version away (or remove it) "
                         "and install again: driftcheck does not overwrite an edit")
    path.write_text(with_digest(["SHELL=/bin/sh", *cron_lines(settings, "root")]), "utf-8")
    path.chmod(0o644)  # cron ignores a cron.d file that others may write
    return Outcome(target, [path], [], notes)


def _find_cron(target: Target) -> Installed:
    found = Installed(target)
    if target.user:
        lines = _read_crontab()
        if CRONTAB_BEGIN in lines:
            found.files.append(Path("crontab"))
            found.settings = _settings_from("\n".join(lines))
        return found
    path = target.cron_dir / CRON_FILE
    if path.is_file() and is_ours(path):
        found.files.append(path)
        found.settings = _settings_from(path.read_text("utf-8", errors="replace"))
    return found


def _remove_cron(installed: Installed) -> list[Path]:
    if not installed.files:
        return []
    if installed.target.user:
        _write_crontab(_without_block(_read_crontab()))
        return [Path("crontab")]
    for path in installed.files:
        path.unlink(missing_ok=True)
    return list(installed.files)


def _without_block(lines: list[str]) -> list[str]:
    out, inside = [], False
    for line in lines:
        if line == CRONTAB_BEGIN:
            inside = True
        elif line == CRONTAB_END and inside:
            inside = False
        elif not inside:
            out.append(line)
    return out


def crontab_command() -> list[str]:
    """crontab(1), or the program DRIFTCHECK_CRONTAB names (same -l / - interface)."""
    return shlex.split(os.environ.get("DRIFTCHECK_CRONTAB", "")) or ["crontab"]


def _read_crontab() -> list[str]:
    argv = crontab_command()
    if shutil.which(argv[0]) is None:
        raise DriftcheckError(f"{argv[0]} not found: cannot install a cron entry without crontab(1)")
    done = subprocess.run([*argv, "-l"], capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:  # "no crontab for USER": an empty one
        return []
    return done.stdout.splitlines()


def _write_crontab(lines: list[str]) -> None:
    argv = crontab_command()
    done = subprocess.run([*argv, "-"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        raise DriftcheckError(f"crontab refused the new table: {done.stderr.strip() or done.returncode}")
