"""The text of a file shipped inside a driftcheck package (a facts script, a YAML table), read through the loader
that imported the package.

`importlib.resources.files(package).joinpath(name).read_text()` gives the same text, but importing
importlib.resources (its readers bring zipfile and tempfile) cost ~8 ms of CPU of every snapshot, before the
target interpreter's run can start. A package's loader reads its own files: a file loader from the directory,
zipimport from the archive.
"""

from __future__ import annotations

import importlib
import os


def shipped_text(package: str, name: str) -> str:
    """The UTF-8 text of the file `name` in `package` (e.g. "driftcheck.probes.scripts", "dist_facts.py"), line
    ends read as a text file reads them (CRLF and CR as LF); OSError when the package ships no such file."""
    spec = importlib.import_module(package).__spec__
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    get_data = getattr(spec.loader, "get_data", None) if spec is not None else None
    if len(locations) != 1 or get_data is None:
        # A namespace package (several directories, no loader of its own): importlib.resources knows those.
        from importlib import resources

        return resources.files(package).joinpath(name).read_text("utf-8")
    text = get_data(os.path.join(locations[0], name)).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
