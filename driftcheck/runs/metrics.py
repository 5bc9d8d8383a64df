"""Benchmark figures found in a command's output: built-in patterns for the tools our users run, plus theirs.

Each output line is offered to the patterns in order; the first that matches claims the line. A figure
printed several times (bench_one_batch prints a warm-up pass, then the measured one) keeps its last
value and counts how often it was seen. The generic "N tok/s" and "N ms" patterns only see lines no
specific pattern claimed, so a serving-benchmark table is not read twice.

Formats, as the tools print them (checked against outputs pasted in public issues, tests/data/bench_outputs):
- SGLang `bench_serving`, `bench_offline_throughput`, vLLM `benchmark_serving.py` / `vllm bench serve`:
  `Output token throughput (tok/s):          1915.40` — one figure per line, its unit in brackets.
- vLLM `benchmark_throughput.py` / `vllm bench throughput`:
  `Throughput: 89.27 requests/s, 22853.37 total tokens/s, 11426.69 output tokens/s` (older: `... tokens/s`);
  SGLang's first `bench_offline_throughput` printed `Throughput: 12577.55 tokens/s`.
- vLLM `benchmark_latency.py` / `vllm bench latency`: `Avg latency: 0.451 seconds`,
  `90% percentile latency: 0.4517 seconds`.
- SGLang `bench_one_batch` (formerly `bench_latency`): `Prefill. latency: 0.01014 s, throughput: 5916.43 token/s`,
  `Decode.  median latency: 0.00572 s, median throughput: 174.85 token/s`, `Total. latency: 0.062 s, ...`.
- nccl-tests: `# Avg bus bandwidth    : 84.8558` (GB/s), also behind an `srun --label` prefix (` 0: `).

Speculative decoding (the figures `explain run:A run:B` splits a throughput shift with, runs/speculative.py):
- SGLang `bench_serving`: `Accept length:                           2.46` (the server's `avg_spec_accept_length`
  from `/get_server_info`, which bench_serving reads after the run); vLLM `vllm bench serve`'s
  `Speculative Decoding` section: `Acceptance rate (%):  31.16`, `Acceptance length:`, `Drafts:`,
  `Draft tokens:`, `Accepted tokens:`.
- vLLM's offline `examples/offline_inference/spec_decode.py`: `num_drafts: 2189`, `num_draft_tokens: 6567`,
  `num_accepted_tokens: 3187`, `mean acceptance length: 2.46`.
- vLLM's engine log: `SpecDecoding metrics: Mean acceptance length: 2.91, Accepted throughput: 0.72 tokens/s,
  ..., Accepted: 44 tokens, Drafted: 161 tokens, ..., Avg Draft acceptance rate: 27.3%` (V1; older V1:
  `Draft acceptance rate: 88.8%` first; V0: `Speculative metrics: Draft acceptance rate: 0.607, ...,
  Number of accepted tokens: 32594, Number of draft tokens: 53716, ...`, the rate as a fraction). V1 counts
  what happened since the previous log line (every 10 s), so the last line kept is the last interval, not
  the run. The line's "Accepted/Drafted throughput" are rates of draft tokens, not of output: not kept
  (the generic "N tokens/s" pattern would otherwise take them for throughput).
- SGLang's server log: `Decode batch. #running-req: 1, ..., accept len: 1.95, accept rate: 0.49, cuda graph:
  True, gen throughput (token/s): 178.86, ...` (per logging interval of decode steps; the last is kept, the
  rate turned into %). Its gen throughput is of the interval, and not kept.
- No engine prints a draft-and-verify cycle time; a `--metric 'cycle_time[ms]=REGEX'` of the user's own is
  used where both runs carry one, else the cycle is derived (accept length x mean TPOT).
"""

from __future__ import annotations

import bisect
import collections
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from driftcheck.errors import UsageError
from driftcheck.runs.shapes import MetricJson

_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
# Units whose figure is better when higher; every other known unit is a time, better when lower.
_RATE_UNITS = ("/s", "GB/s")
# Tokens emitted per draft-and-verify step (an accept length): better when higher, though not a rate.
_HIGHER_UNITS = ("tok/step",)
_TIME_UNITS = ("ms", "s", "us")
_UNIT_NAMES = {"token/s": "tok/s", "tokens/s": "tok/s", "tok/s": "tok/s", "req/s": "req/s",
               "requests/s": "req/s", "seconds": "s", "s": "s", "ms": "ms", "us": "us", "GB/s": "GB/s"}


