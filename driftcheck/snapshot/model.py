"""The snapshot document: building one from probe outcomes, and reading one back with validation."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from driftcheck.errors import SnapshotError
from driftcheck.snapshot.bulk import without_gc
from driftcheck.snapshot.canonical import snapshot_id
from driftcheck.snapshot.inputs import InputError, read_input
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty
from driftcheck.snapshot.storable import storable
from driftcheck.snapshot.version import VERSION
from driftcheck.snapshot.vocabulary import STATUSES

if TYPE_CHECKING:
    from driftcheck.snapshot.signing import Verification

SCHEMA_VERSION = 1
REQUIRED_KEYS = ("schema", "created_at", "host", "probes")


@dataclass(frozen=True)
class Snapshot:
    """A validated snapshot document and where it was read from. The document is a value: nothing changes
    it once it is a Snapshot's (a changed document is a new Snapshot), so its id is worked out once."""

    document: dict[str, Any]
    source: str = "<memory>"

    @cached_property
    def id(self) -> str:
        # The hash of the canonical JSON of the whole document: a diff of a million facts asked for it
        # four times, at seconds each.
        return snapshot_id(self.document)

    @cached_property
    def verification(self) -> Verification:
        """The verdict on the document's signature (valid, unsigned or altered; no trust list), worked out once:
        a reference's tamper check and the signer a report names ask it of the same snapshot."""
        # Imported here: cryptography is needed by the snapshots whose signature is asked, not by every reader.
        from driftcheck.snapshot.signing import verify_document

        return verify_document(self.document)

    @property
    def short_id(self) -> str:
        return self.id[:12]

    @property
    def created_at(self) -> str:
        return str(self.document["created_at"])

    @property
    def host_name(self) -> str:
        return str(self.document["host"].get("name", "?"))

    @property
    def label(self) -> str | None:
        label = self.document.get("label")
        return str(label) if label is not None else None

    @property
    def probes(self) -> dict[str, dict[str, Any]]:
        return dict(self.document["probes"])

    def probe_data(self, name: str) -> dict[str, Any] | None:
        """The data of probe `name` when it succeeded, else None."""
        outcome = self.document["probes"].get(name)
        if not outcome or outcome.get("status") != "ok":
            return None
        data = outcome.get("data")
        return data if isinstance(data, dict) else None

    def status_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for outcome in self.document["probes"].values():
            counts[outcome["status"]] = counts.get(outcome["status"], 0) + 1
        return dict(sorted(counts.items()))

    def summary(self) -> JSONObject:
        """The identifying facts of a snapshot, as the `a`/`b` members of the diff JSON."""
        return {"id": self.id, "created_at": self.created_at, "host": self.host_name, "label": self.label,
                "source": self.source, "signed": bool(self.document.get("signature"))}


