"""`driftcheck import`: a partial snapshot built from pasted tool outputs and environment reports.

A bug report carries text, not a snapshot: PyTorch's `collect_env`, vLLM's `collect-env`, SGLang's
`check_env`, or nvidia-smi's outputs. Each file's format is found by the registry of
`driftcheck.reports.formats`, and its facts land in the shapes of the probes that own them, so the result
diffs against a machine. Files of one machine combine: one report, its GPU descriptions (the table and `-q` of
the same GPUs merge, `gpu_descriptions`), and a topology matrix. What a report said that no probe holds is
kept under `host.report` (raw fields, and the lines nothing understood, verbatim and counted). Imported
snapshots are unsigned unless a key is given: a signature would vouch for facts driftcheck did not observe.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from driftcheck.errors import DriftcheckError, SnapshotError, UsageError
from driftcheck.nvidia.topo import merge_topology
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import ProbeOutcome
from driftcheck.reports import formats
from driftcheck.reports.facts import package_key as formats_key
from driftcheck.reports.formats.base import Format, Parsed
from driftcheck.reports.gpu_descriptions import merge_descriptions
from driftcheck.reports.paste import Paste, blank_runs_capped, split_sections
from driftcheck.snapshot.inputs import InputError, read_input
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, list_or_empty, object_or_empty, value_at
from driftcheck.snapshot.keys import KeyPair, load_redaction_secret
from driftcheck.snapshot.model import Snapshot, new_document, read_snapshot_file
from driftcheck.snapshot.signing import sign_document


class ImportFormatError(DriftcheckError):
    """A file given to `driftcheck import` that is no report or tool output driftcheck reads."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class ImportedFile:
    """One file read: its name, its text's digest, the format found, and what it said."""

    name: str
    sha256: str
    format: Format
    parsed: Parsed


def read_text(path: Path) -> str:
    """The file's text (undecodable bytes replaced); UsageError when it cannot be read."""
    try:
        return read_input(path, "a report").decode("utf-8", errors="replace")
    except InputError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _unknown_reason(text: str) -> str:
    error = next((line.strip() for line in text.splitlines() if line.strip().upper().startswith("ERROR")), None)
    if error:
        return f"holds an nvidia-smi error, not an output to import: {error}"
    names = ", ".join(fmt.title for fmt in formats.FORMATS)
    return f"not a report driftcheck can import (it reads {names}; this text: {_looks(text)})"


