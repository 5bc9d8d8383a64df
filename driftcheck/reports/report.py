"""`driftcheck report`: the Markdown report and the snapshot beside it, as files or one .tar.gz.

The snapshot travels signed: as taken, or, when anonymized (its content changed), signed again with the
user's key, since the user vouches for the masked copy. Nothing existing is overwritten unless `force`.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import UsageError
from driftcheck.reports.anonymize import Anonymizer
from driftcheck.reports.markdown import render_report
from driftcheck.snapshot.canonical import pretty_json
from driftcheck.snapshot.keys import KeyPair
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.signing import sign_document, verify_document


@dataclass(frozen=True)
class ReportFiles:
    """What `write_report` wrote: the Markdown, the snapshot file, or the bundle holding both."""

    markdown: Path | None
    snapshot: Path | None
    bundle: Path | None
    length: int
    cut: bool


def prepare(snapshot: Snapshot, anonymizer: Anonymizer | None, key: KeyPair | None) -> Snapshot:
    """The snapshot to attach: masked and re-signed when anonymizing, else as it is."""
    if anonymizer is None:
        return snapshot
    document = anonymizer.document(snapshot.document)
    if snapshot.document.get("signature") and key is not None:
        document = sign_document(document, key)
    return Snapshot(document, source=snapshot.source)


def _check_new(paths: list[Path], force: bool) -> None:
    for path in paths:
        if path.exists() and not force:
            raise UsageError(f"{path} already exists; pass --force to overwrite it")


def write_report(snapshot: Snapshot, out_dir: Path, *, changes: str | None = None, against: str | None = None,
                 bundle: bool = False, force: bool = False) -> ReportFiles:
    """Write report.md and snapshot-<id>.json into `out_dir` (or, with `bundle`, `<out_dir>.tar.gz`)."""
    verdict = verify_document(snapshot.document)
    signer = verdict.fingerprint if verdict.intact else None
    snapshot_name = f"snapshot-{snapshot.short_id}.json"
    markdown = render_report(snapshot, snapshot_name, signer, changes=changes, against=against)
    snapshot_text = pretty_json(snapshot.document)
    cut = "_Cut to stay under" in markdown
    if bundle:
        target = out_dir.with_name(out_dir.name + ".tar.gz")
        _check_new([target], force)
        if not target.parent.is_dir():
            raise UsageError(f"{target}: directory {target.parent} does not exist")
        _write_bundle(target, out_dir.name, {"report.md": markdown, snapshot_name: snapshot_text})
        return ReportFiles(None, None, target, len(markdown), cut)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir} exists and is not a directory")
    md_path, snap_path = out_dir / "report.md", out_dir / snapshot_name
    _check_new([md_path, snap_path], force)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        md_path.write_text(markdown, "utf-8")
        snap_path.write_text(snapshot_text, "utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out_dir}: {exc.strerror or exc}") from None
    return ReportFiles(md_path, snap_path, None, len(markdown), cut)


def _write_bundle(target: Path, folder: str, members: dict[str, str]) -> None:
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for name, text in members.items():
                data = text.encode("utf-8")
                info = tarfile.TarInfo(f"{folder}/{name}")
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
        tmp.replace(target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