def utc_now() -> str:
    """The current time as an ISO 8601 UTC string with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_document(host: Mapping[str, JSONValue], probes: Mapping[str, Mapping[str, JSONValue]],
                 label: str | None = None, origin: str = "probed", created_at: str | None = None) -> JSONObject:
    """An unsigned snapshot document. `origin` is `probed`, `replayed` or `imported`. A byte that was not UTF-8
    anywhere in it (an environment value, a file name) is kept as its escape (`\\xe9`), a number that is not
    finite as null: never fatal."""
    document: JSONObject = {
        "schema": SCHEMA_VERSION,
        "created_at": created_at or utc_now(),
        "tool": {"name": "driftcheck", "version": VERSION},
        "origin": origin,
        "host": dict(host),
        "label": label,
        "probes": {name: dict(outcome) for name, outcome in probes.items()},
    }
    return object_or_empty(storable(document))


def _fail(source: str, reason: str) -> SnapshotError:
    return SnapshotError(source, reason)


def validate_document(document: object, source: str) -> JSONObject:
    """`document` if it is a snapshot this driftcheck can read; SnapshotError naming the problem if not."""
    if not isinstance(document, dict):
        raise _fail(source, "not a driftcheck snapshot (expected a JSON object)")
    missing = [key for key in REQUIRED_KEYS if key not in document]
    if missing:
        raise _fail(source, f"not a driftcheck snapshot (missing {', '.join(missing)})")
    schema = document["schema"]
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise _fail(source, f"not a driftcheck snapshot (schema {schema!r})")
    if schema > SCHEMA_VERSION:
        raise _fail(source, f"written by a newer driftcheck (schema {schema}; this version reads up to "
                            f"{SCHEMA_VERSION}): upgrade driftcheck to read it")
    if not isinstance(document["host"], dict) or not isinstance(document["probes"], dict):
        raise _fail(source, "malformed snapshot (host and probes must be objects)")
    for key, kinds, what in (("tool", (dict,), "an object"), ("created_at", (str,), "text"),
                             ("label", (str,), "text"), ("origin", (str,), "text")):
        if document.get(key) is not None and not isinstance(document[key], kinds):
            raise _fail(source, f"malformed snapshot ({key} must be {what})")
    for name, outcome in document["probes"].items():
        if not isinstance(outcome, dict) or outcome.get("status") not in STATUSES:
            raise _fail(source, f"malformed snapshot (probe {name!r} has no valid status)")
        problem = _outcome_problem(outcome, name)
        if problem:
            raise _fail(source, f"malformed snapshot (probe {name!r}: {problem})")
    signature = document.get("signature")
    if signature is not None and not isinstance(signature, dict):
        raise _fail(source, "malformed snapshot (signature must be an object)")
    return document


# Deeper than any probe writes (the deepest shape is ~8 levels); deeper input is refused before a
# recursive diff could overflow on it.
MAX_DEPTH = 64


# The containers inside probe data that every reader walks (diff, explain, show, report): each, when
# present and not null, must be an object ("object"), or an object of objects keyed by identity ("table"),
# or a list. A hand-edited or foreign document that breaks one is refused here, in one line, instead of
# deep inside a renderer. Leaves (versions, clocks, flags) may hold any JSON value: the readers check those.
DATA_SHAPES: dict[str, dict[str, str]] = {
    "env": {"vars": "object"},
    "gpu": {"gpus": "table"},
    "kernels": {"files": "table", "jit_caches": "object", "modified_in_place": "object"},
    "nccl": {"env": "object", "conf_files": "object", "infiniband": "object", "library": "object", "net": "object"},
    "packages": {"packages": "table", "duplicates": "object"},
    "pcie": {"gpus": "table", "p2p": "object", "sysfs": "object", "topology": "object",
             "topology.pairs": "object", "topology.devices": "list"},
    "process": {"processes": "object"},
    "python": {"sys_path": "list", "platform": "object"},
    "torch": {"devices": "object", "arch_list": "list", "backends": "object", "config": "object"},
}


def _shape_problem(name: str, data: Mapping[str, object]) -> str | None:
    """What breaks DATA_SHAPES in the data of probe `name`, or None."""
    for path, kind in DATA_SHAPES.get(name, {}).items():
        value: object = data
        for step in path.split("."):
            value = value.get(step) if isinstance(value, dict) else None
        if value is None:
            continue
        if kind == "list":
            if not isinstance(value, list):
                return f"data.{path} must be a list"
        elif not isinstance(value, dict):
            return f"data.{path} must be an object"
        elif kind == "table" and not all(isinstance(entry, dict) for entry in value.values()):
            return f"data.{path} must map each key to an object"
    return None


def _outcome_problem(outcome: Mapping[str, object], name: str = "") -> str | None:
    """What is wrong with the shape of one probe outcome (beyond its status), or None."""
    data = outcome.get("data")
    if data is not None and not isinstance(data, dict):
        return "data must be an object"
    if isinstance(data, dict):
        problem = _shape_problem(name, data)
        if problem:
            return problem
    if outcome.get("error") is not None and not isinstance(outcome["error"], (str, dict)):
        return "error must be text"
    duration = outcome.get("duration_s")
    if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))):
        return "duration_s must be a number"
    return None


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


# Wider than any counter a probe reads (NVML's 64-bit values included); a longer integer is no fact and
# would overflow the float arithmetic of diff and explain.
MAX_INT = 2**64


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 20 or abs(value := int(text)) > MAX_INT:
        raise ValueError(f"the integer {text[:20]}... is out of range (64 bits at most)")
    return value


def _unique_keys(pairs: list[tuple[str, JSONValue]]) -> JSONObject:
    """An object whose keys are all different: with a duplicate, the signed bytes and what a reader sees
    could disagree, so it is refused."""
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise ValueError(f"the key {duplicate[:40]!r} appears twice in one object")
    return document


def _check_values(value: object, depth: int = 0, strings: bool = True) -> None:
    """Refuse what JSON allows but a snapshot cannot hold: lone surrogates (not Unicode), absurd depth,
    integers beyond 64 bits. `strings=False` (the text was seen to hold no lone surrogate, and `_bounded_int`
    read every integer) checks the depth alone, visiting only objects and arrays."""
    if not strings:
        _check_depth(value, depth)
        return
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a string holds a lone surrogate, which is not Unicode text") from None
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        raise ValueError(f"the integer {str(value)[:20]}... is out of range (64 bits at most)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_values(key, depth + 1)
            _check_values(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_values(item, depth + 1)


def _check_depth(value: object, depth: int) -> None:
    """`_check_values` of the depth alone: a value deeper than MAX_DEPTH is refused, and the members of an
    object or array lie one level below it (a million variables cost one loop, not a million calls)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    members = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    if members and depth + 1 > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    for item in members:
        if isinstance(item, (dict, list)):
            _check_depth(item, depth + 1)


