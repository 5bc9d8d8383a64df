"""A throughput shift of speculative decoding, split into the drafter's part and the cycle's part.

Speculative decoding runs in cycles: the drafter proposes tokens, the target model verifies them in one
pass, and each request stream gains on average L tokens per cycle (L, the accept length, counts the
verifier's own token: L = 1 + accepted / drafts). A cycle of C seconds therefore decodes

    r = L / C   tokens per second per request stream,

so between two runs  r_B / r_A = (L_B / L_A) x (C_A / C_B): the accept length is the drafter's part
(how many of its tokens survive), the cycle time is the part of everything else (drafting plus the
verify pass plus scheduling). In logarithms the two parts add up to the whole, which gives each its
share of the shift: share_L = ln(L_B / L_A) / ln(r_B / r_A), share_C = -ln(C_B / C_A) / ln(r_B / r_A).

Where the figures come from (runs/metrics.py reads them from the command's output):
- L: the accept length the engine printed; else 1 + accepted tokens / drafts from vLLM's counts; else,
  for a run recorded with `--server URL` against SGLang, the server's `avg_spec_accept_length` in the
  snapshot after the run (`/get_server_info` internal_states: SGLang's scheduler divides its accepted
  tokens, bonus token included, by its verify passes since the server started, so a server that served
  other traffic first blends it in; bench_serving's "Accept length" is this same figure, read the same way).
- C: a cycle time the user's `--metric 'cycle_time[ms]=...'` read, when both runs have one; else
  L x mean TPOT (time per output token after the first, per request: one cycle yields L tokens of a
  stream, so TPOT = C / L). No engine prints a cycle time, so this is the usual source.

Break-even with a run without speculative decoding (throughput T0, same workload and concurrency):
speculation pays while L / C > the plain decode rate. With the cycle time held (a cycle drafts and
verifies the same number of tokens whatever is accepted, so C does not depend on L to first order)
the throughput scales with L: T(L') = T x L' / L. Setting T(L*) = T0 gives

    L* = L x T0 / T,

the accept length at which the speculative run would match the plain one; above it speculation wins.
T and T0 must be the same measure: the output token throughput when both runs printed it, else the
per-stream rate 1000 / mean TPOT. The decomposition is only made when both runs carry L and C, and
the break-even only when the plain run's figure is there; otherwise what is missing is said.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from driftcheck.runs.metrics import ACCEPT_LENGTH, ACCEPT_UNIT, NUM_ACCEPTED_TOKENS, NUM_DRAFTS, Metric
from driftcheck.runs.store import RunRecord

SERVER_SOURCE = "the server's avg_spec_accept_length after the run (since the server started)"
CYCLE_TIME = "cycle_time"
MEAN_TPOT = "mean_tpot"
OUTPUT_THROUGHPUT = "output_token_throughput"
# A part moved when it changed by more than this: repeated benchmark runs differ by a few percent.
MOVED = 0.03
_UNITS_MS = {"ms": 1.0, "s": 1000.0, "us": 0.001}


@dataclass(frozen=True)
class Figure:
    """One figure of the decomposition: its value and where it came from (printed, or how derived)."""

    value: float
    source: str

    def to_json(self) -> dict[str, Any]:
        """The figure and its source."""
        return {"value": round(self.value, 6), "source": self.source}


@dataclass(frozen=True)
class SpecFigures:
    """What one run tells about its speculative decoding: accept length, cycle time, throughput."""

    run_id: int | None
    accept_length: Figure | None
    cycle_ms: Figure | None
    throughput: Figure | None
    throughput_unit: str | None

    @property
    def speculative(self) -> bool:
        """Whether the run printed any figure only speculative decoding has."""
        return self.accept_length is not None

    def to_json(self) -> dict[str, Any]:
        """The run's figures as the report's `runs.speculative.a|b` rows."""
        return {"run": self.run_id,
                "accept_length": None if self.accept_length is None else self.accept_length.to_json(),
                "cycle_ms": None if self.cycle_ms is None else self.cycle_ms.to_json(),
                "throughput": None if self.throughput is None else {**self.throughput.to_json(),
                                                                    "unit": self.throughput_unit}}


def _in_ms(run: RunRecord, name: str) -> float | None:
    metric = run.metric(name)
    if metric is None or metric.unit not in _UNITS_MS:
        return None
    return metric.value * _UNITS_MS[metric.unit]


def accept_length(run: RunRecord) -> Figure | None:
    """The run's accept length: printed, else 1 + accepted / drafts from vLLM's counts, else None."""
    printed = run.metric(ACCEPT_LENGTH)
    if printed is not None and printed.value > 0:  # a 0 (an engine that had nothing to report) is no figure
        return Figure(printed.value, SERVER_SOURCE if printed.source == SERVER_SOURCE else f"printed ({printed.label})")
    drafts, accepted = run.metric(NUM_DRAFTS), run.metric(NUM_ACCEPTED_TOKENS)
    if drafts is not None and accepted is not None and drafts.value > 0:
        return Figure(1 + accepted.value / drafts.value, "1 + accepted tokens / drafts")
    return None


def server_accept_length(server: dict[str, Any] | None) -> float | None:
    """SGLang's `avg_spec_accept_length` in the data of the `server` probe (mean over the DP ranks that report
    it, as SGLang's own tests average them); None when no rank does (no speculative decoding, or no pass yet)."""
    ranks = (server or {}).get("internal_states")
    if not isinstance(ranks, dict):
        return None
    values = [state["state"]["avg_spec_accept_length"] for state in ranks.values()
              if isinstance(state, dict) and isinstance(state.get("state"), dict)
              and isinstance(state["state"].get("avg_spec_accept_length"), (int, float))]
    return sum(values) / len(values) if values else None


