"""How often `explain` names the right cause of a real regression, and how it presents it.

Runs `driftcheck diff A B --format json` (the stable contract of DESIGN.md) on every snapshot pair of the
incident corpus (tests/data/incidents/<slug>/a.json, b.json, incident.yaml) and prints:

- top-1 and top-3 accuracy: a hit is an explanation whose category is the expected one (or one the
  incident also accepts) and whose evidence holds one of the incident's expected change paths;
- every miss, with what ranked above the expected cause;
- presentation defects: two of the first three explanations telling one change (sharing an evidence root:
  one package or the library it ships, one variable, one driver, one GPU setting, one module swap), and in
  any explanation, pins that would not restore A (`pip install X==V` where V is not X's version on A, or is
  not a version at all) and internal field paths in titles (`library.version`, `data.`, `version=1.3-0`).

- false causes on the null corpus (tests/data/null/<case>/a.json, b.json: an unchanged machine): every
  explanation ranked at or above the noise floor (`driftcheck.analysis.gate.DEFAULT_MIN_CONFIDENCE`, the
  confidence at which `check` fails) is one; the target is 0;
- false causes on the readings and not-taken null corpus (benchmarks/null_pairs.py, written from the
  snapshot pair base: only readings moved, only records of the taking changed, or a fact taken on one
  side only), counted the same way; the target is 0.

    python benchmarks/explain_accuracy.py [--corpus DIR] [--null DIR] [--format text|json]

The figures are what `explain` does on this corpus, not a timing: nothing here is machine dependent.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT / "tests" / "data" / "incidents"
DEFAULT_NULL = ROOT / "tests" / "data" / "null"

# ---- evidence roots: which underlying change an evidence path belongs to -----------------------------

_CUDA_WHEEL = re.compile(r"^nvidia-([a-z_]+?)(?:-cu\d+)?$")
# Modules that together make one facility: a swap between them is one cause.
_MODULE_FAMILIES = {"nv_peer_mem": "gpudirect-rdma", "nvidia_peermem": "gpudirect-rdma",
                    "nvidia": "driver", "nvidia_uvm": "driver", "nvidia_modeset": "driver", "nvidia_drm": "driver"}


def split_path(path: str) -> list[str]:
    """The segments of a change path: `a.b["c.d"].e[0]` -> ["a", "b", "c.d", "e", "0"]."""
    parts: list[str] = []
    for match in re.finditer(r'\.?([A-Za-z0-9_\-]+)|\[("(?:[^"\\]|\\.)*"|\d+)\]', path):
        if match.group(1) is not None:
            parts.append(match.group(1))
        else:
            token = match.group(2)
            parts.append(json.loads(token) if token.startswith('"') else token)
    return parts


def normalize_dist(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _package_root(name: str) -> tuple[str, ...]:
    dist = normalize_dist(name)
    wheel = _CUDA_WHEEL.match(dist)
    if wheel and dist.startswith("nvidia-") and wheel.group(1) not in ("ml-py",):
        return ("cuda-library", wheel.group(1).replace("_", "-"))
    return ("package", dist)


def evidence_root(path: str) -> tuple[str, ...]:
    """The underlying change an evidence path is a view of (a package and the library it ships are one)."""
    parts = split_path(path)
    if len(parts) < 4 or parts[0] != "probes":
        return ("path", path)
    probe, rest = parts[1], parts[3:]
    if probe == "packages" and len(rest) >= 2 and rest[0] in ("packages", "duplicates", "conda"):
        return _package_root(rest[1])
    if probe == "kernels" and len(rest) >= 2 and rest[0] in ("files", "modified_in_place"):
        dist = rest[1].split(":", 1)[0]
        if dist == "system":
            library = rest[1].split(":", 1)[1].rsplit("/", 1)[-1]
            return ("driver",) if library.startswith(("libcuda.", "libnvidia-ml.")) else ("system-library", library)
        return _package_root(dist)
    if probe == "torch" and rest:
        if rest[0] == "cuda_wheels" and len(rest) >= 2:
            return _package_root(rest[1])
        if rest[0] in ("nccl_version", "cudnn_version"):
            return ("cuda-library", rest[0].split("_")[0])
        return ("package", "torch")
    if probe == "nccl" and rest:
        if rest[0] in ("library", "libraries"):
            return ("cuda-library", "nccl")
        if rest[0] in ("env", "conf_files") and len(rest) >= 2:
            return ("variable", rest[-1]) if rest[0] == "env" else ("nccl-conf", rest[1])
        return ("nccl", rest[0], *rest[1:2])
    if probe == "env" and len(rest) >= 2 and rest[0] == "vars":
        return ("variable", rest[1])
    if probe == "process" and "environ" in rest:
        return ("variable", rest[-1])
    if probe == "gpu" and rest:
        if rest[0] in ("driver_version", "cuda_driver_version"):
            return ("driver",)
        if rest[0] == "gpus" and len(rest) >= 3:
            return ("gpu-setting", rest[2])
        return ("gpu", rest[0])
    if probe == "pcie" and rest:
        if rest[0] == "sysfs" and len(rest) >= 3:
            return ("acs",) if rest[2] == "acs_ctl" else ("pcie-link",)
        if rest[0] == "gpus" and len(rest) >= 3:
            return ("pcie-link",) if rest[2] == "link" else ("pcie", rest[2])
        return ("pcie", rest[0])
    if probe == "system" and rest:
        if rest[0] == "modules" and len(rest) >= 2:
            return ("module", _MODULE_FAMILIES.get(rest[1], rest[1])) if _MODULE_FAMILIES.get(rest[1]) != "driver" \
                else ("driver",)
        if rest[0] == "iommu" or (rest[0] == "cmdline" and len(rest) >= 2 and "iommu" in rest[1]):
            return ("iommu",)
        return ("system", rest[0])
    return ("probe", probe, *rest[:1])


# ---- presentation defects ----------------------------------------------------------------------------

_PIN = re.compile(r"pip install\s+(?:-U\s+|--upgrade\s+)?([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?==([^\s,;)'\"]+)")
# Field names of docs/data-shapes.md that mean nothing to a reader when they leak into a title.
FIELD_WORDS = frozenset({
    "probes", "data", "vars", "library", "libraries", "version", "versions", "mode_current", "mode_pending",
    "limit_w", "enforced_limit_w", "default_limit_w", "gen_current", "gen_max", "width_current", "width_max",
    "cpu_quota_cores", "memory_limit_bytes", "balancing", "governors", "acs_ctl", "build_id", "compiled_files",
    "sha256", "record_match", "cuda_wheels", "nccl_version", "cudnn_version", "driver_version",
    "cuda_driver_version", "persistence_mode", "clock_event_reasons", "source", "path", "conf_files",
    "modified_in_place", "jit_caches", "wheel_tags", "direct_url", "cuda_version", "numa_node", "cpu_affinity",
})
_DOTTED = re.compile(r"(?<![\w.\-/])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w\-/])")
_KEY_VALUE = re.compile(r"(?<![\w.\-])([a-z][a-z0-9_]*)=[^\s,;)]+")


def raw_path_in_title(title: str) -> str | None:
    """The first internal field path (or `field=value` rendering) in a title, or None when it reads cleanly."""
    for match in _DOTTED.finditer(title):
        segments = match.group(1).split(".")
        if segments[0] in ("probes", "data") or any(s in FIELD_WORDS or "_" in s.strip("_") for s in segments):
            return match.group(1)
    for match in _KEY_VALUE.finditer(title):
        if match.group(1) in FIELD_WORDS:
            return match.group(0)
    return None


def is_version(text: str) -> bool:
    """Whether `text` is a PEP 440 version (a git sha or a blank is not)."""
    if re.fullmatch(r"[0-9a-f]{7,40}", text) and not text.isdigit():
        return False
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:
        return bool(re.fullmatch(r"\d+(\.\d+)*([a-z]+\d*)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?", text))
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def invalid_pins(fix: str, versions_a: dict[str, str]) -> list[str]:
    """The `pip install X==V` of `fix` that would not restore A: V is not a version, or not X's version on A."""
    bad = []
    for name, version in _PIN.findall(fix or ""):
        version = version.rstrip(".")
        expected = versions_a.get(normalize_dist(name))
        if not is_version(version) or expected is None or version != expected:
            bad.append(f"{name}=={version}" + ("" if expected is None else f" (A has {expected})"))
    return bad


