"""Build the null corpus: pairs of snapshots of an UNCHANGED machine (tests/data/null/README.md).

    python tests/data/null/build.py                 # the replayed pairs (deterministic, from tests/data/hosts)
    python tests/data/null/build.py --raw DIR       # also the live pairs, from unscrubbed snapshots in DIR

Replayed pairs: each recording under tests/data/hosts replayed with every built-in probe and the options
it was recorded with, against a copy of itself where only what a reboot or a VM's memory balloon moves
was edited (the boot id and uptime; NUMA node 0's MemTotal).

Live pairs: snapshots taken on the 2-CPU build VM (`driftcheck snapshot --python V -o DIR/NAME.json`, see
README.md for when and how each was taken), scrubbed here the same way on both sides: host name, boot id,
kernel build string, local paths, and every environment variable outside a short list of ordinary ones.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
HOSTS = HERE.parent / "hosts"
sys.path.insert(0, str(ROOT))

from driftcheck.hosts import ReplayHost  # noqa: E402
from driftcheck.probes import ProbeOptions, builtin_probes  # noqa: E402
from driftcheck.probes.prober import Prober  # noqa: E402
from driftcheck.probes.redact import Redactor  # noqa: E402

GIB_KIB = 1024 * 1024
# When the replayed pairs say they were taken: fixed, so a rebuild writes the same bytes.
TAKEN = ("2026-12-01T23:40:00.000000Z", "2026-12-02T00:00:00.000000Z")
REBOOTED_BOOT_ID = "0b7e9c52-41d6-4a8e-b2f3-6c1d0e9a7f48"

# ---- live pairs: (case, A, B, what happened between) ---------------------------------------------------
LIVE = [
    ("minutes-apart-3min", "t00", "t03", "nothing: taken 3 minutes apart"),
    ("minutes-apart-6min", "t03", "t09", "nothing: taken 6 minutes apart"),
    ("minutes-apart-9min", "t00", "t09", "nothing: taken 9 minutes apart"),
    ("minutes-apart-12min", "t00", "t12", "nothing: taken 12 minutes apart"),
    ("minutes-apart-15min", "t00", "t15", "nothing: taken 15 minutes apart"),
    ("minutes-apart-around-hogs", "idle1", "idle2", "two CPU hogs ran and stopped between the two"),
    ("cpu-hogs", "idle1", "hog1", "B under two `yes > /dev/null` hogs (both CPUs busy)"),
    ("cpu-hogs-both-sides", "hog1", "hog2", "both under two `yes > /dev/null` hogs"),
    ("cpu-hogs-reference", "hog2", "idle2", "A under two CPU hogs, B idle again"),
    ("force-reinstall-same-wheels", "pre_reinstall", "post_reinstall",
     "`pip install --force-reinstall markupsafe==3.0.4 pyyaml==6.0.4` of the same wheels in the probed venv"),
    ("drop-page-cache", "pre_drop", "post_drop",
     "`sync; echo 3 > /proc/sys/vm/drop_caches` (permitted: Cached 227 -> 129 MB, dmesg `drop_caches: 3`)"),
    ("paste-against-own-snapshot", "paste1", "own",
     "A: `python -m torch.utils.collect_env` of the venv, imported; B: a snapshot of the same machine and venv"),
    ("two-imports-of-one-paste", "paste1", "paste2", "one collect_env paste imported twice"),
]

# Environment variables of the build VM kept in the live pairs (the others named the hosting).
KEPT_VARS = {"DEBIAN_FRONTEND", "HOME", "LANG", "PATH", "PIP_DISABLE_PIP_VERSION_CHECK", "PYTHONDONTWRITEBYTECODE",
             "PYTHONUNBUFFERED", "SHELL", "TERM", "PWD", "OLDPWD", "SHLVL", "_"}
# The strings that identify the build VM or its local paths (its folders, its kernel's build string) are not
# written here: they lie beside the raw snapshots, in DIR/replaced.json, an object of what the VM said to
# what the corpus says instead (e.g. its venv's folder to "/opt/ml-venv"), applied longest first.
REPLACED_FILE = "replaced.json"
SCRUBBED_BOOT_ID = "5d0c6a1e-7f3b-4c2a-9e84-0b6f2d9a1c37"


def _write(case: str, a: dict[str, Any], b: dict[str, Any], source: str) -> None:
    folder = HERE / case
    folder.mkdir(exist_ok=True)
    for name, document in (("a.json", a), ("b.json", b)):
        (folder / name).write_text(json.dumps(document, sort_keys=True, ensure_ascii=False) + "\n", "utf-8")
    (folder / "SOURCE").write_text(source.strip() + "\n", "utf-8")


# ---- replayed pairs --------------------------------------------------------------------------------------

def _replay(recording: Path, label: str, taken: str) -> dict[str, Any]:
    manifest = json.loads((recording / "host.json").read_text("utf-8"))
    options = ProbeOptions.from_json(manifest.get("options") or {})
    redactor = Redactor(b"null-corpus")
    prober = Prober(ReplayHost(recording), redactor, options=options)
    document = prober.snapshot(builtin_probes(redactor), label=label).document
    document["created_at"] = taken
    for outcome in document["probes"].values():
        outcome["duration_s"] = 0.1  # how long a replay took says nothing of the machine
    return document


def _edited_copy(recording: Path, tmp: Path, edits: dict[str, str]) -> Path:
    copy = tmp / recording.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(recording, copy)
    for path, text in edits.items():
        (copy / "files" / path.lstrip("/")).write_text(text, "utf-8")
    return copy


def _rebooted(recording: Path) -> dict[str, str]:
    uptime = (recording / "files" / "proc" / "uptime").read_text("utf-8").split()
    # 20 minutes after the new boot; the idle counter scaled alike.
    return {"/proc/sys/kernel/random/boot_id": REBOOTED_BOOT_ID + "\n",
            "/proc/uptime": f"1200.00 {float(uptime[1]) * 1200 / max(float(uptime[0]), 1.0):.2f}\n"}


def _node0_grown(recording: Path) -> dict[str, str]:
    path = "/sys/devices/system/node/node0/meminfo"
    text = (recording / "files" / path.lstrip("/")).read_text("utf-8")
    old = next(line for line in text.splitlines() if "MemTotal:" in line)
    return {path: text.replace(old, f"Node 0 MemTotal:       {int(12.5 * GIB_KIB)} kB")}


def build_replayed() -> list[str]:
    """Every replayed pair; returns the case names."""
    cases = []
    with tempfile.TemporaryDirectory(prefix="null-corpus-") as tmp:
        for recording in sorted(p.parent for p in HOSTS.glob("*/host.json")):
            if not (recording / "files" / "proc" / "sys" / "kernel" / "random" / "boot_id").is_file():
                continue
            case = f"replayed-reboot-{recording.name}"
            a = _replay(recording, "before the reboot", TAKEN[0])
            b = _replay(_edited_copy(recording, Path(tmp), _rebooted(recording)), "after the reboot", TAKEN[1])
            _write(case, a, b, f"tests/data/hosts/{recording.name} replayed with every built-in probe (A), and a "
                               "copy of it with only /proc/sys/kernel/random/boot_id and /proc/uptime edited (B): "
                               "the same machine after a reboot, nothing else changed.")
            cases.append(case)
        recording = HOSTS / "debian12-vm-docker"
        a = _replay(recording, "node 0 as recorded", TAKEN[0])
        b = _replay(_edited_copy(recording, Path(tmp), _node0_grown(recording)), "node 0 grown", TAKEN[1])
        _write("replayed-numa-node-memory-grew", a, b,
               "tests/data/hosts/debian12-vm-docker replayed (A), and a copy with only NUMA node 0's MemTotal "
               "edited to 12.5 GiB (B): as measured on a VM whose node 0 grew 7.4 -> 12.5 GB in 20 minutes "
               "with nothing else changed (the hypervisor adds and takes memory while it runs).")
        cases.append("replayed-numa-node-memory-grew")
        recording = HOSTS / "cpu-venv-patched-markupsafe"
        _write("replayed-twice-cpu-venv", _replay(recording, "first", TAKEN[0]), _replay(recording, "second", TAKEN[1]),
               "tests/data/hosts/cpu-venv-patched-markupsafe replayed twice, 20 minutes apart: nothing changed.")
        cases.append("replayed-twice-cpu-venv")
    return cases


# ---- live pairs --------------------------------------------------------------------------------------------

def read_replaced(raw: Path) -> dict[str, str]:
    """What the raw folder's replaced.json says to replace, longest first (a folder before its parent)."""
    path = raw / REPLACED_FILE
    if not path.is_file():
        raise SystemExit(f"{path} is missing: the live pairs are written only scrubbed of the VM's own strings")
    replaced = json.loads(path.read_text("utf-8"))
    if not isinstance(replaced, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in replaced.items()):
        raise SystemExit(f"{path}: expected an object of strings to strings")
    return dict(sorted(replaced.items(), key=lambda item: -len(item[0])))


