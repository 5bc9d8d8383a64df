"""`driftcheck schedule`: systemd units under --root checked by the real systemd-analyze and systemctl,
the cron fallback of a machine without systemd (this container) in a temporary cron.d, and remove
taking away exactly what install wrote."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.errors import UsageError
from driftcheck.schedule.installer import cron_schedule, format_duration, parse_duration, systemd_running
from tests.conftest import DATA, CliResult

UNIT_DIR = Path("etc/systemd/system")
UNITS = ("driftcheck-boot.service", "driftcheck-scheduled.service", "driftcheck-scheduled.timer")
needs_systemd_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                           reason="systemd-analyze is not installed")
without_systemd = pytest.mark.skipif(systemd_running(), reason="systemd runs this machine: no cron fallback")


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) + ("@" if p.is_symlink() else "") for p in root.rglob("*"))


def _unit(root: Path, name: str) -> str:
    return (root / UNIT_DIR / name).read_text("utf-8")


def _exec_start(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line[len("ExecStart="):].replace("%%", "%").replace("$$", "$"))


@needs_systemd_analyze
def test_install_at_boot_writes_units_systemd_accepts_and_remove_leaves_nothing(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = tmp_path / "image"
    root.mkdir()
    result = cli("schedule", "install", "--at-boot", "--every", "1d", "--root", str(root))
    assert result.returncode == 0, result.stderr
    assert "nvidia-persistenced.service not found" in result.stderr
    paths = [root / UNIT_DIR / name for name in UNITS]
    assert all(p.is_file() for p in paths)
    verify = subprocess.run(["systemd-analyze", "verify", *map(str, paths)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert verify.returncode == 0, verify.stderr
    argv = _exec_start(_unit(root, "driftcheck-boot.service"))
    assert Path(argv[0]).is_absolute() and os.access(argv[0], os.X_OK)
    assert argv[1:] == ["-m", "driftcheck", "snapshot", "--quiet", "--label", "boot"]
    assert "OnUnitActiveSec=1d" in _unit(root, "driftcheck-scheduled.timer")
    if shutil.which("systemctl"):  # the real tool reads our links as its own `enable` would have made them
        enabled = subprocess.run(["systemctl", f"--root={root}", "is-enabled", "driftcheck-scheduled.timer",
                                  "driftcheck-boot.service"], capture_output=True, text=True, timeout=60,
                                 check=False)
        assert enabled.stdout.split() == ["enabled", "enabled"], enabled.stderr
    status = json.loads(cli("schedule", "status", "--root", str(root), "--format", "json").stdout)
    assert status["installed"] and status["settings"]["every"] == "1d" and status["settings"]["at_boot"]
    removed = cli("schedule", "remove", "--root", str(root))
    assert removed.returncode == 0
    assert _tree(root) == []  # nothing behind: units, links and the directories install made


@needs_systemd_analyze
def test_boot_snapshot_waits_for_nvidia_persistenced_when_the_machine_has_it(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = tmp_path / "image"
    unit = root / "lib/systemd/system/nvidia-persistenced.service"
    unit.parent.mkdir(parents=True)
    # The unit as NVIDIA's driver package ships it (abridged to what systemd needs).
    unit.write_text("[Unit]\nDescription=NVIDIA Persistence Daemon\nWants=syslog.target\n\n[Service]\n"
                    "Type=forking\nExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced\n"
                    "ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced\n", "utf-8")
    before = _tree(root)
    assert cli("schedule", "install", "--at-boot", "--root", str(root)).returncode == 0
    assert "After=nvidia-persistenced.service" in _unit(root, "driftcheck-boot.service").splitlines()
    assert "After=" not in _unit(root, "driftcheck-scheduled.service")
    verify = subprocess.run(["systemd-analyze", "verify", str(root / UNIT_DIR / "driftcheck-boot.service")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert verify.returncode == 0, verify.stderr
    assert cli("schedule", "remove", "--root", str(root)).returncode == 0
    assert _tree(root) == before


def test_a_unit_the_user_wrote_is_never_overwritten(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = tmp_path / "image"
    mine = root / UNIT_DIR / "driftcheck-scheduled.timer"
    mine.parent.mkdir(parents=True)
    mine.write_text("[Timer]\nOnCalendar=hourly\n", "utf-8")
    result = cli("schedule", "install", "--root", str(root))
    assert result.returncode == 2
    assert "was not written by driftcheck" in result.stderr
    assert mine.read_text("utf-8") == "[Timer]\nOnCalendar=hourly\n"
    assert cli("schedule", "remove", "--root", str(root)).returncode == 0
    assert mine.is_file()  # remove takes only what carries our marker


def test_reinstall_replaces_ours_and_drops_what_is_no_longer_asked(cli: Callable[..., CliResult],
                                                                   tmp_path: Path) -> None:
    root = tmp_path / "image"
    (root / "etc").mkdir(parents=True)  # the image already has /etc: remove must keep it
    assert cli("schedule", "install", "--at-boot", "--root", str(root)).returncode == 0
    again = cli("schedule", "install", "--every", "6h", "--bench", "quick", "--root", str(root))
    assert again.returncode == 0
    assert not (root / UNIT_DIR / "driftcheck-boot.service").exists()
    assert not (root / UNIT_DIR / "multi-user.target.wants").exists()
    assert "OnUnitActiveSec=6h" in _unit(root, "driftcheck-scheduled.timer")
    assert _exec_start(_unit(root, "driftcheck-scheduled.service"))[-2:] == ["--bench", "quick"]
    assert cli("schedule", "remove", "--root", str(root)).returncode == 0
    assert _tree(root) == ["etc"]


@without_systemd
def test_without_systemd_it_installs_a_cron_entry_and_says_so(cli: Callable[..., CliResult],
                                                              tmp_path: Path) -> None:
    cron_d = tmp_path / "cron.d"
    cron_d.mkdir()
    result = cli("schedule", "install", "--at-boot", "--every", "6h", "--cron-dir", str(cron_d))
    assert result.returncode == 0, result.stderr
    assert "systemd is not running here" in result.stderr and "cron entry" in result.stderr
    entry = cron_d / "driftcheck"
    assert stat.S_IMODE(entry.stat().st_mode) == 0o644
    lines = [line for line in entry.read_text("utf-8").splitlines() if line and not line.startswith("#")]
    assert lines[0] == "SHELL=/bin/sh"
    assert lines[1].startswith("@reboot root sleep 60 && ") and "--label boot" in lines[1]
    assert lines[2].startswith("17 */6 * * * root ") and "--label scheduled" in lines[2]
    status = cli("schedule", "status", "--cron-dir", str(cron_d))
    assert "installed: cron, system-wide" in status.stdout and "every 6h, and after every boot" in status.stdout
    assert cli("schedule", "remove", "--cron-dir", str(cron_d)).returncode == 0
    assert list(cron_d.iterdir()) == []


@without_systemd
@pytest.mark.slow  # spawns the CLI as cron would
def test_the_cron_command_takes_a_snapshot(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    cron_d = tmp_path / "cron.d"
    cron_d.mkdir()
    assert cli("schedule", "install", "--cron-dir", str(cron_d)).returncode == 0
    line = (cron_d / "driftcheck").read_text("utf-8").splitlines()[-1]
    command = line.split(" root ", 1)[1].replace("\\%", "%").replace(" >/dev/null", "")
    # As cron runs it: /bin/sh, with none of this test's environment but what the line sets.
    done = subprocess.run(["/bin/sh", "-c", command + " --probe env --probe python"], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    status = json.loads(cli("schedule", "status", "--cron-dir", str(cron_d), "--format", "json").stdout)
    assert status["last"]["scheduled"] is not None and status["last"]["boot"] is None


@without_systemd
def test_user_cron_keeps_the_users_own_entries(cli: Callable[..., CliResult], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "crontab.txt"
    table.write_text("MAILTO=me@example.org\n0 * * * * /home/me/backup.sh\n", "utf-8")
    # Stands in for crontab(1) with the same -l / - interface, on a file of this test.
    fake = tmp_path / "crontab"
    fake.write_text(f"#!/bin/sh\nif [ \"$1\" = -l ]; then cat {table}; else cat > {table}; fi\n", "utf-8")
    fake.chmod(0o755)
    monkeypatch.setenv("DRIFTCHECK_CRONTAB", str(fake))
    assert cli("schedule", "install", "--user", "--at-boot").returncode == 0
    text = table.read_text("utf-8")
    assert text.startswith("MAILTO=me@example.org\n0 * * * * /home/me/backup.sh\n# BEGIN driftcheck schedule\n")
    assert "@reboot sleep 60 && " in text and text.rstrip().endswith("# END driftcheck schedule")
    assert cli("schedule", "install", "--user").returncode == 0  # replaces, never duplicates
    assert table.read_text("utf-8").count("# BEGIN driftcheck schedule") == 1
    assert cli("schedule", "remove", "--user").returncode == 0
    assert table.read_text("utf-8") == "MAILTO=me@example.org\n0 * * * * /home/me/backup.sh\n"


def test_status_says_when_the_schedule_last_ran(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = tmp_path / "image"
    root.mkdir()
    assert cli("schedule", "install", "--at-boot", "--root", str(root)).returncode == 0
    assert "last `boot` snapshot: none yet" in cli("schedule", "status", "--root", str(root)).stdout
    recording = DATA / "hosts" / "debian12-vm-docker"
    assert cli("snapshot", "--replay", str(recording), "--label", "boot", "--probe", "env", "-q").returncode == 0
    status = json.loads(cli("schedule", "status", "--root", str(root), "--format", "json").stdout)
    assert status["last"]["boot"] is not None and status["last"]["scheduled"] is None
    assert "no driftcheck schedule installed" in cli("schedule", "status", "--root", str(tmp_path)).stdout


@pytest.mark.parametrize(("text", "seconds", "shown"), [
    ("1d", 86400, "1d"), ("6h", 21600, "6h"), ("90min", 5400, "90min"), ("1h30min", 5400, "90min"),
    ("1h 30m", 5400, "90min"), ("1w", 604800, "1w"), ("2 days", 172800, "2d"), ("61s", 61, "61s")])
def test_durations(text: str, seconds: int, shown: str) -> None:
    assert parse_duration(text) == seconds
    assert format_duration(seconds) == shown


@pytest.mark.parametrize("text", ["", "daily", "5s", "1x", "1d and more", "-1d"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(UsageError):
        parse_duration(text)


def test_cron_says_only_what_it_can() -> None:
    assert cron_schedule(1800) == "*/30 * * * *"
    assert cron_schedule(86400) == "17 3 * * *"
    with pytest.raises(UsageError, match="cron cannot run something every 7h"):
        cron_schedule(7 * 3600)


def test_bad_input_is_one_line(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    for args in (["--every", "soon"], ["--root", str(tmp_path / "missing")],
                 ["--python", str(tmp_path / "nope"), "--root", str(tmp_path)]):
        result = cli("schedule", "install", *args)
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert sys.executable  # the interpreter the units name


@pytest.mark.parametrize("where", ["DRIFTCHECK_HOME", "--python"])
def test_a_newline_never_reaches_a_unit_or_cron_file(cli: Callable[..., CliResult], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    root, cron_d = tmp_path / "root", tmp_path / "cron.d"
    (root / UNIT_DIR).mkdir(parents=True)
    cron_d.mkdir()
    injected = str(tmp_path) + "\nExecStartPre=/bin/touch " + str(tmp_path / "pwned")
    extra: list[str] = []
    if where == "DRIFTCHECK_HOME":
        monkeypatch.setenv("DRIFTCHECK_HOME", injected)
    else:
        python = tmp_path / "py\n* * * * * root touch pwned"
        python.write_text("#!/bin/sh\n")
        python.chmod(0o755)
        extra = ["--python", str(python)]
    for target in (["--root", str(root)], ["--cron-dir", str(cron_d)]):
        done = cli("schedule", "install", *target, *extra)
        assert done.returncode == 2 and "control character" in done.stderr
    assert not list((root / UNIT_DIR).iterdir()) and not list(cron_d.iterdir())


def test_an_absurd_interval_is_refused() -> None:
    with pytest.raises(UsageError, match="at most a year"):
        parse_duration("99999999999999w")
    assert parse_duration("52w") == 52 * 604800


def test_an_edited_unit_is_named_and_left_alone_by_remove_and_by_reinstall(cli: Callable[..., CliResult],
                                                                          tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / UNIT_DIR).mkdir(parents=True)
    assert cli("schedule", "install", "--root", str(root)).returncode == 0
    timer = root / UNIT_DIR / "driftcheck-scheduled.timer"
    timer.write_text(timer.read_text("utf-8").replace("AccuracySec=1min", "AccuracySec=1s"), "utf-8")
    again = cli("schedule", "install", "--every", "6h", "--root", str(root))
    assert again.returncode == 2 and "was edited since driftcheck wrote it" in again.stderr
    assert "AccuracySec=1s" in timer.read_text("utf-8")
    removed = cli("schedule", "remove", "--root", str(root))
    assert removed.returncode == 0 and f"{timer} was edited" in removed.stderr
    assert timer.exists() and "AccuracySec=1s" in timer.read_text("utf-8")
    assert not (root / UNIT_DIR / "driftcheck-scheduled.service").exists()  # the unedited one went


def test_a_users_own_link_at_the_enable_path_is_not_replaced(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = tmp_path / "root"
    wants = root / UNIT_DIR / "timers.target.wants"
    wants.mkdir(parents=True)
    (wants / "driftcheck-scheduled.timer").symlink_to("/etc/systemd/system/my-own.timer")
    done = cli("schedule", "install", "--root", str(root))
    assert done.returncode == 2 and "is not driftcheck's link" in done.stderr
    assert os.readlink(wants / "driftcheck-scheduled.timer") == "/etc/systemd/system/my-own.timer"


@needs_systemd_analyze
def test_with_a_textfile_dir_each_snapshot_unit_refreshes_the_prometheus_textfile(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root, textfiles = tmp_path / "image", tmp_path / "textfile"
    root.mkdir()
    textfiles.mkdir()
    result = cli("schedule", "install", "--at-boot", "--root", str(root), "--textfile-dir", str(textfiles))
    assert result.returncode == 0, result.stderr
    paths = [root / UNIT_DIR / name for name in UNITS]
    verify = subprocess.run(["systemd-analyze", "verify", *map(str, paths)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert verify.returncode == 0, verify.stderr
    for unit in ("driftcheck-boot.service", "driftcheck-scheduled.service"):
        line = next(line for line in _unit(root, unit).splitlines() if line.startswith("ExecStartPost="))
        # `-`: a drift (exit 1) is reported in the metrics, and never marks the snapshot's unit failed
        assert line.startswith("ExecStartPost=-")
        argv = shlex.split(line[len("ExecStartPost=-"):])
        assert argv[1:] == ["-m", "driftcheck", "export", "prometheus", "--textfile-dir", str(textfiles)]
    status = json.loads(cli("schedule", "status", "--root", str(root), "--format", "json").stdout)
    assert status["settings"]["textfile_dir"] == str(textfiles)
    assert "--textfile-dir" in cli("schedule", "status", "--root", str(root)).stdout
    assert cli("schedule", "remove", "--root", str(root)).returncode == 0


def test_a_missing_textfile_dir_is_refused_before_anything_is_written(cli: Callable[..., CliResult],
                                                                     tmp_path: Path) -> None:
    root = tmp_path / "image"
    root.mkdir()
    result = cli("schedule", "install", "--root", str(root), "--textfile-dir", str(tmp_path / "absent"))
    assert result.returncode == 2 and "no such directory" in result.stderr
    assert _tree(root) == []


@without_systemd
@pytest.mark.slow  # spawns the CLI as cron would
def test_the_cron_command_refreshes_the_textfile_after_the_snapshot(cli: Callable[..., CliResult],
                                                                    tmp_path: Path) -> None:
    cron_d, textfiles = tmp_path / "cron.d", tmp_path / "textfile"
    cron_d.mkdir()
    textfiles.mkdir()
    assert cli("schedule", "install", "--cron-dir", str(cron_d), "--textfile-dir", str(textfiles)).returncode == 0
    line = (cron_d / "driftcheck").read_text("utf-8").splitlines()[-1]
    command = line.split(" root ", 1)[1].replace("\\%", "%")
    done = subprocess.run(["/bin/sh", "-c", command], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    text = (textfiles / "driftcheck.prom").read_text("utf-8")
    # the scheduled snapshot was the first of this machine: the export checked against it
    assert 'driftcheck_check_drift{reference="' in text and "driftcheck_probe_success" in text