@dataclass(frozen=True)
class Defect:
    """One presentation defect among the first explanations."""

    kind: str  # duplicate | invalid_pin | raw_path
    ranks: tuple[int, ...]
    detail: str


def presentation_defects(explanations: Sequence[dict[str, Any]], versions_a: dict[str, str],
                         top: int = 3) -> list[Defect]:
    """Duplicate causes among the first `top` explanations; invalid pins and raw paths in any explanation."""
    ranked = sorted(explanations, key=lambda e: e.get("rank") or 0)
    defects: list[Defect] = []
    roots = [(e.get("rank"), {evidence_root(p) for p in e.get("evidence") or []}) for e in ranked[:top]]
    for i, (rank_i, roots_i) in enumerate(roots):
        for rank_j, roots_j in roots[i + 1:]:
            shared = roots_i & roots_j
            if shared:
                what = ", ".join(sorted(" ".join(root) for root in shared))
                defects.append(Defect("duplicate", (int(rank_i or 0), int(rank_j or 0)), f"both tell {what}"))
    for e in ranked:
        rank = int(e.get("rank") or 0)
        for pin in invalid_pins(str(e.get("fix") or ""), versions_a):
            defects.append(Defect("invalid_pin", (rank,), pin))
        raw = raw_path_in_title(str(e.get("title") or ""))
        if raw:
            defects.append(Defect("raw_path", (rank,), raw))
    return defects


