"""The YAML tables shipped inside the package (catalog, facts, rules, relevance), parsed.

Every `show` and `explain` parses some of them, so they are read with libyaml's parser (`CSafeLoader`)
wherever PyYAML was built with it (its wheels are): the pure-Python `SafeLoader` took most of those
commands' time. Both loaders construct with SafeConstructor, so the parsed tables are the same; without
libyaml the pure-Python loader is used, at its speed.

Even so, building the tables' objects cost ~40 ms of each `explain` (the rules grew). So a table is also kept,
once parsed, as JSON in the cache directory under the digest of its text: the next command reads the JSON
(several times faster) while the text is the same, and any change of the text names another file. A table
that JSON cannot hold exactly (a date, a non-string key) is never cached, and a cache that cannot be read or
written is simply not used.

What a command that finds its tables in the cache does not need is imported where it is needed: PyYAML (its
reader and resolver compile their regexes at import, ~10 ms) only to parse a text not cached yet, `tempfile`
only to write the cache, and `importlib.resources` (with its zip reader) only for a package not loaded from
files and directories, which the loader of the package itself reads (`get_data`, as `pkgutil.get_data` does).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
from typing import Any

from driftcheck.snapshot.home import cache_dir


def safe_loader() -> Any:
    """PyYAML's safe loader: libyaml's (`CSafeLoader`) where PyYAML was built with it, else the Python one."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml_text(text: str) -> object:
    """`text` parsed as `yaml.safe_load` parses it, with libyaml's parser where PyYAML has it."""
    import yaml

    return yaml.load(text, Loader=safe_loader())  # a safe loader, libyaml or Python: never arbitrary objects


def shipped_text(package: str, name: str) -> str:
    """The text of the file `name` shipped in `package` (a package already imported: the caller's own)."""
    module = importlib.import_module(package)
    get_data = getattr(module.__spec__.loader, "get_data", None) if module.__spec__ else None
    if module.__file__ is not None and get_data is not None:
        # Read as `resources.files(package).joinpath(name).read_text` reads it: UTF-8, universal newlines.
        data: bytes = get_data(os.path.join(os.path.dirname(module.__file__), name))
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    from importlib import resources

    return resources.files(package).joinpath(name).read_text("utf-8")


def shipped_yaml(package: str, name: str) -> object:
    """The YAML file `name` shipped in `package` (e.g. "driftcheck.analysis", "rules.yaml"), parsed (from the
    cache of its parsed form when the same text was parsed before)."""
    text = shipped_text(package, name)
    try:
        cached = cache_dir() / "tables" / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:24]}.json"
    except RuntimeError:  # no home directory to be found (no $HOME, a uid with no passwd entry): no cache
        return parse_yaml_text(text)
    try:
        return json.loads(cached.read_text("utf-8"))
    except (OSError, ValueError):
        pass
    parsed = parse_yaml_text(text)
    _keep(cached, parsed)
    return parsed


def _keep(path: os.PathLike[str], parsed: object) -> None:
    """Write `parsed` as JSON to `path` whole or not at all, only when JSON gives it back exactly."""
    try:
        document = json.dumps(parsed, ensure_ascii=False)
        if json.loads(document) != parsed:
            return
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        import tempfile

        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".table-")
    except (OSError, TypeError, ValueError):
        return  # no cache: the next command parses the text again
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(document)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
