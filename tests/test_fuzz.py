"""Every command that reads user input, over generated malformed inputs: never a traceback, never a hang.

Hypothesis mutates real snapshots (tests/data/pairs: truncation, byte flips, wrong-typed values deep inside
probe data, huge numbers, deep nesting, lone surrogates), real pasted reports (tests/data/reports), and
generates references (`@N`, `run:ID`, `baseline:NAME`, id prefixes) and option values. Each is run through
the command line in-process; the exit code must be 0, 1 or 2, stderr at most a few lines with no traceback
nor "internal error" (a bug of ours), and each example must end within the deadline.

The example counts (`EXAMPLES`) add up to over 1,000 inputs; the whole file takes about 25 s on 2 cores.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftcheck.errors import DriftcheckError
from driftcheck.remote.targets import fleet_hosts
from tests.conftest import CliResult

DATA = Path(__file__).resolve().parent / "data"
PAIRS = sorted(p / "a.json" for p in (DATA / "pairs").iterdir() if (p / "a.json").is_file())
REPORTS = sorted(p for p in (DATA / "reports").rglob("*") if p.is_file() and p.suffix in (".txt", ".json", ".csv")
                 and p.stat().st_size < 200_000)
SNAPSHOT_TEXTS = [p.read_bytes() for p in PAIRS[:40]]
REPORT_TEXTS = [p.read_bytes() for p in REPORTS]

# Examples per test: 6 snapshot readers x 150 + reports 150 (each read twice) + references 150 + options 100:
# 1,300 inputs, 1,450 command runs.
EXAMPLES = {"snapshot": 150, "report": 150, "reference": 150, "options": 100}
COMMON = settings(deadline=timedelta(seconds=10), derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                         HealthCheck.data_too_large])


def _assert_clean(result: CliResult, argv: list[str]) -> None:
    assert result.returncode in (0, 1, 2), (argv, result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, (argv, result.stderr[-2000:])
    assert "internal error" not in result.stderr, (argv, result.stderr[-2000:])
    assert len(result.stderr.strip().splitlines()) <= 5, (argv, result.stderr[-2000:])


# --- Mutations of a JSON document: each walks to a random place and breaks it in one way. ---

ODD_VALUES: list[Any] = [None, True, False, 0, -1, 10**30, -(10**400), 1e308, 1.5, "", "x" * 300, "\ud800",
                         "\x00", "1." + "9" * 5000, [], [1, "a", None], {}, {"": None}, {"status": "ok"},
                         [[[[[]]]]], "ok", 3.0]


def _odd(rng: random.Random) -> Any:
    """One of ODD_VALUES, a fresh copy (a shared list put in two places could end up inside itself)."""
    return copy.deepcopy(rng.choice(ODD_VALUES))


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    places = [path]
    if len(path) > 12:  # inside a nesting an earlier mutation built: deep enough
        return places
    if isinstance(value, dict):
        for key, item in value.items():
            places.extend(_places(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value[:20]):
            places.extend(_places(item, (*path, index)))
    return places


def _set(document: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return document


def _nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def mutate_document(document: Any, rng: random.Random) -> Any:
    """`document` with one place changed: a wrong-typed value, a huge number, deep nesting, a key removed."""
    places = _places(document)
    # Prefer places deep inside probe data, where only the top level used to be checked.
    deep = [p for p in places if len(p) >= 3 and p[0] == "probes"] or places
    path = rng.choice(deep if rng.random() < 0.8 else places)
    kind = rng.randrange(5)
    if kind == 0:
        return _set(document, path, _odd(rng))
    if kind == 1:
        return _set(document, path, _nested(rng.choice((10, 63, 70, 200))))
    if kind == 2 and path:
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict):
            del parent[path[-1]]
            return document
    if kind == 3:
        old = document
        for step in path:
            old = old[step]
        swapped = {dict: [], list: {}, str: 7, int: "7", float: [0.5], bool: "true"}.get(type(old), "x")
        return _set(document, path, swapped)
    return _set(document, path, {"status": "ok", "data": _odd(rng), "error": _odd(rng)})


def _encode(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")


def mutate_bytes(raw: bytes, rng: random.Random) -> bytes:
    """`raw` truncated, with flipped bytes, or with a raw number or string swapped in the text."""
    kind = rng.randrange(4)
    if kind == 0:
        return raw[:rng.randrange(len(raw) + 1)]
    if kind == 1:
        data = bytearray(raw)
        for _ in range(rng.randrange(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if kind == 2:
        at = rng.randrange(len(raw))
        return raw[:at] + rng.choice([b"1e400", b"NaN", b"-Infinity", b"9" * 5000, b'"\\ud800"', b"[" * 950,
                                      b'"\xff\xfe"', b"\x00"]) + raw[at:]
    return raw.replace(b"\n", b"\r\n" if rng.random() < 0.5 else b"\n" * 1000)


@st.composite
def malformed_snapshots(draw: st.DrawFn) -> bytes:
    raw = draw(st.sampled_from(SNAPSHOT_TEXTS))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if rng.random() < 0.75:
        document = json.loads(raw)
        for _ in range(rng.randrange(1, 4)):
            document = mutate_document(document, rng)
        return _encode(document)
    return mutate_bytes(raw, rng)


READERS: dict[str, Callable[[str, str], list[str]]] = {
    "show": lambda bad, good: ["show", bad],
    "show --full": lambda bad, good: ["show", "--full", bad],
    "diff": lambda bad, good: ["diff", good, bad, "--format", "json"],
    "explain": lambda bad, good: ["explain", bad, good],
    "verify": lambda bad, good: ["verify", bad],
    "check --against": lambda bad, good: ["check", "--against", bad, "--probe", "env", "--no-store"],
}


@pytest.mark.parametrize("reader", list(READERS))
def test_malformed_snapshots(cli: Callable[..., CliResult], tmp_path: Path, reader: str) -> None:
    good = str(PAIRS[0])
    bad = tmp_path / "bad.json"

    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["snapshot"])
    @given(malformed_snapshots())
    def run(data: bytes) -> None:
        calls.append(None)
        bad.write_bytes(data)
        argv = READERS[reader](str(bad), good)
        _assert_clean(cli(*argv), argv)

    run()
    assert len(calls) >= EXAMPLES["snapshot"]


@st.composite
def malformed_reports(draw: st.DrawFn) -> bytes:
    raw = draw(st.sampled_from(REPORT_TEXTS))
    rng = random.Random(draw(st.integers(0, 2**32)))
    if rng.random() < 0.2 and raw.lstrip().startswith(b"{"):
        return _encode(mutate_document(json.loads(raw), rng))
    lines = raw.split(b"\n")
    for _ in range(rng.randrange(1, 5)):
        at = rng.randrange(len(lines))
        lines[at] = mutate_bytes(lines[at] or b" ", rng) if rng.random() < 0.6 else \
            lines[at] + rng.choice([b" 99999999999999999999999999", b" " + b"9" * 5000, b": ", b"|", b",,,,",
                                    b" 1e400 W", b" \xff", b"\t", b"GPU0\tX\tNV18", b"==", b"-" * 80])
    return b"\n".join(lines)


def test_malformed_reports(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["report"])
    @given(malformed_reports(), st.sampled_from(["report.txt", "report.csv", "report.json"]))
    def run(data: bytes, name: str) -> None:
        calls.append(None)
        path = tmp_path / name
        path.write_bytes(data)
        for argv in (["import", str(path), "--no-store", "-o", "-"], ["show", str(path)]):
            _assert_clean(cli(*argv), argv)
        path.unlink()

    run()
    assert len(calls) >= EXAMPLES["report"]


NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
REFERENCES = st.one_of(
    st.builds(lambda n: f"@{n}", st.integers(-5, 10**40)),
    st.builds(lambda s: "@" + s, NAMES),
    st.builds(lambda s: "run:" + s, NAMES),
    st.builds(lambda n: f"run:@{n}", st.integers(0, 10**30)),
    st.builds(lambda s: "baseline:" + s, NAMES),
    st.builds(lambda s: s + ":after", st.sampled_from(["run:@latest", "run:@prev", "run:abc", "run:"])),
    st.text(alphabet="0123456789abcdefABCDEF", max_size=70),
    st.builds(lambda n: "a" * n, st.sampled_from([255, 256, 4096, 4097, 10_000])),
    st.sampled_from(["@latest", "@prev", "@boot", "@before-boot", "-", "/", ".", "..", "/dev/zero", "/dev/null",
                     "/proc/self/mem", "/etc", "x.json", "x.yaml"]),
    NAMES,
)
REFERENCE_COMMANDS: list[Callable[[str], list[str]]] = [
    lambda r: ["show", r], lambda r: ["verify", r], lambda r: ["diff", r, "@latest"],
    lambda r: ["explain", "@latest", r], lambda r: ["check", "--against", r, "--probe", "env", "--no-store"],
    lambda r: ["baseline", "save", "n1", r], lambda r: ["report", r, "-o", "/nonexistent/dir"],
]


def test_references(cli: Callable[..., CliResult]) -> None:
    assert cli("snapshot", "--probe", "env", "-q").returncode == 0
    assert cli("snapshot", "--probe", "env", "-q").returncode == 0

    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["reference"])
    @given(REFERENCES, st.sampled_from(REFERENCE_COMMANDS))
    def run(reference: str, command: Callable[[str], list[str]]) -> None:
        calls.append(None)
        if reference.startswith("-"):
            reference = "./" + reference
        argv = command(reference)
        _assert_clean(cli(*argv), argv)

    run()
    assert len(calls) >= EXAMPLES["reference"]


NUMBERS = st.one_of(st.integers(-10**30, 10**30).map(str), st.floats(allow_nan=True).map(str),
                    st.sampled_from(["nan", "inf", "-inf", "1e400", "9" * 5000, "0x10", "", " ", "1_000", "½"]))
OPTION_COMMANDS: list[Callable[[str], list[str]]] = [
    lambda v: ["log", "-n", v], lambda v: ["runs", "-n", v], lambda v: ["log", "--limit", v, "--format", "json"],
    lambda v: ["check", "--min-confidence", v, "--against", "@latest", "--probe", "env", "--no-store"],
    lambda v: ["fleet", "--host-timeout", v, "--hosts-file", "/dev/null"],
    lambda v: ["fleet", "--concurrency", v, "--hosts-file", "/dev/null"],
    lambda v: ["show", f"@{v}"], lambda v: ["diff", "@latest", f"run:@{v}"],
    lambda v: ["gc", "--keep-days", v, "--dry-run"], lambda v: ["gc", "--keep-last", v, "--dry-run"],
    lambda v: ["snapshot", "--pid", v, "--probe", "env", "--no-store", "-o", "-", "-q"],
]


def test_options(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    assert cli("snapshot", "--probe", "env", "-q").returncode == 0
    hosts = tmp_path / "hosts"

    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["options"])
    @given(NUMBERS, st.sampled_from(OPTION_COMMANDS), st.binary(max_size=300))
    def run(value: str, command: Callable[[str], list[str]], hosts_bytes: bytes) -> None:
        calls.append(None)
        argv = command(value)
        _assert_clean(cli(*argv), argv)
        hosts.write_bytes(hosts_bytes)
        try:  # the library, not `fleet`: the hosts a random file names would be dialled
            assert all(isinstance(h, str) and h for h in fleet_hosts([], hosts))
        except DriftcheckError as exc:
            assert "\n" not in str(exc)

    run()
    assert len(calls) >= EXAMPLES["options"]
