"""`restore`: rebuild a snapshot's Python environment in a new venv, and prove it is A's.

The plan (`analysis.restore_plan`) says what to install from where; `runs.restore_build` finds A's Python
version here, makes the venv and installs with uv or pip; then the new venv is snapshotted (its packages
probe, not kept) and checked against A (`analysis.restore_verify`): "same versions, same binaries", or what
could not be reproduced and why. Never "restored" without that check. The exports (a requirements file, the
env file, the server command line) are the same plan and facts, printed for a rebuild elsewhere.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from driftcheck.analysis.restore_exports import env_file_text, server_command_text
from driftcheck.analysis.restore_plan import IndexOptions, RestorePlan, plan_restore
from driftcheck.analysis.restore_verify import RestoreCheck, check_restore
from driftcheck.api.compare import Side
from driftcheck.api.loading import load
from driftcheck.api.snapshot import take_snapshot
from driftcheck.errors import OptionError
from driftcheck.runs.restore_build import (
    RestoreBuildError,
    choose_installer,
    create_venv,
    find_python,
    find_uv,
    install_requirements,
)
from driftcheck.snapshot.jsontypes import JSONObject, object_or_empty
from driftcheck.snapshot.model import Snapshot
from driftcheck.store.snapshots import Store

INSTALLERS = ("auto", "uv", "pip")
EXPORTS = ("requirements", "env", "server-command")


@dataclass(frozen=True)
class Restored:
    """A restore: its plan, the interpreter found for it, and (unless a dry run) the new venv and its check.

    `python` is the interpreter the venv is (or would be) made from, None when A's Python version is not
    available here (`python_missing` says what to install); `check` is None on a dry run."""

    plan: RestorePlan
    installer: str
    python: str | None
    python_version: str | None
    python_missing: str | None
    venv: str | None = None
    check: RestoreCheck | None = None
    seconds: float | None = None

    @property
    def dry_run(self) -> bool:
        """Whether nothing was built (the plan only)."""
        return self.check is None

    @property
    def reproduced(self) -> bool:
        """Whether the new venv was checked and holds A's packages: same versions, same binaries."""
        return self.check is not None and self.check.same

    def to_json(self) -> JSONObject:
        """The `restore --format json` object."""
        return {"plan": self.plan.to_json(), "installer": self.installer, "dry_run": self.dry_run,
                "python": {"path": self.python, "version": self.python_version, "missing": self.python_missing},
                "venv": self.venv, "seconds": self.seconds,
                "check": self.check.to_json() if self.check is not None else None,
                "reproduced": self.reproduced}


def restore_plan(snapshot: Side, *, index_url: str | None = None, extra_index_urls: Sequence[str] = (),
                 find_links: Sequence[str] = (), no_index: bool = False, store: Store | None = None) -> RestorePlan:
    """What rebuilding `snapshot`'s environment installs from where (a reference, see `load`, or a Snapshot):

        print(driftcheck.restore_plan("@latest").requirements_text())

    The index options replace the indexes A's environment configured (PIP_INDEX_URL, ...)."""
    found = snapshot if isinstance(snapshot, Snapshot) else load(snapshot, store=store)
    return plan_restore(found, IndexOptions(index_url, tuple(extra_index_urls), tuple(find_links), no_index))


def restore_export(snapshot: Side, what: str, *, index_url: str | None = None, extra_index_urls: Sequence[str] = (),
                   find_links: Sequence[str] = (), no_index: bool = False, store: Store | None = None) -> str:
    """One export of `snapshot` as text: `requirements` (a pip/uv requirements file of A, every version pinned,
    direct URLs at their commit or hash), `env` (A's variables that matter, no secrets) or `server-command`
    (the command line A's inference server ran)."""
    if what not in EXPORTS:
        raise OptionError("what", what, f"one of {', '.join(EXPORTS)}")
    found = snapshot if isinstance(snapshot, Snapshot) else load(snapshot, store=store)
    if what == "env":
        return env_file_text(found)
    if what == "server-command":
        return server_command_text(found)
    return restore_plan(found, index_url=index_url, extra_index_urls=extra_index_urls, find_links=find_links,
                        no_index=no_index).requirements_text()


def restore(snapshot: Side, venv: str | Path | None = None, *, dry_run: bool = False, installer: str = "auto",
            index_url: str | None = None, extra_index_urls: Sequence[str] = (), find_links: Sequence[str] = (),
            no_index: bool = False, store: Store | None = None) -> Restored:
    """Rebuild `snapshot`'s packages in a new venv at `venv` and check it against A:

        result = driftcheck.restore("baseline:good", "/tmp/venv-a")
        result.reproduced, result.check.verdict()

    `dry_run` plans only (what, from where, with which Python and installer) and touches nothing. `installer`:
    uv when present (`auto`), or `uv`/`pip`. RestoreBuildError when A's Python version is not on this machine
    or the venv cannot be made; what could not be installed is in the check, not an error."""
    if installer not in INSTALLERS:
        raise OptionError("installer", installer, f"one of {', '.join(INSTALLERS)}")
    if venv is None and not dry_run:
        raise OptionError("venv", None, "the directory of the new venv (or dry_run=True)")
    found = snapshot if isinstance(snapshot, Snapshot) else load(snapshot, store=store)
    plan = restore_plan(found, index_url=index_url, extra_index_urls=extra_index_urls, find_links=find_links,
                        no_index=no_index)
    tool = choose_installer(installer)
    python, version, missing = _interpreter(plan)
    if dry_run:
        return Restored(plan, tool.kind, python, version, missing)
    if python is None:
        raise RestoreBuildError(f"Python {plan.python_version} of A is not available here: {missing}")
    started = time.monotonic()
    target = Path(venv or "").absolute()
    new_python = create_venv(Path(python), target)
    by_requirement = {package.requirement: package.key for package in plan.installable if package.requirement}
    outcome = install_requirements(tool, new_python, plan.indexes.option_lines(), list(by_requirement))
    failed = {by_requirement[requirement]: why for requirement, why in outcome.failed.items()
              if requirement in by_requirement}
    failed.update({package.key: f"not planned: {package.why}" for package in plan.packages
                   if package.requirement is None})
    rebuilt = take_snapshot(python=str(new_python), probes=("packages", "python"), keep=False, sign=False)
    new_packages = object_or_empty(rebuilt.probe_data("packages")).get("packages")
    here = object_or_empty(rebuilt.probe_data("python")).get("version")
    a_packages = object_or_empty(found.probe_data("packages")).get("packages")
    check = check_restore(a_packages, new_packages, failed,
                          (plan.python_version, here if isinstance(here, str) else None))
    return Restored(plan, tool.kind, python, version, missing, str(target), check,
                    round(time.monotonic() - started, 2))


def _interpreter(plan: RestorePlan) -> tuple[str | None, str | None, str | None]:
    """(path, version, None) of an interpreter of A's Python version here, else (None, None, what to install).
    A snapshot without a Python version is rebuilt with this interpreter's."""
    if plan.python_version is None:
        return sys.executable, sys.version.split()[0], None
    candidates = [path for path in (plan.interpreter, sys.executable) if path]
    found = find_python(plan.python_version, candidates)
    if found is not None:
        return str(found[0]), found[1], None
    minor = ".".join(plan.python_version.split(".")[:2])
    how = (f"uv python install {minor}" if find_uv() is not None
           else f"install python{minor} (the OS's packages, pyenv, or `pip install uv; uv python install {minor}`)")
    return None, None, f"no python{minor} found; {how}, then restore again"
