"""`conda list` (and `mamba list`): the packages of one conda environment, with their builds and channels.

conda prints `# packages in environment at <prefix>:`, a `#` line, a `# Name Version Build Channel` header
(conda 4.4 and later), then one row per package: name, version, build string, and the channel when it is
not the default one (`pypi` for what pip installed; conda 4.3 wrote `<pip>` in the build column instead).
Users often paste a filtered list (`conda list | grep torch`): rows without the header. Rows fill the
`packages` probe's `conda` map (version, build, channel); pip's rows also name a Python distribution.
The list is complete only with its header and every line read: a grep or a paste cut mid-table gives
its rows but never says that a package is absent.
"""

from __future__ import annotations

import re

from driftcheck.reports import facts
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.paste import Paste

_ENVIRONMENT = re.compile(r"^\s*#\s*packages in environment at\s+(?P<prefix>.+?):?\s*$")
_HEADER = re.compile(r"^\s*#(\s*Name\s+Version\s+Build(\s+Channel)?)?\s*$")
_ROW = re.compile(r"^\s*(?P<name>[A-Za-z0-9_][\w.+-]*)\s+(?P<version>\d[^\s]*)\s+(?P<build><pip>|<develop>|[\w.+!-]+)"
                  r"(?:\s+(?P<channel>[\w./:<>-]+))?\s*$")
# The command a user copied along with its output (`❯ conda list | grep pytorch`, `(env) $ conda list`).
_COMMAND = re.compile(r"^.*\b(?:conda|mamba|micromamba) list\b.*$")
# A row the paste ends inside: a name, maybe a version, and nothing else.
_ROW_START = re.compile(r"^\s*[A-Za-z0-9_][\w.+-]*(\s+\S+)?\s*$")
CONDA = "probes.packages.data.conda"


def detect(text: str) -> bool:
    """conda's `# packages in environment at` line, or (a filtered list) lines that are mostly 3- or 4-column
    conda rows."""
    lines = [line for line in text.replace("\r", "").splitlines() if line.strip()]
    if any(_ENVIRONMENT.match(line) for line in lines[:20]):
        return True
    rows = sum(1 for line in lines if _ROW.match(line))
    return rows >= 3 and rows >= 0.8 * len(lines) - 3


def starts(lines: list[str], i: int) -> bool:
    """conda's `# packages in environment at` line."""
    return bool(_ENVIRONMENT.match(lines[i]))


def parse(text: str) -> Parsed:
    """The `packages` probe's conda map (and the pip-installed rows as distributions) of a pasted conda list."""
    paste = Paste.of(text)
    prefix: str | None = None
    filtered = False
    conda: list[dict[str, str | None]] = []
    pip: list[tuple[str, str]] = []
    for i, line in enumerate(paste.lines):
        if i in paste.claimed or not line.strip():
            continue
        environment = _ENVIRONMENT.match(line)
        row = _ROW.match(line)
        if environment:
            prefix = environment["prefix"].strip()
        elif _HEADER.match(line):
            pass
        elif row:
            build, channel = row["build"], row["channel"]
            conda.append({"name": row["name"], "version": row["version"], "build": build, "channel": channel})
            if build == "<pip>" or channel == "pypi":
                pip.append((row["name"], row["version"]))
        elif _COMMAND.match(line):
            filtered = filtered or "|" in line or "grep" in line
            paste.noise.append(i)
        else:
            continue
        paste.claim(i)
    if not conda:
        raise ValueError("a conda list with no package row")
    unclaimed = paste.unclaimed()
    whole = prefix is not None and not filtered and not unclaimed
    last = next((line for i, line in reversed(list(enumerate(paste.lines))) if line.strip() and i not in paste.noise),
                "")
    cut = [CONDA] if last in unclaimed and _ROW_START.match(last) else []
    fields = {"environment": prefix} if prefix else {}
    return Parsed(probes={"packages": facts.packages_data(pip, conda)},
                  variant="conda list" if not filtered and prefix else "conda list (filtered)",
                  fields=fields, unclaimed=unclaimed, noise=paste.noise_lines(), complete=[CONDA] if whole else [],
                  cut=cut)


FORMAT = Format("conda-list", "conda list", "conda", detect, parse, starts,
                start_hint=r"\s*#\s*packages in environment at")