@dataclass
class Metric:
    """One figure a run printed: a stable name, its value and unit, and how it was found."""

    name: str
    value: float
    unit: str | None
    label: str
    source: str
    count: int = 1

    @property
    def higher_is_better(self) -> bool | None:
        """True for a rate, False for a time, None when the unit does not say."""
        return direction(self.unit)

    def to_json(self) -> MetricJson:
        """The figure as stored in a run record."""
        return {"name": self.name, "value": self.value, "unit": self.unit, "label": self.label,
                "source": self.source, "count": self.count}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Metric:
        """A figure read back from a run record."""
        return cls(str(data["name"]), float(data["value"]), data.get("unit"), str(data.get("label") or data["name"]),
                   str(data.get("source") or ""), int(data.get("count") or 1))


def direction(unit: str | None) -> bool | None:
    """Whether a higher figure in `unit` is better (True), worse (False), or unknown (None)."""
    if unit is None:
        return None
    if unit.endswith(_RATE_UNITS) or unit in _HIGHER_UNITS:
        return True
    if unit in _TIME_UNITS:
        return False
    return None


def slug(text: str) -> str:
    """A metric name from a label: lower case, words joined by `_` ("Mean TTFT" -> "mean_ttft")."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("%", " pct "))
    return "_".join(words)


# (name, value, unit, label) per figure; an empty list claims a line that holds no figure worth keeping.
Found = list[tuple[str, float, str | None, str]]
Matcher = Callable[[str], Found | None]
# Where a line's figures are: (the value's start, its end, name, unit, label) per figure; () for none.
Shape = tuple[tuple[int, int, str, str | None, str], ...]


@dataclass(frozen=True)
class Pattern:
    """A named way of reading figures from one line; `read` returns them, or None when the line is not its own."""

    source: str
    read: Matcher
    # Literal pieces (exact case), one of which every line this pattern reads or claims holds; () when none can
    # be named. The scanner skips the built-in patterns on a line that holds none of theirs.
    needs: tuple[str, ...] = ()
    # A quick test that a line may hold this pattern's figure (a user's compiled regex); None: `read` is the test.
    finds: Callable[[str], object] | None = None
    # Where `read` finds the figures, for a pattern that tells every ASCII digit alike (each `\d`, no digit in
    # a literal or a class): then every line that differs from `line` in its digits only has its figures at the
    # same places, with the same names, and the scanner reads such a line from the places it remembers.
    shape: Callable[[str], Shape] | None = None


def _unit(raw: str | None) -> str | None:
    return None if raw is None else _UNIT_NAMES.get(raw, raw)


# --- the built-in patterns ---------------------------------------------------------------------------

_BRACKETED = re.compile(rf"^\s*(?P<label>[A-Za-z][A-Za-z0-9 ._%-]*?)\s*\((?P<unit>tok/s|req/s|ms|s|GB/s)\)\s*:"
                        rf"\s*(?P<value>{_NUM})\s*$")


def _bracketed(line: str) -> Found | None:
    match = _BRACKETED.match(line)
    if not match:
        return None
    label = match["label"].strip()
    return [(slug(label), float(match["value"]), _unit(match["unit"]), label)]


_THROUGHPUT = re.compile(rf"^\s*Throughput:\s*(?P<rest>{_NUM}\s+\S.*)$")
_THROUGHPUT_PART = re.compile(rf"(?P<value>{_NUM})\s+(?P<what>(?:total |output )?(?:requests|tokens)/s)")


def _throughput(line: str) -> Found | None:
    match = _THROUGHPUT.match(line)
    if not match:
        return None
    found: Found = []
    for part in _THROUGHPUT_PART.finditer(match["rest"]):
        what = part["what"]
        if what == "requests/s":
            found.append(("request_throughput", float(part["value"]), "req/s", "Request throughput"))
        else:
            kind = what.split()[0] if " " in what else ""
            label = f"{kind.capitalize()} token throughput" if kind else "Token throughput"
            found.append((slug(label), float(part["value"]), "tok/s", label))
    return found or None


_LATENCY = re.compile(rf"^\s*(?P<label>Avg latency|\d+% percentile latency):\s*(?P<value>{_NUM})\s*seconds\s*$")


def _latency(line: str) -> Found | None:
    match = _LATENCY.match(line)
    if not match:
        return None
    label = match["label"]
    name = "avg_latency" if label == "Avg latency" else f"p{label.split('%')[0]}_latency"
    return [(name, float(match["value"]), "s", label)]


_ONE_BATCH = re.compile(rf"^\s*(?P<stage>Prefill|Decode|Total)\.\s+(?P<median>median )?latency:\s*(?P<lat>{_NUM})\s*"
                        rf"(?P<lat_unit>ms|s)\s*,\s*(?:median )?throughput:\s*(?P<tput>{_NUM})\s*token/s\s*$")


_ONE_BATCH_STEP = re.compile(r"^\s*Decode \d+\. Batch size: \d+, latency: ")


def _one_batch(line: str) -> Found | None:
    match = _ONE_BATCH.match(line)
    if not match:
        # One decode step of many: the median line after them is the figure; a step is not.
        return [] if _ONE_BATCH_STEP.match(line) else None
    stage = match["stage"].lower()
    prefix = f"{stage}_median" if match["median"] else stage
    words = f"{match['stage']}{' median' if match['median'] else ''}"
    return [(f"{prefix}_latency", float(match["lat"]), match["lat_unit"], f"{words} latency"),
            (f"{prefix}_throughput", float(match["tput"]), "tok/s", f"{words} throughput")]


_BUS_BANDWIDTH = re.compile(rf"^\s*(?:\d+:\s*)?#\s*Avg bus bandwidth\s*:\s*(?P<value>{_NUM})\s*$")


def _bus_bandwidth(line: str) -> Found | None:
    match = _BUS_BANDWIDTH.match(line)
    if not match:
        return None
    return [("avg_bus_bandwidth", float(match["value"]), "GB/s", "Avg bus bandwidth")]


_GENERIC_RATE = re.compile(rf"(?:(?P<label>[A-Za-z][A-Za-z _-]{{0,40}}?)\s*[:=]?\s*)?(?P<value>{_NUM})\s*"
                           rf"(?P<unit>tok/s|tokens/s|token/s|ms)(?![A-Za-z/])")


# The units alone, found first: the label's lazy optional group makes the whole pattern try every position of
# a line, ~50 us a line; a training log's 20,000 lines without a unit cost a second (issue 20's overhead).
_GENERIC_UNIT = re.compile(r"(?:tok/s|tokens/s|token/s|ms)(?![A-Za-z/])")


_LABEL_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz _-"  # `_GENERIC_RATE`'s label
_NUMBER_CHARS = frozenset(".eE+-")  # with the digits: what `_NUM` is made of
_ASCII_NUMBER_CHARS = "0123456789.eE+-"  # the ASCII ones: `str.isdigit` holds for other characters too


def _run_before(text: str, end: int, belongs: Callable[[str], bool]) -> int:
    """Where the run of characters that `belongs` ending at `end` of `text` starts."""
    start = end
    while start > 0 and belongs(text[start - 1]):
        start -= 1
    return start


def _number_start(line: str, end: int) -> int:
    """Where the run of digits and `_NUMBER_CHARS` ending at `end` of `line` starts: one `rstrip` of the ASCII
    ones (the whole run, in a log), the loop over characters only where a non-ASCII one stops it (it may be a
    digit to `str.isdigit`)."""
    start = len(line[:end].rstrip(_ASCII_NUMBER_CHARS))
    if start and not line[start - 1].isascii():
        return _run_before(line, end, lambda c: c.isdigit() or c in _NUMBER_CHARS)
    return start


def _separators_start(line: str, end: int) -> int:
    """Where the run of whitespace, ':' and '=' ending at `end` of `line` starts (`rstrip()` strips exactly
    what `str.isspace` holds for)."""
    head = line[:end]
    while True:
        stripped = head.rstrip().rstrip(":=")
        if len(stripped) == len(head):
            return len(head)
        head = stripped


def _generic_span(line: str, units: Sequence[re.Match[str]] | None = None) -> tuple[int, int] | None:
    """Where in `line` `_GENERIC_RATE` can match: from the start of the label characters before the first
    unit that a number stands before (over the number, the whitespace, ':' and '=' between), to the character
    after the last unit, which its lookahead reads. None when no number stands before a unit.

    `_GENERIC_RATE.finditer(line, *span)` finds exactly what it finds over the whole line (it has no anchor
    and no lookbehind): a match is a run of label characters, separators, a number, whitespace and its unit,
    so the first starts no earlier than that, and the last ends at its unit. Every position tried costs ~40
    tries of the lazy label, so the words before the first figure and after the last unit (a log line's tail)
    were most of a scan's time: 100 MiB of a training log took 14 s to scan after its command had ended."""
    if units is None:
        units = list(_GENERIC_UNIT.finditer(line))
    for unit in units:
        number_end = len(line[:unit.start()].rstrip())  # `rstrip()` strips what `\s` matches
        if number_end and line[number_end - 1].isdigit():
            break
    else:
        return None
    number = _number_start(line, number_end)
    separators = _separators_start(line, number)
    start = len(line[:separators].rstrip(_LABEL_CHARS))
    return start, min(len(line), units[-1].end() + 1)


def _generic_shape(line: str) -> Shape:
    r"""Where `_GENERIC_RATE` finds figures in `line`. It and `_generic_span` tell no ASCII digit from another
    (`\d`, `str.isdigit`, `rstrip` of all ten), so the places hold for every line with other digits there."""
    units = list(_GENERIC_UNIT.finditer(line))
    if not units:
        return ()
    span = _generic_span(line, units)
    if span is None:
        return ()
    shape = []
    for match in _GENERIC_RATE.finditer(line, *span):
        unit = _unit(match["unit"])
        words = (match["label"] or "").strip(" :=_-")
        label = " ".join(words.split()[-4:]) or ("tokens per second" if unit == "tok/s" else "milliseconds")
        shape.append((*match.span("value"), slug(label), unit, label))
    return tuple(shape)


def figures_at(line: str, shape: Shape) -> Found | None:
    """The figures of `line` at the places `shape` gives; None when it gives none."""
    return [(name, float(line[start:end]), unit, label) for start, end, name, unit, label in shape] or None


def _generic(line: str) -> Found | None:
    return figures_at(line, _generic_shape(line))


# --- speculative decoding ----------------------------------------------------------------------------

ACCEPT_LENGTH = "accept_length"
ACCEPTANCE_RATE = "acceptance_rate"
NUM_DRAFTS = "num_drafts"
NUM_DRAFT_TOKENS = "num_draft_tokens"
NUM_ACCEPTED_TOKENS = "num_accepted_tokens"
ACCEPT_UNIT = "tok/step"

# label as printed (lower case) -> (name, unit, label kept); one figure per line, nothing after it.
_SPEC_LINES = {
    "accept length": (ACCEPT_LENGTH, ACCEPT_UNIT, "Accept length"),
    "acceptance length": (ACCEPT_LENGTH, ACCEPT_UNIT, "Accept length"),
    "mean acceptance length": (ACCEPT_LENGTH, ACCEPT_UNIT, "Accept length"),
    "acceptance rate (%)": (ACCEPTANCE_RATE, "%", "Draft acceptance rate"),
    "drafts": (NUM_DRAFTS, "drafts", "Drafts"),
    "num_drafts": (NUM_DRAFTS, "drafts", "Drafts"),
    "draft tokens": (NUM_DRAFT_TOKENS, "tokens", "Draft tokens"),
    "num_draft_tokens": (NUM_DRAFT_TOKENS, "tokens", "Draft tokens"),
    "accepted tokens": (NUM_ACCEPTED_TOKENS, "tokens", "Accepted tokens"),
    "num_accepted_tokens": (NUM_ACCEPTED_TOKENS, "tokens", "Accepted tokens"),
}
_SPEC_LINE = re.compile(rf"^\s*(?P<label>[A-Za-z_][A-Za-z_ ()%]*?)\s*:\s*(?P<value>{_NUM})\s*$")


def _spec_line(line: str) -> Found | None:
    match = _SPEC_LINE.match(line)
    known = _SPEC_LINES.get(match["label"].lower()) if match else None
    if not match or known is None:
        return None
    name, unit, label = known
    return [(name, float(match["value"]), unit, label)]


_SPEC_LOG = re.compile(r"\b(?:SpecDecoding|Speculative) metrics:\s*(?P<rest>.*)$")
_SPEC_LOG_RATE = re.compile(rf"Draft acceptance rate:\s*(?P<value>{_NUM})\s*(?P<pct>%)?")
_SPEC_LOG_PARTS = (
    (re.compile(rf"Mean acceptance length:\s*(?P<value>{_NUM})"), ACCEPT_LENGTH, ACCEPT_UNIT, "Accept length"),
    (re.compile(rf"(?:\bAccepted|Number of accepted tokens):\s*(?P<value>{_NUM})"), NUM_ACCEPTED_TOKENS, "tokens",
     "Accepted tokens"),
    (re.compile(rf"(?:\bDrafted|Number of draft tokens):\s*(?P<value>{_NUM})"), NUM_DRAFT_TOKENS, "tokens",
     "Draft tokens"),
)


def _spec_log(line: str) -> Found | None:
    match = _SPEC_LOG.search(line)
    if not match:
        return None
    rest = match["rest"]
    found: Found = []
    rate = _SPEC_LOG_RATE.search(rest)
    if rate:
        # V0 and the first V1 logs print a fraction (0.607, 1.000); later ones a percentage (88.8%).
        value = float(rate["value"]) * (1 if rate["pct"] else 100)
        found.append((ACCEPTANCE_RATE, round(value, 6), "%", "Draft acceptance rate"))
    for pattern, name, unit, label in _SPEC_LOG_PARTS:
        part = pattern.search(rest)
        if part:
            found.append((name, float(part["value"]), unit, label))
    return found  # the line is claimed even when empty: its "tokens/s" are draft rates, not output


_SGLANG_DECODE = re.compile(rf"\bDecode batch[.,].*?\baccept len:\s*(?P<length>{_NUM})"
                            rf"(?:,\s*accept rate:\s*(?P<rate>{_NUM}))?")


def _sglang_decode(line: str) -> Found | None:
    match = _SGLANG_DECODE.search(line)
    if not match:
        return None
    found: Found = [(ACCEPT_LENGTH, float(match["length"]), ACCEPT_UNIT, "Accept length")]
    if match["rate"] is not None:
        found.append((ACCEPTANCE_RATE, round(float(match["rate"]) * 100, 6), "%", "Draft acceptance rate"))
    return found


BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    Pattern("serving-benchmark table (sglang bench_serving / bench_offline_throughput, vllm benchmark_serving)",
            _bracketed, ("(tok/s)", "(req/s)", "(ms)", "(s)", "(GB/s)")),
    Pattern("vllm benchmark_throughput", _throughput, ("Throughput:",)),
    Pattern("vllm benchmark_latency", _latency, ("latency:",)),
    Pattern("sglang bench_one_batch", _one_batch, ("latency:",)),
    Pattern("nccl-tests", _bus_bandwidth, ("Avg bus bandwidth",)),
    Pattern("speculative decoding (sglang bench_serving accept length, vllm spec-decode section)", _spec_line,
            # its labels are looked up in lower case: the cases a printed label takes
            ("accept", "Accept", "ACCEPT", "draft", "Draft", "DRAFT")),
    Pattern("vllm SpecDecoding metrics log", _spec_log, ("metrics:",)),
    Pattern("sglang decode log (accept len)", _sglang_decode, ("accept len:",)),
)
GENERIC_PATTERNS: tuple[Pattern, ...] = (Pattern("generic 'N tok/s' / 'N ms'", _generic, ("/s", "ms"),
                                                 shape=_generic_shape),)