# ---- scoring -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Expected:
    """What `explain` must put first for an incident."""

    categories: tuple[str, ...]
    evidence: tuple[str, ...]

    @classmethod
    def from_yaml(cls, document: dict[str, Any]) -> Expected:
        expected = document["expected"]
        categories = (expected["category"], *expected.get("also_accept", []))
        return cls(tuple(categories), tuple(expected["evidence"]))


def is_hit(explanation: dict[str, Any], expected: Expected) -> bool:
    """The expected category (or an accepted one) with one of the expected change paths as evidence."""
    return explanation.get("category") in expected.categories and \
        bool(set(explanation.get("evidence") or []) & set(expected.evidence))


@dataclass
class Score:
    """One incident's result."""

    slug: str
    hit_rank: int | None
    ranked: list[dict[str, Any]]
    defects: list[Defect] = field(default_factory=list)
    expected: Expected | None = None

    @property
    def top1(self) -> bool:
        return self.hit_rank == 1

    @property
    def top3(self) -> bool:
        return self.hit_rank is not None and self.hit_rank <= 3


def score(slug: str, report: dict[str, Any], expected: Expected, versions_a: dict[str, str]) -> Score:
    """Score one `diff --format json` report against the incident's expected cause."""
    ranked = sorted(report.get("explanations") or [], key=lambda e: e.get("rank") or 0)
    hit = next((int(e.get("rank") or i + 1) for i, e in enumerate(ranked) if is_hit(e, expected)), None)
    return Score(slug, hit, ranked, presentation_defects(ranked, versions_a), expected)


@dataclass
class Summary:
    """The corpus figures."""

    scores: list[Score]

    @property
    def total(self) -> int:
        return len(self.scores)

    @property
    def top1(self) -> int:
        return sum(s.top1 for s in self.scores)

    @property
    def top3(self) -> int:
        return sum(s.top3 for s in self.scores)

    def defect_counts(self) -> dict[str, int]:
        counts = {"duplicate": 0, "invalid_pin": 0, "raw_path": 0}
        for s in self.scores:
            for defect in s.defects:
                counts[defect.kind] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        def pct(n: int) -> float:
            return round(100.0 * n / self.total, 1) if self.total else 0.0
        return {
            "incidents": self.total, "top1": self.top1, "top3": self.top3,
            "top1_pct": pct(self.top1), "top3_pct": pct(self.top3),
            "defects": self.defect_counts(), "incidents_with_defects": sum(bool(s.defects) for s in self.scores),
            "misses": [_miss_json(s) for s in self.scores if not s.top1],
            "defect_list": [{"slug": s.slug, "kind": d.kind, "ranks": list(d.ranks), "detail": d.detail}
                            for s in self.scores for d in s.defects],
        }