def _looks(text: str) -> str:
    """What a refused text looked like, in a few words: its size and its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "empty"
    first = lines[0] if len(lines[0]) <= 60 else lines[0][:57] + "..."
    return f"{len(lines)} line(s), the first {first!r}"


def parse_text(text: str, name: str) -> ImportedFile:
    """Detect and parse one pasted text; ImportFormatError when it is no known format or is broken."""
    fmt = formats.detect(text)
    if fmt is None:
        raise ImportFormatError(name, _unknown_reason(text))
    # Claimed only once the paste's line noise is gone (a quoted e-mail reply, a log prefix): read it so.
    capped = blank_runs_capped(text)
    text_read = capped if fmt.detect(capped) else "\n".join(Paste.of(capped).lines)
    try:
        parsed = fmt.parse(text_read)
    except ValueError as exc:  # NvidiaFormatError is a ValueError
        raise ImportFormatError(name, f"looks like {fmt.title} output but {exc}") from None
    if not parsed.probes:
        raise ImportFormatError(name, f"looks like {fmt.title} output but holds no fact driftcheck reads")
    return ImportedFile(name, hashlib.sha256(text.encode("utf-8")).hexdigest(), fmt, parsed)


@dataclass(frozen=True)
class UnreadSection:
    """A block of an issue body no format read whole: kept as text, counted, and never turned into facts."""

    name: str
    reason: str
    text: str


def parse_paste(text: str, name: str) -> tuple[list[ImportedFile], list[UnreadSection]]:
    """An issue body holding several tools' outputs, one `ImportedFile` per section a format read.

    The body is cut at fences, `<details>` tags and the first lines of known outputs (`split_sections`).
    With one section a format claims (and claims in the whole text too), the whole text is one paste, read as
    before (a report in its fence, the prose around it kept as unclaimed lines). Otherwise each claimed section
    is read by its format; a section that breaks its format's parser, or that no format claims, is kept as text.
    """
    sections = split_sections(text, formats.starts)
    found = [(section, formats.detect(section.text)) for section in sections]
    claimed = sum(1 for _, fmt in found if fmt is not None)
    if claimed == 0 or (claimed == 1 and formats.detect(text) is not None):
        return [parse_text(text, name)], []
    files: list[ImportedFile] = []
    unread: list[UnreadSection] = []
    for section, fmt in found:
        label = f"{name} {section.lines}"
        if fmt is None:
            if Paste.of(section.text).unclaimed():  # markup and log lines alone are no section
                unread.append(UnreadSection(label, "no format claims it", section.text))
            continue
        try:
            files.append(parse_text(section.text, label))
        except ImportFormatError as exc:
            unread.append(UnreadSection(label, exc.reason, section.text))
    return files, unread


# Which source wins a fact two sections state: a whole package list over a report's filtered one; any report
# over a Hugging Face `env` dump, which names a few versions in passing.
_SPECIFIC: dict[str, tuple[str, ...]] = {"pip-packages": ("packages",), "conda-list": ("packages",),
                                          "numactl-hardware": ("system",), "rocm-smi": ("gpu",),
                                          "ibstat": ("nccl",), "ibv-devinfo": ("nccl",), "amd-smi": ("gpu",)}
_SUMMARY = ("hf-env",)
# Formats whose variants are different commands of one tool (amd-smi list, static, version): one of each per body.
_BY_VARIANT = (*_SUMMARY, "amd-smi")


def _rank(item: ImportedFile, probe: str) -> int:
    if probe in _SPECIFIC.get(item.format.name, ()):
        return 0
    return 2 if item.format.name in _SUMMARY else 1


def merge_reports(files: Sequence[ImportedFile]) -> tuple[ImportedFile | None, list[JSONObject]]:
    """The environment reports among `files` as one: per probe, the facts of the more specific source win;
    two sources that disagree on a fact leave a conflict (path, both values, both sources), kept and shown.

    Two reports of one tool are refused (two machines, or one pasted twice): import one per snapshot.
    """
    reports = [f for f in files if f.parsed.role == "report"]
    seen: dict[tuple[str, str | None], ImportedFile] = {}
    for item in reports:
        kind = (item.format.name, item.parsed.variant if item.format.name in _BY_VARIANT else None)
        if kind in seen:
            raise UsageError(f"{item.name}: a second {item.format.title} report (the first was {seen[kind].name}); "
                             "import one per snapshot")
        seen[kind] = item
    if len(reports) < 2:
        return (reports[0] if reports else None), []
    conflicts: list[JSONObject] = []
    probes: dict[str, JSONObject] = {}
    for probe in sorted({p for item in reports for p in item.parsed.probes}):
        holders = sorted((r for r in reports if probe in r.parsed.probes), key=lambda r: _rank(r, probe))
        path = f"probes.{probe}.data"
        origin = {path: holders[0].name}
        merged = copy.deepcopy(holders[0].parsed.probes[probe])
        for other in holders[1:]:
            _merge_into(merged, other.parsed.probes[probe], path, other.name, origin, conflicts)
        probes[probe] = merged
    main = min(reports, key=lambda r: (_rank(r, ""), -len(r.parsed.probes)))
    fields = dict(main.parsed.fields)
    for item in reports:
        for key, value in item.parsed.fields.items():
            fields.setdefault(key if key not in fields or item is main else f"{item.format.name}: {key}", value)
    parsed = Parsed(probes=probes, role="report", variant=main.parsed.variant, fields=fields,
                    unclaimed=[line for r in reports for line in r.parsed.unclaimed],
                    noise=[line for r in reports for line in r.parsed.noise],
                    complete=sorted({p for r in reports for p in r.parsed.complete}),
                    cut=sorted({p for r in reports for p in r.parsed.cut}))
    return replace(main, parsed=parsed), conflicts


def _merge_into(mine: JSONObject, theirs: Mapping[str, JSONValue], path: str, name: str, origin: dict[str, str],
                conflicts: list[JSONObject]) -> None:
    """Add what `theirs` says and `mine` does not; a value both hold and that differs is a conflict."""
    for key, value in theirs.items():
        at = f"{path}.{key}"
        if key not in mine:
            mine[key] = copy.deepcopy(value)
            origin[at] = name
        elif isinstance(ours := mine[key], dict) and isinstance(value, dict):
            _merge_into(ours, value, at, name, origin, conflicts)
        elif mine[key] != value and key != "source" and not _same_name(key, mine[key], value):
            kept_from = origin[max((p for p in origin if at == p or at.startswith(p + ".")), key=len)]
            conflicts.append({"path": at, "kept": mine[key], "kept_from": kept_from, "other": value,
                              "other_from": name})


def _same_name(key: str, one: JSONValue, other: JSONValue) -> bool:
    """A package's name as two tools spell it (`PyYAML`, `pyyaml`): one name, no conflict."""
    return key == "name" and isinstance(one, str) and isinstance(other, str) and \
        formats_key(one) == formats_key(other)


