"""A key made on first use where it cannot be written is one line naming why, and leaves nothing behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from driftcheck.errors import KeyFileError
from driftcheck.snapshot.keys import load_redaction_secret


def test_a_full_disk_on_first_use_is_one_line_naming_the_cause(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int) -> None:
            self.handle = real_fdopen(fd, "wb")

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(fd))
    with pytest.raises(KeyFileError, match="cannot create .*redaction.secret: No space left on device"):
        load_redaction_secret(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == []  # no half-written temp file left
