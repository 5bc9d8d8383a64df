"""The YAML tables shipped inside the package (catalog, facts, rules, relevance), parsed.

Every `show` and `explain` parses some of them, so they are read with libyaml's parser (`CSafeLoader`)
wherever PyYAML was built with it (its wheels are): the pure-Python `SafeLoader` took most of those
commands' time. Both loaders construct with SafeConstructor, so the parsed tables are the same; without
libyaml the pure-Python loader is used, at its speed.
"""

from __future__ import annotations

from importlib import resources

import yaml

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml_text(text: str) -> object:
    """`text` parsed as `yaml.safe_load` parses it, with libyaml's parser where PyYAML has it."""
    return yaml.load(text, Loader=_SAFE_LOADER)  # a safe loader, libyaml or Python: never arbitrary objects


def shipped_yaml(package: str, name: str) -> object:
    """The YAML file `name` shipped in `package` (e.g. "driftcheck.analysis", "rules.yaml"), parsed."""
    return parse_yaml_text(resources.files(package).joinpath(name).read_text("utf-8"))
