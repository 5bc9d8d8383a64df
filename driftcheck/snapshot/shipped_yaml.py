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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os

from driftcheck.snapshot.home import cache_dir
from driftcheck.snapshot.shipped import shipped_text


def _safe_loader() -> type:
    """libyaml's safe loader where PyYAML was built with it, else PyYAML's own.

    PyYAML is imported here, on first use: a table read from its cached JSON needs no YAML parser, and importing
    PyYAML took ~10 ms of every command that reads a table.
    """
    import yaml

    loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


def parse_yaml_text(text: str) -> object:
    """`text` parsed as `yaml.safe_load` parses it, with libyaml's parser where PyYAML has it."""
    import yaml

    return yaml.load(text, Loader=_safe_loader())  # a safe loader, libyaml or Python: never arbitrary objects


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
    import tempfile  # here: only a table parsed anew is written, and tempfile brings random and shutil

    try:
        document = json.dumps(parsed, ensure_ascii=False)
        if json.loads(document) != parsed:
            return
        folder = os.path.dirname(path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
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
