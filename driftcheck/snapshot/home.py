"""Where driftcheck keeps its key, secret and store."""

from __future__ import annotations

import os
from pathlib import Path

from driftcheck.errors import UsageError

HOME_VARIABLE = "DRIFTCHECK_HOME"


def config_dir() -> Path:
    """The directory for the signing key and the redaction secret (0700 when created)."""
    override = os.environ.get(HOME_VARIABLE)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "driftcheck"


def data_dir() -> Path:
    """The directory for the snapshot store."""
    override = os.environ.get(HOME_VARIABLE)
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "driftcheck"


def cache_dir() -> Path:
    """The directory for what driftcheck can always make again (parsed tables): losing it costs time only."""
    override = os.environ.get(HOME_VARIABLE)
    if override:
        return Path(override) / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "driftcheck"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) readable by the owner only, if it does not exist yet. UsageError (one line)
    when it cannot be a directory: a file in its place (DRIFTCHECK_HOME naming a file), a name too long, no
    permission."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        home = os.environ.get(HOME_VARIABLE)
        where = f" (${HOME_VARIABLE})" if home and str(path).startswith(home) else ""
        raise UsageError(f"{path}{where} cannot be driftcheck's directory: {exc.strerror or exc}") from None
    return path