def _machine_mismatch(gpu: JSONObject, topology: JSONObject) -> tuple[int, int] | None:
    """The GPU counts of a matrix and a GPU description that show two different machines, or None."""
    topo_gpus = [d for d in list_or_empty(topology.get("devices")) if str(d).startswith("GPU")]
    # A description may be trimmed (attached 8, one <gpu> kept): either count may match the matrix.
    counts = {len(object_or_empty(gpu.get("gpus"))), gpu.get("gpu_count")}
    if topo_gpus and len(topo_gpus) not in counts:
        return len(topo_gpus), max(c for c in counts if isinstance(c, int))
    return None


def _outcome(data: JSONObject) -> JSONObject:
    """A probe outcome as the runner writes it: the import read the facts, so the probe is `ok`."""
    return ProbeOutcome("ok", data=data).to_json()


def _one(files: Sequence[ImportedFile], role: str, what: str) -> ImportedFile | None:
    """The single file of `role`; UsageError naming both when there are two."""
    found = [f for f in files if f.parsed.role == role]
    if len(found) > 1:
        raise UsageError(f"{found[1].name}: a second {what} (the first was {found[0].name}); import one per snapshot")
    return found[0] if found else None


def combine(files: Sequence[ImportedFile], conflicts: list[JSONObject] | None = None) -> dict[str, JSONObject]:
    """The probes (name → outcome) of the files together: one report, one GPU description, one topology matrix.

    A GPU description (nvidia-smi) says more about the GPUs than a report's list of names, so its `gpu` and
    `pcie` replace the report's; the report's topology matrix, or a separate one, is merged into them. Given
    `conflicts` (the sections of one issue body, one machine by the user's word), GPU counts that disagree are
    recorded there instead of refused (a matrix of another count is then not merged).
    """
    report = _one(files, "report", "environment report")
    described = _one(files, "gpu", "GPU description (nvidia-smi -q, -q -x, --query-gpu CSV or the nvidia-smi table)")
    matrix = _one(files, "topology", "topology matrix (nvidia-smi topo -m)")
    probes: dict[str, JSONObject] = dict(report.parsed.probes) if report else {}
    topology = value_at(matrix.parsed.probes["pcie"], "topology") if matrix else None
    if report and matrix and value_at(probes.get("pcie"), "topology"):
        raise UsageError(f"{matrix.name}: a second topology matrix ({report.name} holds one); import one per snapshot")
    if described is not None:
        if report is not None:
            _check_same_count(report, described, conflicts)
            topology = topology or value_at(probes.get("pcie"), "topology")
        probes["gpu"] = described.parsed.probes["gpu"]
        links = value_at(probes.get("pcie"), "sysfs")
        probes["pcie"] = described.parsed.probes["pcie"]
        if links and not probes["pcie"].get("sysfs"):
            # lspci's links (keyed by bus id) say what a GPU description does not: kept beside it.
            probes["pcie"] = {**probes["pcie"], "sysfs": links}
    if isinstance(topology, dict) and (matrix is not None or described is not None):
        pcie: JSONObject = probes.get("pcie") or {"source": "nvidia-smi", "gpus": {}, "topology": None, "p2p": None,
                                                  "sysfs": None}
        mismatch = _machine_mismatch(probes["gpu"], topology) if "gpu" in probes else None
        holder = matrix or report
        if mismatch and (conflicts is None or holder is None):
            raise UsageError(f"the topology matrix shows {mismatch[0]} GPUs, the GPU description {mismatch[1]}: "
                             "import files of one machine together")
        if mismatch and conflicts is not None and holder is not None:
            # Sections of one body (one machine by the user's word) that disagree: the matrix is not merged into
            # GPUs it does not describe; the disagreement is kept and shown.
            conflicts.append({"path": "probes.pcie.data.topology", "kept": None,
                              "kept_from": described.name if described else None,
                              "other": f"a matrix of {mismatch[0]} GPUs", "other_from": holder.name})
        else:
            probes["pcie"] = merge_topology(pcie, topology)
    return {name: _outcome(data) for name, data in probes.items()}