def with_server_accept_length(run: RunRecord, server: dict[str, Any] | None) -> RunRecord:
    """`run` with the server's accept length as a figure, when the run itself gives none (neither printed nor
    from counts) and `server` (the server probe's data after the run) reports one; else `run` unchanged."""
    value = server_accept_length(server)
    if value is None or accept_length(run) is not None:
        return run
    metric = Metric(ACCEPT_LENGTH, value, ACCEPT_UNIT, "Accept length (server)", SERVER_SOURCE)
    return replace(run, metrics=[*run.metrics, metric])


def cycle_ms(run: RunRecord, length: Figure | None, printed_ok: bool) -> Figure | None:
    """The cycle time in ms: the printed `cycle_time` when `printed_ok`, else accept length x mean TPOT."""
    printed = _in_ms(run, CYCLE_TIME) if printed_ok else None
    if printed is not None and printed > 0:
        return Figure(printed, "printed (cycle_time)")
    tpot = _in_ms(run, MEAN_TPOT)
    if length is None or tpot is None or tpot <= 0:  # a 0 ms TPOT (no token after the first) gives no cycle
        return None
    return Figure(length.value * tpot, "accept length x mean TPOT")


def throughput(run: RunRecord, measure: str) -> tuple[Figure, str] | None:
    """The run's throughput in `measure` (OUTPUT_THROUGHPUT in tok/s, or MEAN_TPOT as 1000 / TPOT per stream)."""
    if measure == OUTPUT_THROUGHPUT:
        metric = run.metric(OUTPUT_THROUGHPUT)
        if metric is None or metric.unit != "tok/s":
            return None
        return Figure(metric.value, f"printed ({metric.label})"), "tok/s"
    tpot = _in_ms(run, MEAN_TPOT)
    if tpot is None or tpot <= 0:
        return None
    return Figure(1000.0 / tpot, "1000 / mean TPOT"), "tok/s per stream"


def common_measure(*runs: RunRecord) -> str | None:
    """The throughput measure every run has: output token throughput first, else mean TPOT; None if neither."""
    for measure in (OUTPUT_THROUGHPUT, MEAN_TPOT):
        if all(throughput(run, measure) is not None for run in runs):
            return measure
    return None


def figures(run: RunRecord, measure: str | None, printed_cycle: bool) -> SpecFigures:
    """The speculative figures of `run`, its throughput in `measure`."""
    length = accept_length(run)
    found = throughput(run, measure) if measure else None
    return SpecFigures(run.id, length, cycle_ms(run, length, printed_cycle),
                       found[0] if found else None, found[1] if found else None)


def relative(before: float, after: float) -> float:
    """(after - before) / before."""
    return (after - before) / before


def shares(length_ratio: float, cycle_ratio: float) -> tuple[float, float] | None:
    """The accept length's and the cycle time's share of the change of L / C, from L_B/L_A and C_B/C_A;
    None when the rate did not change (nothing to share out)."""
    total = math.log(length_ratio) - math.log(cycle_ratio)
    if abs(total) < 1e-12:
        return None
    return math.log(length_ratio) / total, -math.log(cycle_ratio) / total


def break_even(length: float, spec_throughput: float, plain_throughput: float) -> float:
    """The accept length at which the speculative run would match the plain one: L x T0 / T (module doc)."""
    if spec_throughput <= 0:
        raise ValueError("the speculative run's throughput must be positive")
    return length * plain_throughput / spec_throughput


