"""Read-only commands work on a store that cannot be written (read-only file or file system, full disk); a write
to it fails with one line naming the cause."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from driftcheck.store import database
from driftcheck.store.database import mount_point, write_failure
from tests.conftest import CliResult

READS = (("log",), ("log", "--format", "json"), ("show", "@latest"), ("show", "@prev", "--full"),
         ("diff", "@prev", "@latest"), ("explain", "@prev", "@latest"), ("runs",), ("runs", "1"),
         ("explain", "run:@latest", "run:@latest:after"))


def _fill(cli: Callable[..., CliResult]) -> None:
    assert cli("snapshot", "--probe", "system", "-q").returncode == 0
    assert cli("run", "-q", "--probe", "system", "--", sys.executable, "-c", "pass").returncode == 0


def _reads_work(cli: Callable[..., CliResult]) -> None:
    for args in READS:
        done = cli(*args)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert done.stdout and "Traceback" not in done.stderr, (args, done.stderr)


def _one_line_error(done: CliResult, cause: str) -> None:
    assert done.returncode == 2 or done.returncode == 1, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("driftcheck: error: ") and cause in lines[0], done.stderr


@pytest.fixture
def not_writable(driftcheck_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store and its directory read as not writable by this user (root ignores permission bits, so
    chmod would prove nothing here): what `os.access` says of a 0444 file in a 0555 directory."""
    real_access = os.access

    def access(path: str | os.PathLike[str], mode: int, **kwargs: object) -> bool:
        if mode & os.W_OK and Path(path).resolve().is_relative_to(driftcheck_home.resolve()):
            return False
        return real_access(path, mode)

    monkeypatch.setattr(database.os, "access", access)


def test_read_commands_work_on_a_store_this_user_cannot_write(cli: Callable[..., CliResult],
                                                              driftcheck_home: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(cli)
    before = (driftcheck_home / "snapshots.db").read_bytes()
    monkeypatch.setattr(database, "writable", lambda path: False)
    opened: list[str] = []
    real_connect = sqlite3.connect

    def connect(target: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        opened.append(str(target))
        return real_connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(database.sqlite3, "connect", connect)
    _reads_work(cli)
    assert opened and all("mode=ro" in target for target in opened)  # never opened for writing
    _one_line_error(cli("snapshot", "--probe", "system"), "read-only")
    assert (driftcheck_home / "snapshots.db").read_bytes() == before


def test_a_store_of_0444_in_a_0555_directory_is_opened_read_only(cli: Callable[..., CliResult],
                                                                 driftcheck_home: Path,
                                                                 request: pytest.FixtureRequest) -> None:
    _fill(cli)
    request.getfixturevalue("not_writable")
    assert database.writable(driftcheck_home / "snapshots.db") is False
    _reads_work(cli)
    _one_line_error(cli("snapshot", "--probe", "system"), "read-only")


def test_an_older_store_without_the_newer_tables_reads_when_read_only(cli: Callable[..., CliResult],
                                                                      driftcheck_home: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(cli)
    with sqlite3.connect(driftcheck_home / "snapshots.db") as db:
        db.execute("DROP TABLE pins")
    monkeypatch.setattr(database, "writable", lambda path: False)
    assert cli("gc", "--keep-last", "1", "--dry-run").returncode == 0
    _reads_work(cli)


def test_a_fresh_home_that_cannot_be_written_reads_as_empty(cli: Callable[..., CliResult], driftcheck_home: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database, "writable", lambda path: False)
    assert "no snapshots yet" in cli("log").stdout
    assert "no runs recorded yet" in cli("runs").stdout
    assert not (driftcheck_home / "snapshots.db").exists()


@pytest.mark.parametrize(("code", "cause"), [(errno.ENOSPC, "no space left on "), (errno.EDQUOT, "no space left on "),
                                             (errno.EROFS, "read-only file system at "),
                                             (errno.EACCES, "permission denied"), (errno.EPERM, "permission denied")])
def test_a_write_error_names_its_cause(tmp_path: Path, code: int, cause: str) -> None:
    target = tmp_path / "store" / "snapshots.db"
    said = write_failure(OSError(code, os.strerror(code)), target)
    assert said is not None and said.startswith(cause)
    if code == errno.ENOSPC:
        assert str(mount_point(target)) in said
    assert write_failure(OSError(errno.ENOENT, "gone"), target) is None


def test_a_full_disk_while_storing_is_one_line(cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's own "database or disk is full", as a write into a full file system raises it."""
    _fill(cli)
    from driftcheck.store.snapshots import Store

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "_encode", full)
    _one_line_error(cli("snapshot", "--probe", "system"), "no space left on ")


# A real read-only file system and a real full one, where this user may mount (root in a container).
def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True, check=False).returncode == 0


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[list[Path]]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a file system needs root")
    points: list[Path] = []
    yield points
    for point in reversed(points):
        subprocess.run(["umount", str(point)], capture_output=True, check=False)


def test_on_a_read_only_file_system(cli: Callable[..., CliResult], driftcheck_home: Path, tmp_path: Path,
                                    mounted: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(cli)
    view = tmp_path / "ro"
    view.mkdir()
    if not _mount("--bind", str(driftcheck_home), str(view)):
        pytest.skip("cannot bind-mount here")
    mounted.append(view)
    if not _mount("-o", "remount,ro,bind", str(view)):
        pytest.skip("cannot remount read-only here")
    monkeypatch.setenv("DRIFTCHECK_HOME", str(view))
    _reads_work(cli)
    _one_line_error(cli("snapshot", "--probe", "system"), f"read-only file system at {view}")
    _one_line_error(cli("gc", "--keep-last", "0"), f"read-only file system at {view}")


def test_on_a_full_file_system(cli: Callable[..., CliResult], tmp_path: Path, mounted: list[Path],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=400k", "tmpfs", str(disk)):
        pytest.skip("cannot mount a tmpfs here")
    mounted.append(disk)
    monkeypatch.setenv("DRIFTCHECK_HOME", str(disk / "home"))
    _fill(cli)
    with open(disk / "filler", "wb", buffering=0) as filler:  # every block left
        try:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    _reads_work(cli)
    _one_line_error(cli("snapshot", "--probe", "system"), f"no space left on {disk}")


def test_the_hash_cache_of_a_store_that_cannot_be_written_is_skipped(cli: Callable[..., CliResult],
                                                                      driftcheck_home: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels probe's cache only saves time: a read-only store costs a re-hash, never the snapshot."""
    from driftcheck.store.hashcache import CachedFile, FileIdentity, HashCache

    _fill(cli)
    monkeypatch.setattr(database, "writable", lambda path: False)
    cache = HashCache()
    assert cache.remember("vm", [("/lib/x.so", CachedFile(FileIdentity(1, 2, 3), "ab" * 32))]) == 0
    assert cache.lookup("vm") == {}
