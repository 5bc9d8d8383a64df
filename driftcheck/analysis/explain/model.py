"""The result model of `explain`: ranked causes, notes, unchanged suspects and benchmark evidence."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from driftcheck.analysis.diff import SnapshotDiff

# The noise floor: a cause below this confidence (an unrelated variable such as LANG, a fact no rule knows)
# is shown but does not fail `check` on its own, and two or more such causes of no known effect fold into
# one line of text.
NOISE_FLOOR = 0.1

if TYPE_CHECKING:
    from driftcheck.analysis.signers import Signers

MAX_CONFIDENCE = 0.99


@dataclass(frozen=True)
class Explanation:
    """One ranked cause: a rule applied to one or more changes that share one root."""

    rule: str
    category: str
    title: str
    evidence: tuple[str, ...]
    confidence: float
    fix: str
    reboot_reset: bool = False
    revert: dict[str, Any] | None = None
    rank: int = 0
    # Why this cause matters (a package's relevance), shown to the reader; empty when the rule says it all.
    why: str = ""
    # For ordering causes of equal confidence: how much the subject matters (the prior, scaled by a
    # package's relevance), then how big the change is (a major release over a patch).
    relevance: float = 0.0
    magnitude: float = 0.0
    # The underlying change this cause is part of (a wheel and the library it ships); None: its own.
    root: str | None = None
    # The rules whose changes this cause took in because they share its root (not in the JSON contract).
    merged: tuple[str, ...] = ()
    # "command": `fix` pastes into a shell (known tools, parsed with shlex); "advice": a sentence to act on.
    fix_kind: str = "advice"

    def to_json(self) -> dict[str, Any]:
        """The explanation as one item of the `explanations` list of the JSON contract."""
        out: dict[str, Any] = {"rank": self.rank, "rule": self.rule, "category": self.category,
                               "title": self.title, "evidence": list(self.evidence),
                               "confidence": self.confidence, "fix": self.fix, "fix_kind": self.fix_kind}
        if self.why:
            out["why"] = self.why
        if self.reboot_reset:
            out["reboot_reset"] = True
        return out

    def ranked(self, rank: int) -> Explanation:
        """The same explanation at `rank`."""
        return replace(self, rank=rank)


@dataclass
class Explained:
    """The outcome of `explain`: ranked causes, notes (traps), unchanged suspects, benchmark evidence."""

    diff: SnapshotDiff
    explanations: list[Explanation] = field(default_factory=list)
    notes: list[Explanation] = field(default_factory=list)
    unchanged: list[dict[str, str]] = field(default_factory=list)
    bench: list[dict[str, Any]] = field(default_factory=list)
    rebooted: bool = False
    bench_note: str | None = None
    # Whether volatile readings were asked for (`--all`): they are then listed in `changes` too.
    include_volatile: bool = False
    # Who signed each side (analysis/signers.py), when the caller looked: said first, and in JSON.
    signers: Signers | None = None

    @property
    def drifted(self) -> bool:
        """Whether anything relevant differs: at least one ranked cause (notes and unchanged suspects are
        not drift). `diff` and `explain` exit 1 on this, volatile readings included when a rule weighs them."""
        return bool(self.explanations)

    def evidence_paths(self) -> set[str]:
        """Every change path that an explanation or a note cites as evidence."""
        return {path for e in [*self.explanations, *self.notes] for path in e.evidence}

    def to_json(self) -> dict[str, Any]:
        """The `diff --format json` / `explain --format json` object of DESIGN.md, with notes added."""
        # Imported here: the contract module reads this model (one way), the model only hands itself over.
        from driftcheck.analysis.explain.report import report

        return report(self)
