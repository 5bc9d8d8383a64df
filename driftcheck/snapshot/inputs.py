"""Reading what a user hands driftcheck (a snapshot file, a pasted report, a hosts file): bounded and safe.

Only a regular file is read (a FIFO would block forever, `/dev/zero` never ends), opened without blocking,
and never more than a stated size: a snapshot of a 600-package, 8-GPU server is a few MB, so `MAX_BYTES`
leaves two orders of magnitude of room while keeping a wrong path from eating the machine's memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_BYTES = 256 * 1024 * 1024


class InputError(ValueError):
    """A path that is not a readable regular file of acceptable size; the message is one line."""


def read_input(path: Path, what: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file `path`; InputError (one line, naming `what`) for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise InputError(f"is a directory, not {what}") from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"is a directory, not {what}")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"is not a regular file ({_kind(info.st_mode)}), not {what}")
        if info.st_size > limit:
            raise InputError(f"is {info.st_size / 2**20:.0f} MiB, larger than {what} can be "
                             f"({limit / 2**20:.0f} MiB at most)")
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:  # a file that grew while being read
                raise InputError(f"grew past {limit / 2**20:.0f} MiB while being read, larger than {what} can be")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"
