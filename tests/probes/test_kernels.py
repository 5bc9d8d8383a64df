"""The kernels probe: real files hashed, RECORD compared, a binary changed in place caught, the cache used."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, RecordingHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.kernels import (
    HASH_BATCH_FILES,
    KernelsProbe,
    candidates,
    hash_batches,
    hash_cache_note,
    is_kernel_package,
    ldconfig_libraries,
    library_dirs,
    record_sha256_hex,
)
from driftcheck.probes.runner import run_one
from driftcheck.store.hashcache import HashCache
from tests.conftest import DATA, CliResult
from tests.probes.conftest import WHEELS, WheelVenv
from tests.probes.facts_of import category_of, is_reading


def _kernels(python: Path | str, cache: HashCache, progress=None) -> dict:  # type: ignore[no-untyped-def]
    outcome = run_one(KernelsProbe(cache, progress), LocalHost(str(python)), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    return outcome.data


@pytest.fixture
def cache(tmp_path: Path) -> HashCache:
    return HashCache(tmp_path / "cache.db")


def test_ldconfig_output_yields_only_the_gpu_libraries() -> None:
    stdout = (DATA / "ldconfig" / "cuda-13.0-toolkit-no-driver.txt").read_text()
    assert ldconfig_libraries(stdout) == ["/usr/local/cuda-13.0/lib/libcudart.so.13",
                                          "/usr/local/cuda-13.0/lib/libcudart.so"]


def test_library_dirs_take_ld_library_path_then_each_cuda_toolkit() -> None:
    dirs = library_dirs("/opt/nccl/lib::/opt/nccl/lib", ["bin", "cuda", "cuda-12.4", "cudaq", "lib"])
    assert dirs[0] == "/opt/nccl/lib" and dirs.count("/opt/nccl/lib") == 1
    assert "/usr/local/cuda/lib64" in dirs and "/usr/local/cuda-12.4/lib64" in dirs
    assert not any("cudaq" in d or "/usr/local/bin" in d for d in dirs)


def test_record_hash_is_decoded_to_hex() -> None:
    content = b"\x7fELF not really a library"
    encoded = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    assert record_sha256_hex(f"sha256={encoded}") == hashlib.sha256(content).hexdigest()
    assert record_sha256_hex("md5=abc") is None and record_sha256_hex(None) is None


def test_kernel_packages_include_every_nvidia_wheel() -> None:
    assert is_kernel_package("flashinfer_python") and is_kernel_package("sgl-kernel")
    assert is_kernel_package("nvidia-cudnn-cu12") and is_kernel_package("Deep_GEMM")
    assert not is_kernel_package("markupsafe")


def test_batches_bound_bytes_and_count() -> None:
    sizes = {f"/f{i}": 1 for i in range(HASH_BATCH_FILES + 5)}
    sizes["/big"] = 600 * 1024 * 1024
    batches = hash_batches(sizes)
    assert batches[0] == ["/big"]
    assert sorted(p for b in batches for p in b) == sorted(sizes)
    assert all(len(b) <= HASH_BATCH_FILES for b in batches)


def test_untouched_wheel_is_hashed_and_reported_clean(pristine_venv: WheelVenv, cache: HashCache) -> None:
    data = _kernels(pristine_venv.python, cache)
    assert data["modified_in_place"] == {}
    assert not any(key.startswith("markupsafe:") for key in data["files"])
    # Every compiled file is hashed against its RECORD (a size check let a same-size rebuild through).
    assert data["hash_cache"]["hashed"] == data["hash_cache"]["files_checked"] >= 1
    assert _kernels(pristine_venv.python, cache)["hash_cache"]["hashed"] == 0  # then the cache answers
    assert set(data["jit_caches"]) >= {"triton", "torch_inductor", "flashinfer", "cuda_compute_cache"}


def test_a_rebuilt_extension_is_flagged_against_its_record(wheel_venv: WheelVenv, cache: HashCache) -> None:
    _kernels(wheel_venv.python, cache)
    with wheel_venv.extension.open("ab") as handle:
        handle.write(b"\0rebuilt")  # a rebuilt binary nearly always differs in size
    data = _kernels(wheel_venv.python, cache)
    relative = wheel_venv.extension_relative
    assert data["modified_in_place"] == {"markupsafe": [relative]}
    entry = data["files"][f"markupsafe:{relative}"]
    assert entry["record_match"] is False
    assert entry["sha256"] == hashlib.sha256(wheel_venv.extension.read_bytes()).hexdigest()
    assert entry["size_bytes"] == wheel_venv.extension.stat().st_size


def test_a_same_size_change_is_caught_once_the_file_was_seen(wheel_venv: WheelVenv, cache: HashCache) -> None:
    _kernels(wheel_venv.python, cache)  # the first snapshot remembers the file's identity
    so = wheel_venv.extension
    content = bytearray(so.read_bytes())
    content[-1] ^= 0xFF
    so.write_bytes(bytes(content))
    stat = so.stat()
    os.utime(so, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    data = _kernels(wheel_venv.python, cache)
    assert data["modified_in_place"] == {"markupsafe": [wheel_venv.extension_relative]}


def test_touching_a_file_without_changing_it_reports_nothing(wheel_venv: WheelVenv, cache: HashCache) -> None:
    _kernels(wheel_venv.python, cache)
    stat = wheel_venv.extension.stat()
    os.utime(wheel_venv.extension, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    data = _kernels(wheel_venv.python, cache)
    assert data["modified_in_place"] == {}
    assert data["hash_cache"]["hashed"] == 1  # looked inside once, found it equal to RECORD


def test_torch_binaries_are_hashed_once_then_served_from_the_cache(cache: HashCache) -> None:
    first = _kernels(sys.executable, cache)
    torch_files = {k: v for k, v in first["files"].items() if k.startswith("torch:")}
    assert torch_files and all(v["record_match"] is True for v in torch_files.values())
    assert first["hash_cache"]["hashed"] >= len(torch_files)
    second = _kernels(sys.executable, cache)
    assert second["hash_cache"]["hashed"] == 0
    assert second["hash_cache"]["hits"] == first["hash_cache"]["hashed"]
    assert second["files"] == first["files"]
    note = hash_cache_note(second)
    assert note is not None and f"hash cache hits {second['hash_cache']['hits']}, hashed now 0 " in note


def test_progress_is_reported_batch_by_batch_up_to_the_total(cache: HashCache) -> None:
    progress: list[tuple[int, int, int, int]] = []
    probe = KernelsProbe(cache, lambda *report: progress.append(report))
    probe.progress_after_s = 0.0  # report from the first batch on, however fast this machine hashes
    outcome = run_one(probe, LocalHost(sys.executable), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    stats = outcome.data["hash_cache"]
    assert progress, "no progress reported"
    assert [p[0] for p in progress] == sorted(p[0] for p in progress)  # files done only grows
    assert progress[-1] == (stats["hashed"], stats["hashed"], stats["hashed_bytes"], stats["hashed_bytes"])
    # Nothing left to hash: nothing to report.
    progress.clear()
    assert run_one(probe, LocalHost(sys.executable), ProbeOptions()).status == "ok"
    assert progress == []


def test_a_recording_replays_to_the_same_data(wheel_venv: WheelVenv, tmp_path: Path, cache: HashCache) -> None:
    with wheel_venv.extension.open("ab") as handle:
        handle.write(b"\0rebuilt")
    _kernels(wheel_venv.python, cache)  # a warm cache must not leave hashes out of the recording
    recording = RecordingHost(LocalHost(str(wheel_venv.python)))
    live = run_one(KernelsProbe(cache), recording, ProbeOptions())
    recording.save(tmp_path / "rec")
    replayed = run_one(KernelsProbe(cache), ReplayHost(tmp_path / "rec"), ProbeOptions())
    assert replayed.status == "ok", replayed.error
    assert replayed.data is not None and live.data is not None
    assert replayed.data["modified_in_place"] == live.data["modified_in_place"] == {
        "markupsafe": [wheel_venv.extension_relative]}
    assert replayed.data["files"] == live.data["files"]


def test_categories_are_package_binary_and_cache_stats_volatile() -> None:
    assert category_of(KernelsProbe, 'modified_in_place.markupsafe') == "package_binary"
    assert category_of(KernelsProbe, 'files["torch:torch/lib/libc10.so"].sha256') == "package_binary"
    assert is_reading(KernelsProbe, "hash_cache.hits")
    assert not is_reading(KernelsProbe, "files")


RECORDED = DATA / "hosts" / "cpu-venv-patched-markupsafe"


def test_recorded_machine_with_a_patched_extension_and_a_cuda_toolkit(tmp_path: Path) -> None:
    cache = HashCache(tmp_path / "unused.db")
    outcome = run_one(KernelsProbe(cache), ReplayHost(RECORDED), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data is not None
    relative = "markupsafe/_speedups.cpython-311-x86_64-linux-gnu.so"
    assert data["modified_in_place"] == {"markupsafe": [relative]}
    patched = data["files"][f"markupsafe:{relative}"]
    assert patched["record_match"] is False and patched["path"].startswith("/opt/venvs/bench/")
    # ldconfig, LD_LIBRARY_PATH and /usr/local/cuda* all lead to one file: one entry, by its real path.
    system = {k: v for k, v in data["files"].items() if k.startswith("system:")}
    assert list(system) == ["system:/usr/local/cuda-13.0/lib/libcudart.so.13"]
    assert system["system:/usr/local/cuda-13.0/lib/libcudart.so.13"]["record_match"] is None
    assert len(system["system:/usr/local/cuda-13.0/lib/libcudart.so.13"]["sha256"]) == 64
    assert all(summary is None for summary in data["jit_caches"].values())
    # A replay answers from the recording alone: this machine's hash cache is neither read nor written.
    assert data["hash_cache"]["hits"] == 0 and not cache.path.exists()


def test_a_recording_without_the_hashes_asked_for_still_replays(tmp_path: Path) -> None:
    # As a recording made by a driftcheck that hashed another set of files would.
    document = json.loads((RECORDED / "host.json").read_text())
    document["scripts"] = {k: v for k, v in document["scripts"].items() if '"hash"' not in k}
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "host.json").write_text(json.dumps(document))
    outcome = run_one(KernelsProbe(HashCache(tmp_path / "unused.db")), ReplayHost(tmp_path / "rec"), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    assert outcome.data["files"]["system:/usr/local/cuda-13.0/lib/libcudart.so.13"]["sha256"] is None
    # The size alone still shows the extension no longer matches its RECORD.
    assert outcome.data["modified_in_place"] == {"markupsafe": ["markupsafe/_speedups.cpython-311-x86_64-linux-gnu.so"]}


def test_of_a_distribution_found_twice_only_the_first_on_the_path_is_checked() -> None:
    def dist(location: str, size: int) -> dict:
        stat = {"path": f"{location}/torch/lib/libc10.so", "real_path": f"{location}/torch/lib/libc10.so",
                "size": size, "mtime_ns": 1, "inode": size}
        return {"name": "torch", "version": "2.13.0", "location": location,
                "files": [{"relative": "torch/lib/libc10.so", "record_hash": None, "record_size": size,
                           "stat": stat}]}

    found = candidates({"distributions": [dist("/first", 10), dist("/second", 20)], "libraries": []})
    assert [(c.key, c.real_path) for c in found] == [("torch:torch/lib/libc10.so", "/first/torch/lib/libc10.so")]


def test_a_same_size_rebuild_outside_the_catalog_is_a_cause(wheel_venv: WheelVenv,
                                                            cli: Callable[..., CliResult]) -> None:
    """The issue's case: one byte of a compiled file flipped (MarkupSafe is no `kernels` package), a
    snapshot into a fresh store, the wheel reinstalled, a snapshot again: explain names the binary."""
    extension = wheel_venv.extension
    original = extension.read_bytes()
    flipped = bytearray(original)
    flipped[len(flipped) // 2] ^= 0xFF
    extension.write_bytes(bytes(flipped))
    probes = ["--probe", "packages", "--probe", "kernels", "--python", str(wheel_venv.python), "-q"]
    assert cli("snapshot", *probes).returncode == 0
    wheels = sorted(WHEELS.glob("MarkupSafe-*.whl"))
    requirement = [*map(str, wheels), "--no-index"] if wheels else ["--only-binary=:all:", "markupsafe==3.0.2"]
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(wheel_venv.python), "install", "--no-deps",
                           "--force-reinstall", "-q", *requirement], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert extension.read_bytes() == original or not wheels
    assert cli("snapshot", *probes).returncode == 0
    result = cli("explain", "@1", "@0", "--format", "json")
    report = json.loads(result.stdout)
    # Before: "No relevant difference", exit 0 (the flipped file had RECORD's size, so it was never hashed).
    assert result.returncode == 1, result.stdout
    top = report["explanations"][0]
    assert top["category"] == "package_binary"
    assert any(path.startswith("probes.kernels.data.") and "markupsafe" in path for path in top["evidence"])