def _replace_strings(value: Any, replaced: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in replaced.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace_strings(item, replaced) for item in value]
    if isinstance(value, dict):
        return {_replace_strings(key, replaced): _replace_strings(item, replaced) for key, item in value.items()}
    return value


def scrub(document: dict[str, Any], replaced: dict[str, str]) -> dict[str, Any]:
    """A live snapshot without what names the build VM: the same edit on both sides of a pair."""
    document = {key: value for key, value in document.items() if key != "signature"}
    document["host"] = {**document["host"], "name": "recorded-host"} if document["host"].get("kind") != "imported" \
        else document["host"]
    probes = document["probes"]
    env = (probes.get("env") or {}).get("data") or {}
    if "vars" in env:
        env["vars"] = {name: value for name, value in env["vars"].items() if name in KEPT_VARS}
    system = (probes.get("system") or {}).get("data") or {}
    if system.get("boot_id"):
        system["boot_id"] = SCRUBBED_BOOT_ID
    scrubbed: dict[str, Any] = _replace_strings(document, replaced)
    return scrubbed


def build_live(raw: Path) -> list[str]:
    """Every live pair whose two raw snapshots are in `raw`; returns the case names."""
    cases = []
    replaced = read_replaced(raw)
    for case, first, second, between in LIVE:
        a_path, b_path = raw / f"{first}.json", raw / f"{second}.json"
        if not (a_path.is_file() and b_path.is_file()):
            print(f"skipped {case}: {a_path.name} or {b_path.name} not in {raw}", file=sys.stderr)
            continue
        a = scrub(json.loads(a_path.read_text("utf-8")), replaced)
        b = scrub(json.loads(b_path.read_text("utf-8")), replaced)
        _write(case, a, b, f"Live, on the 2-CPU Debian 12 build VM (no GPU), A `{first}` taken "
                           f"{a['created_at']}, B `{second}` taken {b['created_at']}. Between them: {between}. "
                           "Scrubbed by build.py (host name, boot id, kernel build, local paths, environment).")
        cases.append(case)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, help="folder of the unscrubbed live snapshots (NAME.json)")
    args = parser.parse_args(argv)
    cases = build_replayed() + (build_live(args.raw) if args.raw else [])
    print(f"{len(cases)} pairs written under {HERE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
