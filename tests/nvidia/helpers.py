"""Helpers for the NVIDIA tests: the recorded tool outputs under tests/data/nvidia, and replay directories."""

from __future__ import annotations

import json
from pathlib import Path

NVIDIA_DATA = Path(__file__).resolve().parent.parent / "data" / "nvidia"


def nvidia_text(relative: str) -> str:
    """A recorded NVIDIA tool output, as text."""
    return (NVIDIA_DATA / relative).read_text("utf-8")


def make_replay(root: Path, commands: dict[tuple[str, ...], dict[str, object]] | None = None,
                files: dict[str, bytes] | None = None, dirs: dict[str, list[str]] | None = None) -> Path:
    """Write a recording directory (host.json + files/) that ReplayHost reads: a machine with these outputs."""
    for path, content in (files or {}).items():
        target = root / "files" / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    root.mkdir(parents=True, exist_ok=True)
    document = {"format": 1, "host": {"name": "gpu-node", "kind": "local"}, "environ": {}, "missing": {},
                "dirs": dirs or {}, "scripts": {},
                "commands": {json.dumps(list(argv)): {"argv": list(argv), "stdout": "", "stderr": "",
                                                      "returncode": 0, **result}
                             for argv, result in (commands or {}).items()}}
    (root / "host.json").write_text(json.dumps(document), "utf-8")
    return root