def _prefilter(patterns: tuple[Pattern, ...]) -> re.Pattern[str] | None:
    """One search for every piece the patterns need; None when a pattern names none (it may read any line)."""
    if any(not pattern.needs for pattern in patterns):
        return None
    # Case-sensitive: an IGNORECASE alternation searched 600 kB in 116 ms, this one in 8 ms.
    return re.compile("|".join(re.escape(piece) for pattern in patterns for piece in pattern.needs))


# A log line that holds no piece any built-in pattern needs is passed by in one search, not eleven: a training
# log of 20,000 such lines took a second to scan, longer than the 0.66 s command that printed it (issue 20).
_BUILTIN_NEEDS = _prefilter((*BUILTIN_PATTERNS, *GENERIC_PATTERNS))
# The built-in patterns' own pieces (the generic pattern's "/s" and "ms" are in most log lines): a line without
# any is read by the generic pattern alone.
_SPECIFIC_NEEDS = _prefilter(BUILTIN_PATTERNS)
_SPECIFIC_PIECES = tuple(dict.fromkeys(piece for pattern in BUILTIN_PATTERNS for piece in pattern.needs))
_GENERIC_PIECES = tuple(dict.fromkeys(piece for pattern in GENERIC_PATTERNS for piece in pattern.needs))