def _miss_json(s: Score) -> dict[str, Any]:
    shown = s.ranked[:max(3, (s.hit_rank or 0))][:6]
    return {"slug": s.slug, "hit_rank": s.hit_rank,
            "expected": {"categories": list(s.expected.categories), "evidence": list(s.expected.evidence)}
            if s.expected else None,
            "ranked": [{k: e.get(k) for k in ("rank", "category", "title", "confidence", "evidence")} for e in shown]}


# ---- running the corpus --------------------------------------------------------------------------------

def package_versions(snapshot_path: Path) -> dict[str, str]:
    """{normalized name: version} of the packages a snapshot recorded (what a pin must restore)."""
    document = json.loads(snapshot_path.read_text("utf-8"))
    probe = (document.get("probes") or {}).get("packages") or {}
    packages = (probe.get("data") or {}).get("packages") or {}
    return {normalize_dist(str(rec.get("name") or name)): str(rec.get("version"))
            for name, rec in packages.items() if isinstance(rec, dict) and rec.get("version") is not None}


def diff_json(a: Path, b: Path) -> dict[str, Any]:
    """`driftcheck diff A B --format json`, run in this process through the command line's own entry point."""
    from driftcheck.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["diff", str(a), str(b), "--format", "json"])
    if code not in (0, 1):
        raise RuntimeError(f"driftcheck diff {a} {b} exited {code}")
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


def incident_dirs(corpus: Path) -> list[Path]:
    """Every incident folder of a corpus (one with an incident.yaml), in name order."""
    return sorted(p.parent for p in corpus.glob("*/incident.yaml"))


def run_corpus(corpus: Path) -> Summary:
    """Score every incident of `corpus`."""
    scores = []
    for folder in incident_dirs(corpus):
        document = yaml.safe_load((folder / "incident.yaml").read_text("utf-8"))
        report = diff_json(folder / "a.json", folder / "b.json")
        scores.append(score(folder.name, report, Expected.from_yaml(document), package_versions(folder / "a.json")))
    return Summary(scores)


@dataclass
class NullSummary:
    """The null corpus: pairs of an unchanged machine, and the causes explain ranked on them anyway."""

    pairs: int = 0
    floor: float = 0.0
    false_causes: list[tuple[str, str, float]] = field(default_factory=list)  # (case, title, confidence)

    def to_json(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "floor": self.floor, "false_causes": len(self.false_causes),
                "pairs_with_false_causes": len({case for case, _, _ in self.false_causes}),
                "list": [{"case": c, "title": t, "confidence": k} for c, t, k in self.false_causes]}


def null_dirs(corpus: Path) -> list[Path]:
    """Every pair folder of a null corpus (one with a.json and b.json), in name order."""
    return sorted(p.parent for p in corpus.glob("*/a.json") if (p.parent / "b.json").is_file())


def run_null(corpus: Path) -> NullSummary:
    """Every explanation at or above the noise floor on a pair of an unchanged machine."""
    from driftcheck.analysis.gate import DEFAULT_MIN_CONFIDENCE

    summary = NullSummary(floor=DEFAULT_MIN_CONFIDENCE)
    for folder in null_dirs(corpus):
        summary.pairs += 1
        report = diff_json(folder / "a.json", folder / "b.json")
        summary.false_causes.extend((folder.name, str(e.get("title")), float(e.get("confidence") or 0.0))
                                    for e in report.get("explanations") or []
                                    if float(e.get("confidence") or 0.0) >= DEFAULT_MIN_CONFIDENCE)
    return summary


