"""What else a user needs to rebuild A elsewhere: its environment variables that matter, as a file a shell
sources, and the command line its inference server was started with. Secrets never: a variable whose name
says credential (`probes/redact.py` decides) or whose value the snapshot holds redacted is named in a comment,
without a value. Pure functions of a snapshot.
"""

from __future__ import annotations

import shlex

from driftcheck.probes.env import performance_groups
from driftcheck.probes.redact import REDACTED_PATTERN, is_secret_name
from driftcheck.snapshot.jsontypes import list_or_empty, object_or_empty
from driftcheck.snapshot.model import Snapshot


def env_file_text(snapshot: Snapshot) -> str:
    """`export NAME=value` lines of A's variables in the performance families (`env_families` of the catalog:
    NCCL, CUDA, torch, OMP, ...), sorted; a credential is a comment naming it, never its value."""
    data = snapshot.probe_data("env") or {}
    variables = object_or_empty(data.get("vars"))
    # The families from the catalog, as the env probe derives its `groups` (older snapshots lack them).
    names = sorted({name for members in performance_groups(list(variables)).values() for name in members})
    lines = [f"# the environment variables that matter of snapshot {snapshot.short_id} (source this file)"]
    if not data:
        lines.append("# A's snapshot holds no env probe data: no variable to restore")
    for name in names:
        value = variables.get(name)
        if not isinstance(value, str):
            continue
        if is_secret_name(name) or REDACTED_PATTERN.search(value):
            lines.append(f"# {name} held a credential on A: not in the snapshot, set it yourself")
        else:
            lines.append(f"export {name}={shlex.quote(value)}")
    return "\n".join(lines) + "\n"


def server_command_text(snapshot: Snapshot) -> str:
    """The command line A's inference server ran (the server probe's `launch`), shell-quoted; a comment saying
    why when A recorded none. A credential argument stays as the snapshot holds it (redacted), said so."""
    data = snapshot.probe_data("server") or {}
    launch = object_or_empty(data.get("launch"))
    argv = [str(word) for word in list_or_empty(launch.get("cmdline"))]
    header = f"# the server command line of snapshot {snapshot.short_id}"
    if data.get("engine"):
        header += f" ({data.get('engine')} {data.get('version') or ''})".replace(" )", ")")
    if not argv:
        why = launch.get("why") or ("the snapshot was taken without --server" if not data else "not recorded")
        return f"{header}\n# none recorded: {why}\n"
    lines = [header]
    if any(REDACTED_PATTERN.search(word) for word in argv):
        lines.append("# a credential argument is redacted in the snapshot: give its value yourself")
    lines.append(shlex.join(argv))
    return "\n".join(lines) + "\n"
