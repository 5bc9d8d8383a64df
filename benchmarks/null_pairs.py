"""A null corpus of readings-only and not-taken pairs, written from the snapshot pair base.

Every pair is tests/data/pairs/base.json (its sources in that folder's README) on both sides, with only
what must never be a cause edited:

- readings only: each fact the facts table classes `reading` moved up (x2 + 7) and down (halved), one pair
  per fact and direction, plus one pair with every reading moved;
- records of the taking: the label, the boot id, the shell's variables, the hash cache's counters;
- not taken: torch's runtime facts on one side only (`--deep`), probes taken on one side only.

    python benchmarks/null_pairs.py DIR     # writes DIR/<case>/a.json, b.json

`explain_accuracy.py` writes them to a temporary folder and counts the causes explain ranks at or above
the noise floor on them: every one is a false cause.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "data" / "pairs" / "base.json"

# What torch reports only when it is imported (`--deep`): left unknown by a snapshot without it.
_RUNTIME = ("cuda_available", "device_count", "devices", "arch_list", "backends", "config")


def _leaves(value: Any, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*prefix, str(key)))
    else:
        yield prefix, value


def _moved(value: Any, up: bool) -> Any:
    """A reading moved one way: numbers doubled plus 7 or halved, text and flags changed."""
    if isinstance(value, bool) or value is None:
        return 1 if up else 0
    if isinstance(value, int):
        return value * 2 + 7 if up else value // 2
    if isinstance(value, float):
        return value * 2 + 7 if up else value / 2
    if isinstance(value, str):
        return value + "-moved"
    return [*value, "moved"] if isinstance(value, list) else value


def _set(document: dict[str, Any], parts: tuple[str, ...], value: Any) -> None:
    target = document
    for key in parts[:-1]:
        target = target.setdefault(key, {})
    target[parts[-1]] = value


def _readings(base: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    from driftcheck.snapshot.facts import fact_table

    table = fact_table()
    paths = [(parts, value) for parts, value in _leaves(base["probes"], ("probes",)) if table.reading(parts)]
    every = copy.deepcopy(base)
    for parts, value in paths:
        for up in (True, False):
            after = copy.deepcopy(base)
            _set(after, parts, _moved(value, up))
            yield f"reading-{'up' if up else 'down'}-{'.'.join(parts[1:])}", base, after
        _set(every, parts, _moved(value, True))
    yield "readings-all-moved", base, every


def _records(base: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    before, after = copy.deepcopy(base), copy.deepcopy(base)
    before["label"], after["label"] = "before", "after"
    yield "record-label", before, after
    after = copy.deepcopy(base)
    after["probes"]["system"]["data"]["boot_id"] = "0b7e9c52-41d6-4a8e-b2f3-6c1d0e9a7f48"
    yield "record-boot-id", base, after
    before, after = copy.deepcopy(base), copy.deepcopy(base)
    for name, (old, new) in {"_": ("/usr/bin/python3", "/opt/venv/bin/python"), "PWD": ("/root", "/tmp"),
                             "SHLVL": ("1", "2")}.items():
        before["probes"]["env"]["data"]["vars"][name] = old
        after["probes"]["env"]["data"]["vars"][name] = new
    yield "record-shell", before, after
    before, after = copy.deepcopy(base), copy.deepcopy(base)
    before["probes"]["kernels"]["data"]["hash_cache"] = {"hits": 0, "hashed": 13, "hashed_bytes": 468956714}
    after["probes"]["kernels"]["data"]["hash_cache"] = {"hits": 13, "hashed": 0, "hashed_bytes": 0}
    yield "record-hash-cache", before, after


def _not_taken(base: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    shallow = copy.deepcopy(base)
    torch = shallow["probes"]["torch"]["data"]
    torch["deep"] = False
    torch.update(dict.fromkeys(_RUNTIME))
    deep = copy.deepcopy(base)
    deep["probes"]["torch"]["data"]["deep"] = True
    yield "not-taken-deep-on-b", shallow, deep
    yield "not-taken-deep-on-a", deep, shallow
    few = copy.deepcopy(base)
    few["probes"] = {name: outcome for name, outcome in base["probes"].items() if name in ("env", "python")}
    yield "not-taken-probes-on-a", base, few
    yield "not-taken-probes-on-b", few, base


def write_pairs(folder: Path) -> list[Path]:
    """Write every pair under `folder`; returns their folders."""
    base = json.loads(BASE.read_text("utf-8"))
    written = []
    for case, before, after in [*_readings(base), *_records(base), *_not_taken(base)]:
        target = folder / case.replace("/", "_")
        target.mkdir(parents=True, exist_ok=True)
        (target / "a.json").write_text(json.dumps(before), "utf-8")
        (target / "b.json").write_text(json.dumps(after), "utf-8")
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python benchmarks/null_pairs.py DIR\n")
        return 2
    sys.path.insert(0, str(ROOT))
    print(f"{len(write_pairs(Path(argv[0])))} pairs written to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
