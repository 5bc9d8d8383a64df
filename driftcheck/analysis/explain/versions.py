"""Comparing version strings: which release is newer, and whether two builds are one release."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

# packaging is imported by the first comparison of two versions: an explain whose changes hold none (an
# environment variable, a clock) does not pay for it.
if TYPE_CHECKING:
    from packaging.version import Version

# A git commit id used where a version belongs (a source build's `torch.version.git_version`). This module's
# patterns are text, compiled by `re` (and kept in its cache) when a version is first compared.
_GIT_SHA = r"^(?=[0-9]*[a-f])[0-9a-f]{7,40}$"


# Longer than any release string (PEP 440 versions of real packages are a few dozen characters).
_MAX_VERSION = 200


def parse_version(text: Any) -> Version | None:
    """`text` as a PEP 440 version, or None when it is not one (a git sha, a free-form string)."""
    if not isinstance(text, str) or len(text) > _MAX_VERSION or re.match(_GIT_SHA, text):
        return None
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except (InvalidVersion, ValueError):  # ValueError: a release number of thousands of digits
        return None


def version_order(before: Any, after: Any) -> int:
    """-1 when `after` is an older release than `before`, 1 when newer; 0 when the same release (a local
    build tag such as +cu128 is not a release) or not comparable."""
    vb, va = parse_version(before), parse_version(after)
    if vb is None or va is None:
        return 0
    from packaging.version import Version

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


# Local version labels whose wheels live on the PyTorch index rather than PyPI (2.7.0+cu128, 2.4.1+rocm6.1).
_WHEEL_INDEX = r"^(cu\d+|rocm[\d.]+|cpu|xpu)$"


def wheel_index(version: Any) -> str | None:
    """The extra index a local-version build is installed from (`+cu128`: the PyTorch cu128 index), or None."""
    parsed = parse_version(version)
    if parsed is None or not parsed.local or not re.match(_WHEEL_INDEX, parsed.local):
        return None
    return f"https://download.pytorch.org/whl/{parsed.local}"


def version_distance(before: Any, after: Any) -> float:
    """How big a version step is, for ordering causes of equal confidence: a major release 1.0, a
    minor 0.75, a micro 0.5, anything finer (post, local build) 0.3; 0 when not comparable."""
    # `after` is parsed only when `before` is a version: a fact added or removed (None on one side) never
    # needs packaging, and every ranked cause asks this to break ties.
    vb = parse_version(before)
    va = parse_version(after) if vb is not None else None
    if vb is None or va is None:
        return 0.0
    for index, weight in enumerate((1.0, 0.75, 0.5)):
        if _part(vb.release, index) != _part(va.release, index):
            return weight
    return 0.3 if vb != va else 0.0


def _part(release: tuple[int, ...], index: int) -> int:
    return release[index] if index < len(release) else 0
