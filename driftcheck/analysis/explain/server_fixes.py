"""The flags that give a serving engine's setting back its value on A, spelled for the release B runs.

A fix is only a fix when the engine accepts it: SGLang 0.5.23 refuses `--cuda-graph-max-bs` (ambiguous: its
CUDA-graph settings are per phase) and `--max-model-len` (its flag is `--context-length`), and vLLM 0.34
negates prefix caching with `--disable-prefix-caching` where 0.22 had `--no-enable-prefix-caching`. The
flags come from the flag table of B's release (driftcheck.serving.flag_tables), which was written from that
release's own parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftcheck.analysis.diff import Change
from driftcheck.analysis.explain.lookup import probe_data
from driftcheck.analysis.explain.values import show_value
from driftcheck.snapshot.model import Snapshot

# The flag tables (and the launch-line reader under them) are imported by the fixes that name a server
# setting: every explain imports this module, few compare two servers.
if TYPE_CHECKING:
    from driftcheck.serving.flag_tables import FlagTable, Restoration

_DATA = ("probes", "server", "data")


def setting_field(change: Change, table: FlagTable | None) -> str | None:
    """The engine field a server change is about: `server_args.<field>`, `launch.flags.<field>`, a phase of
    SGLang's resolved `cuda_graph_config` (`decode.max_bs` -> cuda_graph_max_bs_decode), or a vLLM gauge's
    label (`cache_config_info` `cache_dtype` -> kv_cache_dtype, through the table's configuration paths)."""
    parts = tuple(str(part) for part in change.parts)
    if parts[:3] != _DATA or len(parts) < 5:
        return None
    where = parts[3:]
    if where[0] == "models" and where[-1] == "max_model_len" and table is not None:
        # /v1/models reports the context length as max_model_len; SGLang's flag for it is --context-length
        # (sglang/srt/entrypoints/http_server.py: max_model_len=model_config.context_len).
        return "context_length" if table.engine == "sglang" else "max_model_len"
    if where[0] == "internal_states" and len(where) == 4 and where[2] == "resolved":
        return where[3]
    if where[0] == "server_args" and len(where) == 4 and where[1] == "cuda_graph_config":
        return f"cuda_graph_{where[3]}_{where[2]}"
    if where[0] == "server_args" or where[:2] == ("launch", "flags"):
        return where[2] if where[0] == "launch" else where[1]
    if where[0] == "vllm_config" and len(where) == 4 and table is not None:
        section = where[1].removesuffix("_info")
        label = where[3].removeprefix(f"{section}_")
        return table.field_at(f"{section}.{label}") or label
    return None


def setting_name(reference: Snapshot, current: Snapshot, change: Change) -> str:
    """The setting a change is about as its user types it, for titles: the flag of B's release that sets the
    field (`--disable-decode-cuda-graph`, `-tp` spelled long), else the field's name written as a flag."""
    from driftcheck.serving.flag_tables import table_for

    server_a, server_b = probe_data(reference, "server"), probe_data(current, "server")
    table = table_for(server_b.get("engine") or server_a.get("engine"), server_b.get("version"))
    field = setting_field(change, table) or str(change.parts[-1])
    spec = table.spec(field) if table is not None else None
    long_flags = [flag for flag in spec.flags if flag.startswith("--")] if spec is not None else []
    return long_flags[0] if long_flags else "--" + field.replace("_", "-")


def restore_phrase(reference: Snapshot, current: Snapshot, change: Change) -> str:
    """"with --tp-size 4", "without --disable-decode-cuda-graph": what to change on B's command line so the
    setting has A's value, for B's release; when that release has no flag for it, said so, with A's."""
    from driftcheck.serving.flag_tables import table_for

    server_a, server_b = probe_data(reference, "server"), probe_data(current, "server")
    engine = server_b.get("engine") or server_a.get("engine")
    table_b = table_for(engine, server_b.get("version"))
    field = setting_field(change, table_b)
    if field is None or table_b is None:
        return f"with {_plain_flag(change)} as on A ({show_value(change.before)})"
    spec = table_b.spec(field)
    if change.before is None and spec is not None and tuple(map(str, change.parts[3:5])) == ("launch", "flags"):
        # A's command line did not name it: leaving it out is the restoring change, whatever its default.
        return "without " + " / ".join(spec.flags)
    restoration = table_b.restoring(field, change.before)
    if restoration is not None:
        return restoration.text
    table_a = table_for(engine, server_a.get("version"))
    on_a = table_a.restoring(field, change.before) if table_a is not None else None
    release = f"{table_b.engine} {show_value(server_b.get('version'))}"
    if spec is None:
        said_on_a = f"; on A's release it was {_said(on_a)}" if on_a is not None else ""
        return f"with {field} as on A ({show_value(change.before)}): {release} has no flag for it{said_on_a}"
    return f"with {field} as on A ({show_value(change.before)}): no flag of {release} takes that value"


def _said(restoration: Restoration) -> str:
    return restoration.text.removeprefix("with ")


def _plain_flag(change: Change) -> str:
    """The flag named after the changed key, when no table says how the engine spells it."""
    return "--" + str(change.parts[-1]).replace("_", "-")
