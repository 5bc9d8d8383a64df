"""A feature file for node-feature-discovery's `local` source: drift, driver, CUDA, engine, baseline as labels.

The format is NFD's own (docs/usage/customization-guide.md and source/local/local.go of
kubernetes-sigs/node-feature-discovery, v0.20.0-devel at 76e6cc8): one `<namespace>/<name>[=<value>]` per
line, `#` lines are comments, a file over 64 kB is ignored, dot files are ignored, so the file is written as
`.driftcheck` and renamed. nfd-master keeps a label only when its namespace is `feature.node.kubernetes.io`
or a sub-namespace of it (pkg/apis/nfd/validate/validate.go) and its value is a Kubernetes label value: at
most 63 characters of `[A-Za-z0-9_.-]`, starting and ending with a letter or digit (apimachinery's
`IsValidLabelValue`). A value that is not (a driver string with a space, a long version) is made into one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from driftcheck.errors import DriftcheckError
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.snapshot.jsontypes import JSONValue
from driftcheck.snapshot.model import Snapshot

NAMESPACE = "driftcheck.feature.node.kubernetes.io"
FEATURE_FILE = "driftcheck"
LABEL_VALUE_MAX = 63
MAX_FILE_BYTES = 65536
_NOT_LABEL_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_EDGES = "_.-"


def label_value(text: str) -> str:
    """`text` as a Kubernetes label value: other characters as `_`, cut to 63, trimmed to alphanumeric ends."""
    return _NOT_LABEL_CHARS.sub("_", text)[:LABEL_VALUE_MAX].strip(_EDGES)


def _text(value: JSONValue) -> str | None:
    return None if value is None or value == "" else str(value)


def node_features(snapshot: Snapshot, verdict: DriftVerdict | None) -> dict[str, str]:
    """name -> label value: the facts a scheduler selects nodes by. A fact the snapshot lacks is left out,
    never given a stand-in value; `drift` and `baseline` only when a check ran."""
    gpu = snapshot.probe_data("gpu") or {}
    torch = snapshot.probe_data("torch") or {}
    server = snapshot.probe_data("server") or {}
    engine = _text(server.get("engine"))
    facts: dict[str, str | None] = {
        "drift": None if verdict is None else ("true" if verdict.drift else "false"),
        "baseline": None if verdict is None else verdict.reference,
        "driver": _text(gpu.get("driver_version")),
        "cuda-driver": _text(gpu.get("cuda_driver_version")),
        "cuda-torch": _text(torch.get("cuda_version")),
        "engine": engine,
        "engine-version": _text(server.get("version")) if engine else None,
    }
    features = {name: label_value(value) for name, value in facts.items() if value is not None}
    return {name: value for name, value in features.items() if value}


def feature_file_text(features: dict[str, str]) -> str:
    """The file's text: a comment saying who wrote it, then one `namespace/name=value` line per feature."""
    lines = ["# written by driftcheck export nfd; rewritten whole on every export"]
    lines += [f"{NAMESPACE}/{name}={value}" for name, value in features.items()]
    return "\n".join(lines) + "\n"


def write_feature_file(directory: Path, features: dict[str, str]) -> Path:
    """Write `directory/driftcheck` through a dot file NFD ignores, renamed over it; returns its path."""
    if not directory.is_dir():
        raise DriftcheckError(f"--features-dir {directory}: no such directory (NFD's features.d)")
    text = feature_file_text(features).encode("utf-8")
    if len(text) > MAX_FILE_BYTES:  # NFD would ignore the whole file
        raise DriftcheckError(f"the feature file would be {len(text)} bytes; NFD reads at most {MAX_FILE_BYTES}")
    path, temporary = directory / FEATURE_FILE, directory / f".{FEATURE_FILE}.{os.getpid()}"
    try:
        temporary.write_bytes(text)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise DriftcheckError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
