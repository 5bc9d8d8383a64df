"""tests/serving/engines.py: what a cached release directory holds, and that a failed build leaves nothing.

pip is replaced by a stand-in that writes a small real wheel (a zip with Python files, metadata and a compiled
library), so the unpacking, the cache layout and the locking run as they do with the real releases."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.serving import engines

RELEASE = engines.Release("vllm", "0.34.0", ("pyzmq==27.3.0",), partial=(("triton==3.9.0", ("triton/_C/lib.so",)),),
                          platform_plugin=True)


def _wheel(path: Path, package: str) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{package}/__init__.py", "")
        archive.writestr(f"{package}/_C/lib.so", b"\x7fELF")
        archive.writestr(f"{package}/kernels/big.cubin", b"\x00" * 64)
        archive.writestr(f"{package}-1.dist-info/METADATA", f"Name: {package}\n")


@pytest.fixture
def pip_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, ...]]:
    monkeypatch.setenv("DRIFTCHECK_TEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DRIFTCHECK_ENGINE_PATHS", raising=False)
    calls: list[tuple[str, ...]] = []

    def pip(*args: str, timeout: float) -> None:
        calls.append(args)
        if args[0] == "download":
            package = args[-3].partition("==")[0]
            Path(args[-1]).mkdir(parents=True)
            _wheel(Path(args[-1]) / f"{package}-1-py3-none-any.whl", package)
        else:
            (Path(args[args.index("--target") + 1]) / "zmq").mkdir()

    monkeypatch.setattr(engines, "_pip", pip)
    return calls


def test_a_release_is_unpacked_once_with_only_what_is_imported(pip_calls: list[tuple[str, ...]],
                                                                tmp_path: Path) -> None:
    folder = engines.installed(RELEASE)
    assert folder == tmp_path / "cache" / "engines" / RELEASE.key()
    assert (folder / "src" / "vllm" / "__init__.py").is_file()
    assert not (folder / "src" / "vllm" / "_C").exists()  # the engine's compiled kernels are left in the wheel
    assert not (folder / "src" / "vllm" / "kernels").exists()
    assert (folder / "deps" / "triton" / "_C" / "lib.so").is_file()  # a partial package's named member is kept
    assert not (folder / "deps" / "triton" / "kernels").exists()
    assert (folder / "deps" / "zmq").is_dir()
    assert "vllm.platform_plugins" in (folder / "deps" / "cpu_platform_plugin-0.dist-info"
                                       / "entry_points.txt").read_text("utf-8")
    assert [call[0] for call in pip_calls] == ["download", "download", "install"]
    assert ("--no-deps" in pip_calls[2]) and "pyzmq==27.3.0" in pip_calls[2]
    engines.installed(RELEASE)
    assert len(pip_calls) == 3  # the second time comes from the cache
    assert sorted(path.name for path in folder.parent.iterdir()) == [RELEASE.key(), f"{RELEASE.key()}.lock"]


def test_a_failed_build_leaves_no_directory_and_says_why(pip_calls: list[tuple[str, ...]], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args: str, timeout: float) -> None:
        raise engines.EngineUnavailable("pip download failed: No matching distribution found for vllm==0.34.0")

    monkeypatch.setattr(engines, "_pip", offline)
    with pytest.raises(engines.EngineUnavailable, match="No matching distribution"):
        engines.installed(RELEASE)
    assert [path.name for path in (tmp_path / "cache" / "engines").iterdir()] == [f"{RELEASE.key()}.lock"]


def test_a_changed_pin_is_a_new_directory_and_a_given_path_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = engines.Release("vllm", "0.34.0", ("pyzmq==27.2.0",), RELEASE.partial, platform_plugin=True)
    assert changed.key() != RELEASE.key() and changed.key().startswith("vllm-0.34.0-")
    monkeypatch.setenv("DRIFTCHECK_ENGINE_PATHS", "vllm-0.34.0=/opt/v34:/opt/deps;sglang-0.5.9=/opt/s59")
    assert engines.engine_path("vllm-0.34.0") == "/opt/v34:/opt/deps"
    assert engines.engine_path("sglang-0.5.9") == "/opt/s59"


def test_a_release_that_cannot_be_imported_here_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DRIFTCHECK_ENGINE_PATHS", raising=False)
    with pytest.raises(engines.EngineUnavailable, match="CUDA build of torchvision"):
        engines.engine_path("sglang-0.5.9")


def test_a_cache_that_cannot_be_written_is_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", "utf-8")
    monkeypatch.setenv("DRIFTCHECK_TEST_CACHE", str(tmp_path / "file" / "cache"))  # under a file: never a directory
    monkeypatch.delenv("DRIFTCHECK_ENGINE_PATHS", raising=False)
    with pytest.raises(engines.EngineUnavailable, match="cannot be written"):
        engines.engine_path("vllm-0.34.0")