def _check_same_count(report: ImportedFile, described: ImportedFile, conflicts: list[JSONObject] | None) -> None:
    """Refuse a report and a GPU description whose GPU counts show two different machines (or, for sections of
    one body, keep the description's count and record the report's as a conflict)."""
    counts = (value_at(report.parsed.probes.get("gpu"), "gpu_count"), described.parsed.probes["gpu"].get("gpu_count"))
    if None in counts or counts[0] == counts[1]:
        return
    if conflicts is None:
        raise UsageError(f"{described.name} describes {counts[1]} GPUs, the report lists {counts[0]}: import files "
                         "of one machine together")
    conflicts.append({"path": "probes.gpu.data.gpu_count", "kept": counts[1], "kept_from": described.name,
                      "other": counts[0], "other_from": report.name})


def _report_note(files: Sequence[ImportedFile]) -> JSONObject | None:
    """What the text reports said beyond the probes: tool, format, raw fields, unclaimed lines."""
    reports = [f for f in files if f.parsed.role == "report"]
    if not reports:
        return None
    item = reports[0]
    return {"tool": item.format.tool, "format": item.format.name, "variant": item.parsed.variant,
            "fields": dict(item.parsed.fields), "unclaimed": list(item.parsed.unclaimed),
            "unclaimed_count": len(item.parsed.unclaimed), "noise_count": len(item.parsed.noise)}


def _source(item: ImportedFile) -> JSONObject:
    """One source as the snapshot names it: file (or section), the format that read it, and what it claims
    whole (`complete`) or ends inside (`cut`)."""
    parsed = item.parsed
    return {"file": item.name, "format": item.format.title, "sha256": item.sha256,
            **({"variant": parsed.variant} if parsed.variant else {}),
            **({"complete": list(parsed.complete)} if parsed.complete else {}),
            **({"cut": list(parsed.cut)} if parsed.cut else {})}


def import_files(files: Sequence[ImportedFile], label: str | None = None, key: KeyPair | None = None,
                 unread: Sequence[UnreadSection] = (), one_body: bool = False) -> Snapshot:
    """A partial snapshot (origin "imported") of already-parsed files, signed only with `key`.

    Several reports (sections of one issue body, or files of one machine) merge into one (`merge_reports`);
    their conflicts, and the sections nothing read (`unread`), are kept under `host`. `one_body`: the files are
    sections of one pasted text, whose GPU counts may disagree without refusing the whole paste.
    """
    report, conflicts = merge_reports(files)
    gpu_conflicts: list[JSONObject] = []
    described = _merged_descriptions(files, gpu_conflicts)
    probes = combine([*([report] if report else []), *([described] if described else []),
                      *(f for f in files if f.parsed.role not in ("report", "gpu"))],
                     conflicts if one_body else None)
    conflicts += gpu_conflicts
    host: JSONObject = {"name": files[0].name if files else "imported", "kind": "imported",
                        "sources": [_source(f) for f in files]}
    redactor = Redactor(load_redaction_secret())
    note = _report_note([report] if report else [])
    if note is not None:
        # Raw fields and unclaimed lines are the user's text, kept verbatim: but never a secret in it.
        note["fields"] = {key: _field_value(redactor, key, str(value))
                          for key, value in object_or_empty(note["fields"]).items()}
        # As one list: a private key pasted over several lines is found whole.
        note["unclaimed"] = redactor.json([str(line) for line in list_or_empty(note["unclaimed"])])
        host["report"] = note
    if conflicts:
        host["conflicts"] = conflicts
    if unread:
        # Prose of an issue body is kept for the reader, but scrubbed (a pasted token) and bounded: a snapshot
        # is no place for a megabyte of discussion.
        host["unread_sections"] = [{"section": u.name, "reason": u.reason, "text": _kept_text(redactor, u.text)}
                                   for u in unread]
    complete = sorted({path for f in files for path in f.parsed.complete})
    if complete:
        host["complete"] = complete
    cut = sorted({path for f in files for path in f.parsed.cut})
    if cut:
        host["cut"] = cut
    # Every fact read from a paste is the user's text: an environment section's `HF_TOKEN`, a pip freeze line's
    # `git+https://TOKEN@`, a conda channel's `/t/TOKEN/` are digested wherever a format put them.
    kept_probes = {name: object_or_empty(redactor.json(outcome)) for name, outcome in probes.items()}
    document = new_document(object_or_empty(redactor.json(host)), kept_probes,
                            label=redactor.text(label) if label is not None else None, origin="imported")
    if key is not None:
        document = sign_document(document, key)
    return Snapshot(document, source="<imported>")