def _pieces_in(line: str) -> set[str]:
    """The built-in patterns' pieces `line` holds (substring tests: a regex search finds one of two pieces that
    overlap, "accept" or "accept len:", not both)."""
    return {piece for piece in _SPECIFIC_PIECES if piece in line}


# --- the user's own ----------------------------------------------------------------------------------

_USER_NAME = re.compile(r"^\s*(?P<name>[^\[\]=]+?)\s*(?:\[(?P<unit>[^\]]+)\])?\s*$")


def pattern_name(spec: str) -> str:
    """The figure name a `--metric NAME[UNIT]=REGEX` spec gives its matches (NAME, as a slug)."""
    head = spec.partition("=")[0].partition("[")[0].strip()
    return slug(head) or head


def user_pattern(spec: str) -> Pattern:
    """A `--metric NAME=REGEX` or `NAME[UNIT]=REGEX` pattern; the figure is the group named `value`, else the
    first group. A group named `unit` gives the unit where `[UNIT]` does not. UsageError when it cannot work.
    """
    head, sep, regex = spec.partition("=")
    named = _USER_NAME.match(head)
    if not sep or not named or not regex:
        raise UsageError(f"--metric {spec!r}: give NAME=REGEX or NAME[UNIT]=REGEX, "
                         f"e.g. 'decode[tok/s]=decode: ([0-9.]+) tok/s'")
    name, fixed_unit = named["name"], named["unit"]
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise UsageError(f"--metric {name}: not a regular expression ({exc})") from None
    if compiled.groups == 0:
        raise UsageError(f"--metric {name}: the regex needs a group around the number, e.g. ([0-9.]+)")
    key = slug(name) or name.strip()
    value_group: int | str = "value" if "value" in compiled.groupindex else 1

    def read(line: str) -> Found | None:
        """The user's figure in `line`, if the regex finds a number there."""
        match = compiled.search(line)
        if not match or match.group(value_group) is None:
            return None
        try:
            value = float(match.group(value_group))
        except ValueError:
            return None
        unit = match.group("unit") if "unit" in compiled.groupindex else fixed_unit
        return [(key, value, _unit(unit), name.strip())]

    return Pattern(f"--metric {name.strip()}", read, finds=compiled.search)