@dataclass(frozen=True)
class BreakEven:
    """The accept length a speculative run needs to match the run without speculative decoding."""

    run_id: int | None
    accept_length: float
    spec_throughput: float
    plain_throughput: float
    plain_source: str
    unit: str

    @property
    def needed(self) -> float:
        """L* = L x T0 / T."""
        return break_even(self.accept_length, self.spec_throughput, self.plain_throughput)

    def text(self) -> str:
        """"run 8 (60 tok/s at an accept length of 2) breaks even with run 9 (73.8 tok/s) at an accept length
        of 2.46: 0.46 short"."""
        gap = self.accept_length - self.needed
        where = f"{abs(gap):.2f} short" if gap < 0 else f"{gap:.2f} above it"
        return (f"run {self.run_id} ({_n(self.spec_throughput)} {self.unit} at an accept length of "
                f"{_n(self.accept_length)}) breaks even with {self.plain_source} ({_n(self.plain_throughput)} "
                f"{self.unit}) at an accept length of {self.needed:.2f}: {where}")

    def to_json(self) -> dict[str, Any]:
        """The break-even as a row of `runs.speculative.break_even`."""
        return {"run": self.run_id, "accept_length": self.accept_length, "throughput": self.spec_throughput,
                "plain_throughput": self.plain_throughput, "plain_source": self.plain_source, "unit": self.unit,
                "break_even_accept_length": round(self.needed, 4),
                "formula": "accept_length x plain_throughput / throughput"}


@dataclass(frozen=True)
class PlainRun:
    """The figure of a run without speculative decoding: a run record, or a number the user gave (tok/s)."""

    source: str
    run: RunRecord | None = None
    throughput: float | None = None


def _n(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.1f}"


def _pct(change: float) -> str:
    return f"{change * 100:+.0f} %".replace("-", "\u2212")


@dataclass
class Decomposition:
    """Runs A and B split into accept length and cycle time, what is missing for that, and the break-even."""

    a: SpecFigures
    b: SpecFigures
    missing: list[str] = field(default_factory=list)
    break_even: list[BreakEven] = field(default_factory=list)

    def values(self) -> tuple[float, float, float, float] | None:
        """(L_A, L_B, C_A, C_B) when both runs carry an accept length and a cycle time, else None."""
        la, lb, ca, cb = self.a.accept_length, self.b.accept_length, self.a.cycle_ms, self.b.cycle_ms
        if la is None or lb is None or ca is None or cb is None:
            return None
        return la.value, lb.value, ca.value, cb.value

    def parts(self) -> dict[str, float] | None:
        """The relative changes of L, C and L / C, and each part's share; None unless both runs carry L and C."""
        values = self.values()
        if values is None:
            return None
        la, lb, ca, cb = values
        out = {"accept_length": relative(la, lb), "cycle": relative(ca, cb),
               "stream_rate": relative(la / ca, lb / cb)}
        split = shares(lb / la, cb / ca)
        if split is not None:
            out["accept_length_share"], out["cycle_share"] = split
        return out

    def verdict(self) -> str | None:
        """What the split says, in words; None unless both runs carry L and C."""
        parts = self.parts()
        if parts is None:
            return None
        length_moved = abs(parts["accept_length"]) > MOVED
        cycle_moved = abs(parts["cycle"]) > MOVED
        if not length_moved and not cycle_moved:
            return (f"neither the accept length nor the cycle time moved by more than {MOVED * 100:.0f} %: "
                    "the shift is not in the decode cycle (prefill, queueing, the workload?)")
        if not length_moved:
            slower = "slower" if parts["cycle"] > 0 else "faster"
            return (f"each draft-and-verify cycle got {slower} and the drafter's accept length held: "
                    "the time per cycle (drafting, the verify pass, scheduling) moved, not the drafter's acceptance")
        if not cycle_moved:
            fewer = "fewer" if parts["accept_length"] < 0 else "more"
            return (f"the drafter gets {fewer} tokens accepted per cycle and the cycle time held: "
                    "the drafter's acceptance (its model, or the text it drafts on) moved, not the cycle's speed")
        share = parts.get("accept_length_share")
        split = (f": {share * 100:.0f} % of the change from the accept length, "
                 f"{parts['cycle_share'] * 100:.0f} % from the cycle time") if share is not None else ""
        return "both the accept length and the cycle time moved" + split

    def lines(self) -> list[str]:
        """The decomposition as the lines `explain run:A run:B` prints."""
        lines = []
        values, parts = self.values(), self.parts()
        if values is not None and parts is not None:
            la, lb, ca, cb = values
            lines.append(f"speculative decoding, run {self.a.run_id} -> run {self.b.run_id}: accept length "
                         f"{_n(la)} \u2192 {_n(lb)} ({_pct(parts['accept_length'])}); cycle {ca:.1f} \u2192 "
                         f"{cb:.1f} ms ({_pct(parts['cycle'])}); per-stream rate {_pct(parts['stream_rate'])}")
            lines.append(f"  {self.verdict()}")
            sources = sorted({side.cycle_ms.source for side in (self.a, self.b) if side.cycle_ms})
            lines.append(f"  (cycle: {', '.join(sources)})")
        lines.extend(f"speculative decoding: {text}" for text in self.missing)
        lines.extend(f"break-even: {row.text()}" for row in self.break_even)
        return lines

    def to_json(self) -> dict[str, Any]:
        """The report's `runs.speculative` object."""
        parts = self.parts()
        return {"a": self.a.to_json(), "b": self.b.to_json(), "decomposed": parts is not None,
                "changes": None if parts is None else {k: round(v, 4) for k, v in parts.items()},
                "verdict": self.verdict(), "missing": list(self.missing),
                "break_even": [row.to_json() for row in self.break_even],
                "model": "stream rate = accept_length / cycle_time; cycle_time = accept_length x mean TPOT "
                         "unless printed"}