def _merged_descriptions(files: Sequence[ImportedFile], conflicts: list[JSONObject]) -> ImportedFile | None:
    """The GPU descriptions among `files` as one (`merge_descriptions`), named as its most detailed one."""
    described = [f for f in files if f.parsed.role == "gpu"]
    merged = merge_descriptions([(f.name, f.parsed) for f in described], conflicts)
    if merged is None:
        return None
    base_at, parsed = merged
    return replace(described[base_at], parsed=parsed)


def _field_value(redactor: Redactor, key: str, value: str) -> str:
    """A raw `Key: value` field as kept: a variable-shaped key (HF_TOKEN) by the name rule, prose keys
    ("Token path ?", whose value is a path) by the value's own shape only."""
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", key):
        return redactor.environ({key: value})[key]
    return redactor.text(value)


# How much of a section nothing read is kept in the snapshot.
UNREAD_KEPT_CHARS = 4000


def _kept_text(redactor: Redactor, text: str) -> str:
    kept = redactor.text(text[:UNREAD_KEPT_CHARS])
    rest = len(text) - UNREAD_KEPT_CHARS
    return kept + (f"\n[... {rest} more characters not kept]" if rest > 0 else "")


def import_texts(texts: Sequence[tuple[str, str, str]], label: str | None = None,
                 key: KeyPair | None = None) -> Snapshot:
    """A partial snapshot of pasted texts, each given as (where it came from, short name, text): a file, or
    standard input. A text may be a whole issue body holding several tools' outputs (`parse_paste`)."""
    if not texts:
        raise UsageError("give at least one file to import")
    files: list[ImportedFile] = []
    unread: list[UnreadSection] = []
    for where, short, text in texts:
        read, skipped = parse_paste(text, where)
        files += [replace(f, name=f.name.replace(where, short, 1)) for f in read]
        unread += [replace(u, name=u.name.replace(where, short, 1)) for u in skipped]
    snapshot = import_files(files, label=label, key=key, unread=unread, one_body=len(texts) == 1 and len(files) > 1)
    return Snapshot(snapshot.document, source=", ".join(where for where, _, _ in texts))


def import_snapshot(paths: Sequence[Path], label: str | None = None, key: KeyPair | None = None) -> Snapshot:
    """A partial snapshot (origin "imported") of the files at `paths`; typed errors for bad input."""
    return import_texts([(str(path), path.name, read_text(path)) for path in paths], label=label, key=key)


def read_snapshot_or_report(path: Path) -> Snapshot:
    """The snapshot file at `path`, or, when it holds a pasted report instead, that report imported on the fly.

    A JSON file is always read as a snapshot (its error stands); text that is neither says so in one line.
    """
    try:
        return read_snapshot_file(path)
    except SnapshotError as exc:
        try:
            text = read_input(path, "a report").decode("utf-8", errors="replace")
        except InputError:
            raise exc from None
        claimed = formats.detect(text) is not None or any(
            formats.detect(section.text) for section in split_sections(text, formats.starts))
        if text.lstrip("\ufeff \t\r\n").startswith(("{", "[")) or not claimed:
            if text.lstrip().startswith(("{", "[")):
                raise
            raise SnapshotError(str(path), "neither a snapshot nor a report driftcheck can import "
                                           f"({_unknown_reason(text)})") from None
        snapshot = import_texts([(str(path), path.name, text)])
        return Snapshot(snapshot.document, source=str(path))