# --- scanning output -----------------------------------------------------------------------------------

@dataclass
class MetricScanner:
    """Fed the output line by line; `metrics()` gives what was found. The user's patterns come first."""

    user: tuple[Pattern, ...] = ()
    found: dict[str, Metric] = field(default_factory=dict)
    # (pattern, line with its digits made 0) -> where its figures are: a training log prints one line per step
    # that differs in its numbers only, and finding the places again cost ~5 us of each line's ~8 us.
    _shapes: dict[tuple[str, str], Shape] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Digit-blind lines that hold no piece of a built-in pattern: a line like them is not searched for one again.
    _plain: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    # While `_feed_alike` feeds a line alone: where its figures go, the line's index, the next figure's place in it.
    _tally: _Tally | None = field(default=None, init=False, repr=False, compare=False)
    _at: int = field(default=0, init=False, repr=False, compare=False)
    _seq: int = field(default=0, init=False, repr=False, compare=False)

    def feed(self, line: str) -> None:
        """Look for figures in one output line (without its line end)."""
        self._feed(line, None)

    def _feed(self, line: str, blind: str | None, holds_piece: bool = False) -> None:
        """`feed`, given `line` with its digits made 0 where that was made in bulk (None: made here if needed);
        `holds_piece`: the bulk search found a built-in pattern's piece in it, so it is not searched again."""
        if "\x1b" in line:
            line = _ANSI.sub("", line)
            blind = None
            holds_piece = False  # what was searched is gone with the colour codes
        if len(line) > 4096:  # a progress bar redrawn without line ends: nothing to read there
            return
        claimed = False
        for pattern in self.user:  # the user's figures never hide a built-in one on the same line
            hits = pattern.read(line)
            if hits:
                self._keep(hits, pattern.source)
                claimed = True
        if _BUILTIN_NEEDS is not None and not holds_piece and not _BUILTIN_NEEDS.search(line):
            return
        if self._builtin(line, blind) or claimed:
            return
        for pattern in GENERIC_PATTERNS:
            hits = self._read(pattern, line, blind)
            if hits:
                self._keep(hits, pattern.source)

    def _builtin(self, line: str, blind: str | None = None) -> bool:
        """Whether a built-in pattern claimed `line` (its figures kept). Only the patterns whose pieces the line
        holds are tried (`Pattern.needs` is exact): a log line with "tok/s" in it reaches the generic pattern
        after one search, not eight regex searches; a line like one found without any (`blind`: its digits made
        0), after none."""
        present: set[str] | None = None  # None: every pattern is tried
        if _SPECIFIC_NEEDS is not None:
            # No piece holds a digit, so a line holds one exactly when its digit-blind form does.
            if blind is not None and blind in self._plain:
                return False
            if not _SPECIFIC_NEEDS.search(line):
                if blind is not None:
                    if len(self._plain) >= _SHAPES_KEPT:
                        self._plain.clear()
                    self._plain.add(blind)
                return False
            present = _pieces_in(line)
        for pattern in BUILTIN_PATTERNS:
            if present is not None and present.isdisjoint(pattern.needs):
                continue
            hits = pattern.read(line)
            if hits is not None:
                self._keep(hits, pattern.source)
                return True
        return False

    def _read(self, pattern: Pattern, line: str, blind: str | None = None) -> Found | None:
        """`pattern.read(line)`, from the places remembered for a line like it where the pattern has a shape
        (`blind`: `line` with its digits made 0, when already made)."""
        if pattern.shape is None:
            return pattern.read(line)
        return figures_at(line, self._shape(pattern, line, line.translate(_DIGITS_BLIND) if blind is None else blind))

    def feed_lines(self, lines: Sequence[str]) -> None:
        """`feed` each of a whole output's lines, in order: the figures found, their order, last values and counts
        are those of feeding them one by one. The lines no pattern could read are passed by in bulk, and the lines
        only the generic pattern reads are read once per digit-blind form (`_feed_alike`), not one by one; where a
        colour code may split a piece, every line is read alone."""
        text = "\n".join(lines)
        # Every line's digit-blind form (`_read`'s key) from one translation of the whole text, not one per line:
        # 8 MiB of a training log's lines spent 0.15 s in `str.translate` called line by line. Lines hold no line
        # end, so the pieces are the lines; where a caller's do, each line makes its own.
        blinds: Sequence[str | None] = text.translate(_DIGITS_BLIND).split("\n")
        if len(blinds) != len(lines):
            blinds = [None] * len(lines)
        elif _SPECIFIC_NEEDS is not None and "\x1b" not in text and all(p.shape for p in GENERIC_PATTERNS):
            self._feed_alike(lines, blinds)  # type: ignore[arg-type]  # no None in a split
            return
        candidates, holding = self._candidates(lines, text)
        for index in candidates:
            self._feed(lines[index], blinds[index], index in holding)

    def _feed_alike(self, lines: Sequence[str], blinds: list[str]) -> None:
        """`feed_lines` where the lines are read by their kinds. A line a user pattern may read or that holds a
        specific built-in pattern's piece is fed alone; every other line is the generic pattern's, which reads all
        lines of one digit-blind form at the same places, under the same names (`Pattern.shape`). So a form is
        read once, from its last line (its values), counted once (`collections.Counter`, at C speed) and placed at
        its first line (the order names are first seen in): a training log's 2,000 lines of one chunk were 2,000
        reads of ~3 us, and the scan of 100 MiB fell behind the command that printed it."""
        counts = collections.Counter(blinds)
        alone = self._lines_alone(lines, blinds, counts)
        tally = _Tally()
        for index in sorted(alone):
            self._feed_into(tally, index, lines[index], blinds[index], alone[index])
        grouped: list[str | None] = list(blinds)
        for index in alone:
            grouped[index] = None  # fed alone: in no form's count
            counts[blinds[index]] -= 1
        last = dict(zip(grouped, range(len(grouped)), strict=True))
        first = dict(zip(reversed(grouped), range(len(grouped) - 1, -1, -1), strict=True))
        for form, start in first.items():
            # No generic piece: no figure (no piece holds a digit, so the form holds one where the line does).
            if form is None or len(form) > 4096 or not any(piece in form for piece in _GENERIC_PIECES):
                continue
            line = lines[last[form]]
            shapes = [(pattern, self._shape(pattern, line, form)) for pattern in GENERIC_PATTERNS]
            if any(_may_overflow(form, shape) for _, shape in shapes):
                # A value that may read as infinity is skipped on its own line only: these lines are fed alone.
                for index in [index for index, each in enumerate(grouped) if each == form]:
                    self._feed_into(tally, index, lines[index], form, False)
                continue
            seq = 0
            for pattern, shape in shapes:
                for name, value, unit, label in figures_at(line, shape) or ():
                    tally.add(name, (start, seq), (last[form], seq), (value, unit, label, pattern.source),
                              counts[form])
                    seq += 1
        tally.into(self.found)

    def _feed_into(self, tally: _Tally, index: int, line: str, blind: str, holds_piece: bool) -> None:
        """`_feed` line `index` of a chunk, its figures gathered in `tally` at their places in the chunk."""
        self._tally, self._at, self._seq = tally, index, 0
        try:
            self._feed(line, blind, holds_piece)
        finally:
            self._tally = None

    def _lines_alone(self, lines: Sequence[str], blinds: Sequence[str], forms: Iterable[str]) -> dict[int, bool]:
        """The indices of the lines a user pattern may read or that hold a piece of a specific built-in pattern,
        each with whether it holds such a piece. No piece holds a digit, so a line holds one exactly when its
        digit-blind form does: each of the chunk's distinct `forms` is searched once, not each line (a search of
        the whole text, by a regex or by `str.find` per piece, took 0.1 s per 8 MiB: most of the scan)."""
        assert _SPECIFIC_NEEDS is not None
        holding = {form for form in forms if _SPECIFIC_NEEDS.search(form)}
        alone = dict.fromkeys([index for index, blind in enumerate(blinds) if blind in holding], True) \
            if holding else {}
        for pattern in self.user:
            finds = pattern.finds or pattern.read
            for index in [index for index, line in enumerate(lines) if finds(line)]:
                alone.setdefault(index, False)
        return alone

    def _shape(self, pattern: Pattern, line: str, blind: str) -> Shape:
        """Where `pattern` (one with a shape) finds figures in `line` (`blind`: its digit-blind form), remembered."""
        assert pattern.shape is not None
        key = (pattern.source, blind)
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) >= _SHAPES_KEPT:  # a log whose lines differ in words too: start again
                self._shapes.clear()
            shape = self._shapes[key] = pattern.shape(line)
        return shape

    def _candidates(self, lines: Sequence[str], text: str) -> tuple[Iterable[int], set[int]]:
        """The indices of the lines a user pattern reads or that hold a piece a built-in pattern needs (`text`:
        the lines joined by \\n), and those of the lines the one search of `text` found such a piece in (no piece
        holds a line end, so each was found inside its line: `_feed` need not search that line again)."""
        if _BUILTIN_NEEDS is None or "\x1b" in text:  # a colour code may split a piece: every line is read
            return range(len(lines)), set()
        holding: set[int] = set()
        found = [match.start() for match in _BUILTIN_NEEDS.finditer(text)]
        if found:
            # ends[i]: where line i's line end is in `text` (built at C speed: a 20,000-line log costs ~1 ms)
            ends = list(map(operator.add, itertools.accumulate(map(len, lines)), itertools.count()))
            holding.update(bisect.bisect_left(ends, position) for position in found)
        wanted = set(holding)
        for pattern in self.user:
            finds = pattern.finds or pattern.read
            wanted.update([index for index, line in enumerate(lines) if finds(line)])
        return sorted(wanted), holding

    def _keep(self, hits: Found, source: str) -> None:
        if self._tally is not None:  # a line fed alone by `_feed_alike`: placed among the chunk's forms
            for name, value, unit, label in hits:
                place = (self._at, self._seq)
                self._seq += 1
                self._tally.add(name, place, place, (value, unit, label, source), 1)
            return
        for name, value, unit, label in hits:
            if not math.isfinite(value):  # `1e999 ms` reads as infinity: no figure a run can be judged by
                continue
            previous = self.found.get(name)
            if previous is None:
                self.found[name] = Metric(name, value, unit, label, source)
            else:
                # Updated in place: a log of a figure per line made (and dropped) a Metric per line.
                previous.value, previous.unit, previous.label, previous.source = value, unit, label, source
                previous.count += 1

    def metrics(self) -> list[Metric]:
        """Every figure found, in the order first seen: copies, which the scan goes on without changing."""
        return [replace(metric) for metric in self.found.values()]


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_DIGITS_BLIND = str.maketrans("123456789", "000000000")
_SHAPES_KEPT = 1024  # keys are whole lines of up to 4,096 characters: at most 4 MiB kept


