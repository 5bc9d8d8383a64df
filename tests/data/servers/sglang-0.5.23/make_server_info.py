"""Write what SGLang 0.5.23's `/server_info` answers for a few launch lines, computed by SGLang's own code.

Run with the unpacked sglang-0.5.23 wheel (and the light packages its argument modules import) on the path:

    PYTHONPATH=UNPACKED_WHEEL:LIGHT_DEPS python make_server_info.py

`/server_info` (sglang/srt/entrypoints/http_server.py) answers `build_server_info(server_args, scheduler_info)`
(sglang/srt/utils/common.py: `server_args.resolved_dict()`, `launch_command`, the scheduler's info, `kv_events`)
plus `startup_time`, `internal_states`, `version` and `frontend`. Here `server_args` comes from
`prepare_server_args(argv)`, the launcher's own function, on a CPU machine; `startup_time` from
`aggregate_scheduler_startup_times` with the weight-loading time of the two starts the issue reported (12.5 s
and 19 s, every other phase 0). What only a GPU run knows (the scheduler's token capacity, each DP rank's
internal state) is not written: `internal_states` is empty.
"""

from __future__ import annotations

import json
from pathlib import Path

from sglang.srt.observability.startup_time import aggregate_scheduler_startup_times
from sglang.srt.runtime_context import describe_kv_events_publisher
from sglang.srt.server_args import prepare_server_args
from sglang.version import __version__

HERE = Path(__file__).resolve().parent
BASE = ["--model-path", "Qwen/Qwen3-8B", "--tp-size", "4"]
SPECULATIVE = ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "Tengyunw/qwen3_8b_eagle3",
               "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
STARTS = {
    "start-a": (BASE, 12.5),
    "start-b": (BASE, 19.0),  # the same flags, restarted: only the weight-loading time differs
    "decode-cuda-graph-off": (BASE + ["--disable-decode-cuda-graph"], 12.5),
    "speculative-prefill": (BASE + SPECULATIVE + ["--speculative-attention-mode", "prefill"], 12.5),
    "speculative-decode": (BASE + SPECULATIVE + ["--speculative-attention-mode", "decode"], 12.5),
}


def server_info(argv: list[str], load_weight_s: float) -> dict[str, object]:
    """/server_info of a server started with `argv` whose weights took `load_weight_s` to load."""
    server_args = prepare_server_args(argv)
    info: dict[str, object] = dict(server_args.resolved_dict())
    info["launch_command"] = server_args.launch_command
    info["kv_events"] = describe_kv_events_publisher(server_args)
    info["startup_time"] = aggregate_scheduler_startup_times([{"load_weight": load_weight_s}])
    info["internal_states"] = []
    info["version"] = __version__
    info["frontend"] = "python"
    return info


def main() -> None:
    for name, (argv, load_weight_s) in STARTS.items():
        text = json.dumps(server_info(argv, load_weight_s), sort_keys=True, default=str)
        (HERE / f"{name}.json").write_text(text + "\n", "utf-8")
        (HERE / f"{name}.argv").write_text(" ".join(["python3", "-m", "sglang.launch_server", *argv]) + "\n")


if __name__ == "__main__":
    main()
