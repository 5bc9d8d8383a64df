"""Every rule of rules.yaml, walked through its snapshot pair (both ways), renders a title that reads
as a sentence without internal field paths and a fix whose pins are real versions of A's packages."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import Explanation, explain
from driftcheck.analysis.explain.versions import parse_version
from driftcheck.analysis.rules import default_catalog
from driftcheck.snapshot.model import Snapshot, read_snapshot_file

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
CASES = sorted(p.name for p in PAIRS.iterdir() if (p / "expected.json").exists())
_PIP = re.compile(r"pip install((?: --?[a-z][a-z-]*)*) (\S+)")


@lru_cache(maxsize=1)
def _field_words() -> frozenset[str]:
    """The literal segments of the catalog's paths that are field names (`limit_w`, `nccl_version`)."""
    words = set()
    for rule in default_catalog().rules:
        for pattern in rule.patterns:
            for segment in pattern.segments:
                if segment.capture:
                    continue  # a captured segment is an identity (a module, a variable), not a field
                words.update(glob for glob in segment.globs if not re.search(r"[*?\[]", glob))
    return frozenset(words)


def path_defects(text: str) -> list[str]:
    """Field paths and field names of the catalog that a sentence should not show."""
    found = ["raw change path"] if "probes." in text else []
    fields = _field_words()
    for token in re.split(r"[\s(),:;]+", text):
        token = token.strip(".")
        if "/" in token or not token:
            continue
        dotted = token.split(".")
        field_path = len(dotted) > 1 and all(part in fields for part in dotted)
        field_name = "_" in token and token in fields and token.lower() == token
        if field_path or field_name:
            found.append(token)
    return found


def pin_defects(fix: str, reference: Snapshot) -> list[str]:
    """Every `pip install` must pin X==V with V a release of X that the reference has installed."""
    packages = (reference.probe_data("packages") or {}).get("packages") or {}
    versions = {str(record.get("name", key)).lower(): record.get("version") for key, record in packages.items()
                if isinstance(record, dict)}
    versions.update({key: record.get("version") for key, record in packages.items() if isinstance(record, dict)})
    out = []
    for _, requirement in _PIP.findall(fix):
        name, sep, version = requirement.rstrip(",;").partition("==")
        if not sep:
            out.append(f"unpinned: {requirement}")
        elif parse_version(version) is None:
            out.append(f"not a version: {requirement}")
        elif versions.get(name.lower()) != version:
            out.append(f"not the reference's {name}: {requirement} (it has {versions.get(name.lower())})")
    return out


def _cases() -> list[tuple[str, bool]]:
    return [(case, reverse) for case in CASES for reverse in (False, True)]


@pytest.mark.parametrize(("case", "reverse"), _cases())
def test_titles_and_fixes_of_every_rule(case: str, reverse: bool) -> None:
    a, b = (read_snapshot_file(PAIRS / case / name) for name in ("a.json", "b.json"))
    if reverse:
        a, b = b, a
    result = explain(diff_snapshots(a, b))
    shown: list[Explanation] = [*result.explanations, *result.notes]
    for e in shown:
        assert not path_defects(e.title), (e.rule, e.title, path_defects(e.title))
        assert not pin_defects(e.fix, a), (e.rule, e.fix, pin_defects(e.fix, a))
        for text in (e.title, e.fix):
            assert "{" not in text and "?" not in text.replace("?)", ""), (e.rule, text)
            assert text == " ".join(text.split()), (e.rule, text)


def test_every_rule_is_walked() -> None:
    walked = set()
    for case, reverse in _cases():
        a, b = (read_snapshot_file(PAIRS / case / name) for name in ("a.json", "b.json"))
        result = explain(diff_snapshots(*((b, a) if reverse else (a, b))))
        walked.update(rule for e in [*result.explanations, *result.notes] for rule in (e.rule, *e.merged))
    assert {rule.id for rule in default_catalog().rules if not rule.ignore} - walked == set()


@pytest.mark.parametrize(("text", "defects"), [
    ("NCCL library library.version 2.22.3 -> 2.25.1", ["library.version"]),
    ("torch built for cudnn_version 8.9.2 -> 9.1.0", ["cudnn_version"]),
    ("probes.gpu.data.driver_version: 1 -> 2", ["raw change path", "probes.gpu.data.driver_version"]),
    ("NCCL_P2P_DISABLE=1 set (unset on A)", []),
    ("new watched process sglang.launch_server", []),
])
def test_path_defects_finds_field_paths(text: str, defects: list[str]) -> None:
    assert path_defects(text) == defects


def test_pin_defects_finds_shas_and_foreign_versions() -> None:
    a = read_snapshot_file(PAIRS / "package-upgraded" / "a.json")
    assert pin_defects("pip install deepdiff==9.1.0", a) == []
    assert pin_defects("pip install torch==0982a4eee31c", a) == ["not a version: torch==0982a4eee31c"]
    assert pin_defects("pip install deepdiff==9.2.0", a)[0].startswith("not the reference's deepdiff")
    assert pin_defects("pip install --force-reinstall deepdiff", a) == ["unpinned: deepdiff"]
