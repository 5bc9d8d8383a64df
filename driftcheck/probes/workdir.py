"""`workdir` probe: which code a run ran, as git knows it: the commit checked out in the run's working
directory, and whether files git tracks were changed on top of it.

`driftcheck run` asks for it (`ProbeOptions.workdir`, the directory the command ran in), so a run record's
snapshot says which version of the benchmark ran; `explain run:A run:B` then names a new commit as a cause
where the machine did not change. The directory's path itself is not recorded (it says how the machine is
laid out, not what ran), only what git answers about it. `parse_git` is a pure function of git's output.
"""

from __future__ import annotations

from driftcheck.errors import CommandTimeout
from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable

# `git rev-parse HEAD` prints a 40 (SHA-1) or 64 (SHA-256 repositories) hex digit object name.
_HASH_LENGTHS = (40, 64)


class WorkdirProbe(Probe):
    name = "workdir"
    description = "the git commit of the directory a run ran in, and whether tracked files were changed on it"
    timeout_s = 15.0
    cheap = True
    on_request = True

    @classmethod
    def requested(cls, options: ProbeOptions) -> bool:
        return bool(options.workdir)

    def gather(self, host: Host, options: ProbeOptions) -> dict[str, str | int]:
        directory = options.workdir
        if not directory:
            raise ProbeUnavailable("no working directory asked for (driftcheck run records its own)")
        try:
            head = host.run(["git", "-C", directory, "rev-parse", "HEAD"], timeout_s=self.timeout_s / 2)
            if head.returncode != 0:
                raise ProbeUnavailable("the run's directory is not in a git work tree with a commit")
            # Tracked files only: build outputs and logs a benchmark writes are no change to its code.
            status = host.run(["git", "-C", directory, "status", "--porcelain", "--untracked-files=no"],
                              timeout_s=self.timeout_s / 2)
        except FileNotFoundError:
            raise ProbeUnavailable("git is not installed") from None
        except CommandTimeout:
            raise ProbeUnavailable("git did not answer in time") from None
        return {"head": head.stdout, "status": status.stdout, "status_code": status.returncode}

    def parse(self, raw: object) -> dict[str, object]:
        if not isinstance(raw, dict) or not isinstance(raw.get("head"), str):
            raise ValueError("workdir raw material holds no `git rev-parse HEAD` output")
        status = raw.get("status") if raw.get("status_code") == 0 else None
        return parse_git(raw["head"], status if isinstance(status, str) else None)


def parse_git(head: str, status: str | None) -> dict[str, object]:
    """{commit, modified_files} from `git rev-parse HEAD` and `git status --porcelain --untracked-files=no`
    (None when git could not say: `modified_files` is then None too)."""
    commit = head.strip()
    if len(commit) not in _HASH_LENGTHS or any(c not in "0123456789abcdef" for c in commit):
        raise ValueError(f"`git rev-parse HEAD` printed no object name: {commit[:80]!r}")
    modified = None if status is None else sum(1 for line in status.splitlines() if line.strip())
    return {"commit": commit, "modified_files": modified}