# A `\u` escape of a surrogate half (U+D800 to U+DFFF): the only way a string read from UTF-8 text can hold one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _may_hold_surrogates(text: str) -> bool:
    """Whether a string parsed from `text` may hold a lone surrogate: `text` escapes a surrogate half (a pair
    included: a cautious yes), or holds one itself (a str given, not UTF-8 bytes decoded)."""
    if _SURROGATE_ESCAPE.search(text) is not None:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# About 500 MiB of empty objects at most; a real snapshot (600 packages, 2,400 files, 8 GPUs) holds ~50,000.
MAX_CONTAINERS = 2_000_000


@without_gc
def parse_snapshot(text: bytes | str, source: str) -> Snapshot:
    """Read a snapshot from its JSON text; SnapshotError for truncated, non-JSON or foreign content."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise _fail(source, "not a driftcheck snapshot (not UTF-8 text)") from None
    # Each JSON object or array costs Python a few hundred bytes: a file of nothing but `{}` needs ~20 times its
    # size in memory (250 MB of it took over 4 GiB). A machine's snapshot holds tens of thousands; braces counted
    # (strings' included, so never fewer than there are) bound the memory before anything is built.
    containers = text.count("{") + text.count("[")
    if containers > MAX_CONTAINERS:
        raise _fail(source, f"not a driftcheck snapshot ({containers:,} objects and arrays, more than the "
                            f"{MAX_CONTAINERS:,} a machine's snapshot can hold)")
    try:
        document = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int,
                               object_pairs_hook=_unique_keys)
        _check_values(document, 0, _may_hold_surrogates(text))
    except json.JSONDecodeError as exc:
        # An error at the very end, or a string that runs to the end, means the file was cut short.
        at_end = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        hint = "truncated file" if at_end else "not valid JSON"
        raise _fail(source, f"{hint} (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise _fail(source, "not a driftcheck snapshot (nested too deeply)") from None
    except ValueError as exc:  # NaN, 1e400, duplicated keys, lone surrogates, an integer of thousands of digits
        raise _fail(source, f"not a driftcheck snapshot ({exc})") from None
    return Snapshot(validate_document(document, source), source)


def read_snapshot_file(path: Path) -> Snapshot:
    """Read and validate the snapshot file at `path`."""
    try:
        text = read_input(path, "a snapshot file")
    except InputError as exc:
        raise _fail(str(path), str(exc)) from None
    if not text.strip():
        raise _fail(str(path), "empty file, not a snapshot")
    return parse_snapshot(text, str(path))