def _may_overflow(blind: str, shape: Shape) -> bool:
    """Whether a value at `shape`'s places may read as infinity in a line of digit-blind form `blind`: only a
    number of 300 characters or more, or with an exponent of three digits or more, can (`float` of `_NUM`)."""
    for start, end, *_ in shape:
        number = blind[start:end]
        exponent = number.lower().partition("e")[2].lstrip("+-")
        if len(number) >= 300 or len(exponent) >= 3:
            return True
    return False


# (value, unit, label, source) of one figure as a line gave it
_Reading = tuple[float, str | None, str, str]


class _Tally:
    """The figures of one chunk of lines, gathered out of line order: each name's first place (line, figure in
    it), the reading at its last place, and how often it was seen; `into` gives a scan's `found` what feeding the
    chunk's lines one by one would have (new names in the order first seen, each name's last reading, the count
    added)."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[int, int]] = {}
        self.last: dict[str, tuple[tuple[int, int], _Reading]] = {}
        self.count: collections.Counter[str] = collections.Counter()

    def add(self, name: str, first: tuple[int, int], last: tuple[int, int], reading: _Reading, times: int) -> None:
        """`name` seen `times` times, first at place `first`, last at `last` with `reading`."""
        if not math.isfinite(reading[0]):  # `1e999 ms` reads as infinity: no figure a run can be judged by
            return
        if name not in self.first or first < self.first[name]:
            self.first[name] = first
        if name not in self.last or last > self.last[name][0]:
            self.last[name] = (last, reading)
        self.count[name] += times

    def into(self, found: dict[str, Metric]) -> None:
        """Add the chunk's figures to `found`, as its lines fed one by one would have."""
        for name in sorted(self.first, key=self.first.__getitem__):
            value, unit, label, source = self.last[name][1]
            previous = found.get(name)
            if previous is None:
                found[name] = Metric(name, value, unit, label, source, self.count[name])
            else:
                previous.value, previous.unit, previous.label, previous.source = value, unit, label, source
                previous.count += self.count[name]
