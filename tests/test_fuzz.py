"""Every command that reads user input, over generated malformed inputs: never a traceback, never a hang.

Hypothesis mutates real snapshots (tests/data/pairs: truncation, byte flips, wrong-typed values deep inside
probe data, huge numbers, deep nesting, lone surrogates), real pasted reports (tests/data/reports), and
generates references (`@N`, `run:ID`, `baseline:NAME`, id prefixes) and option values; it also mutates a real
recording of this machine for `--replay`, makes pastes hostile by size and shape (blank runs, long lines and
tokens, secrets, bytes that are not UTF-8), and runs commands under odd homes (a file, a name over 255
characters, `$`, U+2028) and environments holding such bytes. Each is run through
the command line in-process; the exit code must be 0, 1 or 2, stderr at most a few lines with no traceback
nor "internal error" (a bug of ours), and each example must end within the deadline.

The example counts (`EXAMPLES`) add up to over 1,000 inputs; the whole file takes about 25 s on 2 cores.
"""

from __future__ import annotations

import copy
import json
import os
import random
import resource
import shutil
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

# Examples per test: 6 snapshot readers x 150 + reports 150 (each read twice) + references 150 + options 100
# + replays 100 + hostile pastes 60 + configuration and environment 60: 1,520 inputs, 1,670 command runs.
EXAMPLES = {"snapshot": 150, "report": 150, "reference": 150, "options": 100, "replay": 100, "paste": 60,
            "config": 60}
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


# --- Recordings replayed (issue 31): host.json and the recorded files are another machine's bytes. ---

def _recorded_files(directory: Path) -> list[Path]:
    return sorted(p for p in (directory / "files").rglob("*") if p.is_file())


def test_malformed_replays(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    """A real recording of this machine (`record --probe system --probe env`), then host.json mutated as a
    snapshot is, or one recorded file replaced by hostile bytes: `snapshot --replay` stays clean."""
    original = tmp_path / "original"
    assert cli("record", str(original), "--probe", "system", "--probe", "env").returncode == 0
    manifest = (original / "host.json").read_bytes()
    files = [p.relative_to(original) for p in _recorded_files(original)]
    work = tmp_path / "replay"
    odd_contents = [b"", b"\x00" * 100, b"9" * 1_000_000, b"-1e400 nan\n", b"\xff\xfe\xfd", b"a\n" * 50_000,
                    b"[" * 5000, "\u202e\x1b[2J".encode()]

    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["replay"])
    @given(st.integers(0, 2**32))
    def run(seed: int) -> None:
        calls.append(None)
        rng = random.Random(seed)
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(original, work)
        if rng.random() < 0.5:
            if rng.random() < 0.7:
                document = json.loads(manifest)
                for _ in range(rng.randrange(1, 4)):
                    document = mutate_document(document, rng)
                (work / "host.json").write_bytes(_encode(document))
            else:
                (work / "host.json").write_bytes(mutate_bytes(manifest, rng))
        else:
            (work / rng.choice(files)).write_bytes(rng.choice(odd_contents))
        argv = ["snapshot", "--replay", str(work), "--no-store", "-o", "-", "-q"]
        _assert_clean(cli(*argv), argv)

    run()
    assert len(calls) >= EXAMPLES["replay"]


# --- Pastes that are hostile by size or shape, and secrets in them (issue 31). ---

@st.composite
def hostile_pastes(draw: st.DrawFn) -> bytes:
    raw = draw(st.sampled_from([t for t in REPORT_TEXTS if not t.lstrip().startswith(b"{")]))
    rng = random.Random(draw(st.integers(0, 2**32)))
    lines = raw.split(b"\n")
    at = rng.randrange(len(lines) + 1)
    insert = rng.choice([
        b"\n" * rng.choice((1_000, 40_000)),  # blank runs (40,000 took 114 s)
        b"x" * rng.choice((10_000, 200_000)),  # one long line (200 KB took 50 s)
        b"a=" * 50_000, b"-a" * 50_000, b"hf_" + b"a" * 100_000, b"https://" + b"u:" * 20_000,
        b" " * 100_000 + b"X", b"\t" * 10_000 + b"[", b"HF_TOKEN=hf_" + b"b" * 40 + b"\n\xff\xfe caf\xe9",
        b"Authorization: Bearer " + b"c" * 50_000, b"-----BEGIN PRIVATE KEY-----\n" + b"k" * 10_000,
    ])
    return b"\n".join([*lines[:at], insert, *lines[at:]])


def test_hostile_pastes(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["paste"])
    @given(hostile_pastes())
    def run(data: bytes) -> None:
        calls.append(None)
        path = tmp_path / "paste.txt"
        path.write_bytes(data)
        argv = ["import", str(path), "--no-store", "-o", "-"]
        result = cli(*argv)
        _assert_clean(result, argv)
        assert "hf_" + "b" * 40 not in result.stdout and "c" * 40 not in result.stdout

    run()
    assert len(calls) >= EXAMPLES["paste"]


# --- Configuration and environment (issue 31): where the home is, and bytes that are not UTF-8. ---

HOMES = st.sampled_from(["file", "long", "dollar", "separator", "devnull", "deep", "percent"])
ENVIRONMENTS = st.lists(st.tuples(st.sampled_from([b"DC_FUZZ", b"DC_FUZZ_\xff", b"HF_TOKEN", b"LANG"]),
                                  st.binary(max_size=60)), max_size=4)
CONFIG_COMMANDS = [["log"], ["key", "show"], ["runs"], ["snapshot", "--probe", "env", "-q"],
                   ["run", "--probe", "env", "--", "true"], ["gc", "--dry-run", "--keep-last", "1"]]


def _home(kind: str, root: Path) -> Path:
    if kind == "file":
        path = root / "home-file"
        path.write_text("x")
        return path
    return {"long": root / ("h" * 300), "dollar": root / "a$HOME$$b", "separator": root / "a\u2028b\u0085c",
            "devnull": Path("/dev/null"), "deep": root / "a" / "b" / "c", "percent": root / "50%\\%d"}[kind]


def test_configuration_and_environment(cli: Callable[..., CliResult], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []

    @settings(COMMON, max_examples=EXAMPLES["config"])
    @given(HOMES, ENVIRONMENTS, st.sampled_from(CONFIG_COMMANDS))
    def run(home: str, environment: list[tuple[bytes, bytes]], argv: list[str]) -> None:
        calls.append(None)
        root = tmp_path / f"case{len(calls)}"
        root.mkdir()
        with monkeypatch.context() as patch:
            patch.setenv("DRIFTCHECK_HOME", str(_home(home, root)))
            for name, value in environment:
                patch.setitem(os.environb, name, value.replace(b"\x00", b""))
            result = cli(*argv)
        _assert_clean(result, argv)
        assert all(value.replace(b"\x00", b"").decode("latin-1") not in result.stdout
                   for name, value in environment if name == b"HF_TOKEN" and len(value) > 8)

    run()
    assert len(calls) >= EXAMPLES["config"]


def test_memory_stays_under_a_gibibyte() -> None:
    """The whole file's peak resident memory, every family above included (run it last, alone or after them)."""
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak_kib < 1024 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"
