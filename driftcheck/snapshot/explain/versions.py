"""Comparing version strings: which release is newer, and whether two builds are one release."""

from __future__ import annotations

import re
from typing import Any

from packaging.version import InvalidVersion, Version

# A git commit id used where a version belongs (a source build's `torch.version.git_version`).
_GIT_SHA = re.compile(r"^(?=[0-9]*[a-f])[0-9a-f]{7,40}$")


def parse_version(text: Any) -> Version | None:
    """`text` as a PEP 440 version, or None when it is not one (a git sha, a free-form string)."""
    if not isinstance(text, str) or _GIT_SHA.match(text):
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def version_order(before: Any, after: Any) -> int:
    """-1 when `after` is an older release than `before`, 1 when newer; 0 when the same release (a local
    build tag such as +cu128 is not a release) or not comparable."""
    vb, va = parse_version(before), parse_version(after)
    if vb is None or va is None:
        return 0
    pb, pa = Version(vb.public), Version(va.public)
    return (pa > pb) - (pa < pb)


def same_release(before: Any, after: Any) -> bool:
    """Whether two different version strings name the same release (2.7.0+cu128 and 2.7.0+cu126)."""
    if before == after:
        return False
    vb, va = parse_version(before), parse_version(after)
    return vb is not None and va is not None and vb.public == va.public


def is_pinnable(version: Any) -> bool:
    """Whether `pip install X==version` names a release pip can find (not a git sha, not free text)."""
    return parse_version(version) is not None