def run_generated_null(folder: Path) -> NullSummary:
    """The readings-only and not-taken pairs of benchmarks/null_pairs.py, written under `folder`."""
    spec = importlib.util.spec_from_file_location("null_pairs", ROOT / "benchmarks" / "null_pairs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_pairs(folder)
    return run_null(folder)


def render_null(summary: NullSummary, name: str = "the null corpus") -> list[str]:
    """The null corpus's line, then every false cause."""
    pairs = len({case for case, _, _ in summary.false_causes})
    lines = [f"  false causes on {name}: {len(summary.false_causes)} in {pairs} of {summary.pairs} "
             f"unchanged pairs (at or above the noise floor {summary.floor})"]
    lines.extend(f"    {case}: [{confidence:.2f}] {title}" for case, title, confidence in summary.false_causes)
    return lines


def render_text(summary: Summary, corpus: Path) -> str:
    """The human report: figures, then every miss with what ranked above, then every defect."""
    figures = summary.to_json()
    counts = figures["defects"]
    shown = corpus.resolve().relative_to(ROOT) if corpus.resolve().is_relative_to(ROOT) else corpus
    lines = [f"explain on {summary.total} incidents of {shown}",
             f"  top-1: {summary.top1}/{summary.total} = {figures['top1_pct']}%",
             f"  top-3: {summary.top3}/{summary.total} = {figures['top3_pct']}%",
             f"  presentation defects: {sum(counts.values())} in {figures['incidents_with_defects']} incidents: "
             f"duplicate causes in the first three {counts['duplicate']}, invalid pins {counts['invalid_pin']}, "
             f"raw field paths in titles {counts['raw_path']}"]
    misses = [s for s in summary.scores if not s.top1]
    if misses:
        lines.append("")
        lines.append(f"Misses ({len(misses)}): expected cause not first")
        for s in misses:
            where = f"found at rank {s.hit_rank}" if s.hit_rank else "not among the explanations"
            expected = s.expected
            assert expected is not None
            lines.append(f"  {s.slug}: {'/'.join(expected.categories)} on {expected.evidence[0]}"
                         f"{' (or another listed path)' if len(expected.evidence) > 1 else ''} — {where}")
            for e in s.ranked[:max(3, s.hit_rank or 0)][:6]:
                mark = "*" if e.get("rank") == s.hit_rank else " "
                lines.append(f"    {mark}{e.get('rank')}. [{e.get('confidence')}] {e.get('category')}: "
                             f"{e.get('title')}")
    defective = [s for s in summary.scores if s.defects]
    if defective:
        lines.append("")
        lines.append("Presentation defects")
        for s in defective:
            for d in s.defects:
                ranks = " and ".join(f"#{r}" for r in d.ranks)
                lines.append(f"  {s.slug}: {d.kind.replace('_', ' ')} at {ranks}: {d.detail}")
    return "\n".join(lines) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Top-1/top-3 accuracy and presentation defects of `explain` on the "
                                                 "incident corpus.")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="folder of incidents (<slug>/a.json, b.json, incident.yaml); default %(default)s")
    parser.add_argument("--null", type=Path, default=DEFAULT_NULL,
                        help="folder of unchanged-machine pairs (<case>/a.json, b.json); default %(default)s")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not incident_dirs(args.corpus):
        sys.stderr.write(f"explain_accuracy: no incident folders (with incident.yaml) under {args.corpus}\n")
        return 2
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="explain-accuracy-") as home:
        # Snapshot files need no store, but the command line opens one: keep it away from the user's.
        os.environ["DRIFTCHECK_HOME"] = home
        summary = run_corpus(args.corpus)
        null = run_null(args.null)
        generated = run_generated_null(Path(home) / "readings-and-not-taken")
    if args.format == "json":
        print(json.dumps({"corpus": str(args.corpus), **summary.to_json(), "null": null.to_json(),
                          "null_readings_not_taken": generated.to_json()}, indent=2, ensure_ascii=False))
    else:
        text = render_text(summary, args.corpus).splitlines()
        # Beside top-1/top-3: a detector is also judged by what it claims when nothing changed.
        sys.stdout.write("\n".join([*text[:3], *render_null(null),
                                    *render_null(generated, "the readings and not-taken pairs"),
                                    *text[3:]]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
