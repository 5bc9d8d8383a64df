"""The interpreter a command runs, when its program is a Python: the one whose packages a run's snapshots describe.

Its own module, stdlib only: `driftcheck.api.run` asks it before the modules of a run are imported, to start that
interpreter's facts run early (hosts/warm.py).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence

_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")


def command_python(argv: Sequence[str]) -> str | None:
    """The interpreter the command runs, when its program is a Python (`python3`, `/venv/bin/python`)."""
    program = shutil.which(argv[0]) if argv else None
    if program and _PYTHON_NAME.match(os.path.basename(program)):
        return program
    return None