def _missing(a: SpecFigures, b: SpecFigures, plain: PlainRun | None) -> list[str]:
    if not (a.speculative or b.speculative):
        return ["neither run printed an accept length (nor drafts and accepted tokens)"]
    missing = []
    plain_id = plain.run.id if plain is not None and plain.run is not None else None
    for side in (a, b):
        if side.accept_length is None and plain_id is not None and side.run_id == plain_id:
            missing.append(f"run {side.run_id} ran without speculative decoding: there is nothing of it to split")
        elif side.accept_length is None:
            hint = ("" if plain is not None else
                    f"; if it ran without speculative decoding, say so with --non-spec run:{side.run_id}")
            missing.append(f"run {side.run_id} printed no accept length (nor drafts and accepted tokens){hint}")
        elif side.cycle_ms is None:
            missing.append(f"run {side.run_id} has no mean TPOT above 0 (nor a cycle_time): its cycle time is unknown")
    if missing:
        missing.append("the throughput shift is not split into accept length and cycle time")
    return missing


def _throughput_of(run: RunRecord, measure: str) -> tuple[Figure, str]:
    found = throughput(run, measure)
    if found is None:
        raise ValueError(f"run {run.id} has no {measure}")  # common_measure said it has: a programming error
    return found


def _break_evens(spec_runs: list[RunRecord], plain: PlainRun) -> tuple[list[BreakEven], list[str]]:
    rows, missing = [], []
    for run in spec_runs:
        length = accept_length(run)
        if length is None:
            continue
        if plain.run is not None:
            measure = common_measure(run, plain.run)
            if measure is None:
                missing.append(f"run {run.id} and {plain.source} share no throughput figure (output token "
                               "throughput or mean TPOT): no break-even")
                continue
            mine, unit = _throughput_of(run, measure)
            plain_value = _throughput_of(plain.run, measure)[0].value
        else:
            found = throughput(run, OUTPUT_THROUGHPUT)
            if found is None or plain.throughput is None:
                missing.append(f"run {run.id} printed no output token throughput to set against "
                               f"{plain.source}: no break-even")
                continue
            mine, unit = found
            plain_value = plain.throughput
        if mine.value <= 0:
            missing.append(f"run {run.id}'s throughput is 0: no break-even")
            continue
        rows.append(BreakEven(run.id, length.value, mine.value, plain_value, plain.source, unit))
    return rows, missing


def decompose(a: RunRecord, b: RunRecord, plain: PlainRun | None = None) -> Decomposition | None:
    """Runs A and B split into accept length and cycle time (module doc), with the break-even against
    `plain`; None when neither run shows speculative decoding and no plain run is given."""
    printed_cycle = all(_in_ms(run, CYCLE_TIME) is not None for run in (a, b))
    side_a, side_b = figures(a, None, printed_cycle), figures(b, None, printed_cycle)
    if not (side_a.speculative or side_b.speculative) and plain is None:
        return None
    measure = common_measure(a, b)
    side_a, side_b = figures(a, measure, printed_cycle), figures(b, measure, printed_cycle)
    result = Decomposition(side_a, side_b, _missing(side_a, side_b, plain))
    if plain is not None:
        spec_runs = [run for run in (a, b) if accept_length(run) is not None]
        result.break_even, more = _break_evens(spec_runs, plain)
        result.missing.extend(more)
    return result
