"""The packages probe against real venvs: a wheel installed by pip, a .pth path, a broken interpreter."""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.packages import PackagesProbe, build_id, normalize_name, package_entry
from driftcheck.probes.runner import run_one
from tests.conftest import DATA
from tests.probes.conftest import WheelVenv
from tests.probes.facts_of import category_of


def _probe(python: Path | str) -> dict:
    outcome = run_one(PackagesProbe(), LocalHost(str(python)), ProbeOptions())
    assert outcome.status == "ok", outcome.error
    assert outcome.data is not None
    return outcome.data


def _record_rows(site_packages: Path, dist_info_glob: str) -> list[list[str]]:
    record = next(site_packages.glob(dist_info_glob)) / "RECORD"
    with record.open(newline="") as handle:
        return list(csv.reader(handle))


def test_installed_wheel_is_described_from_its_metadata(pristine_venv: WheelVenv) -> None:
    data = _probe(pristine_venv.python)
    package = data["packages"]["markupsafe"]
    assert package["name"] == "MarkupSafe"
    assert package["version"] == "3.0.2"
    assert package["installer"] == "pip"
    assert package["editable"] is False
    assert Path(package["location"]).resolve() == pristine_venv.site_packages.resolve()
    assert package["wheel_tags"] and all(tag.startswith("cp3") for tag in package["wheel_tags"])
    assert package["compiled_files"] == 1
    # The build id is a digest over the RECORD hash of the one compiled file, computed here independently.
    rows = [row for row in _record_rows(pristine_venv.site_packages, "[Mm]arkup[Ss]afe-*.dist-info")
            if row[0].endswith(".so")]
    assert [row[0] for row in rows] == [pristine_venv.extension_relative]
    expected = hashlib.sha256(f"{rows[0][0]}\t{rows[0][1]}".encode()).hexdigest()
    assert package["build_id"] == f"sha256:{expected}"
    assert data["duplicates"] == {}
    assert data["conda"] is None
    assert "torch" not in data["packages"]  # a venv without system site-packages sees only its own


def test_a_distribution_reached_through_a_pth_file_is_seen_and_reported_as_duplicate(
        wheel_venv: WheelVenv, tmp_path: Path) -> None:
    extra = tmp_path / "extra-site"
    # A second real install of the same wheel, outside the venv, put on sys.path by a .pth file.
    wheel = next(Path(__file__).resolve().parent.parent.joinpath("data", "wheels").glob("MarkupSafe-*.whl"))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                           "--target", str(extra), str(wheel)], capture_output=True, text=True, check=False)
    if done.returncode != 0:  # the kept wheel does not fit this interpreter: copy the venv's install instead
        import shutil
        shutil.copytree(wheel_venv.site_packages / "markupsafe", extra / "markupsafe")
        shutil.copytree(next(wheel_venv.site_packages.glob("[Mm]arkup[Ss]afe-*.dist-info")),
                        extra / "markupsafe-3.0.2.dist-info")
    (wheel_venv.site_packages / "zz-extra.pth").write_text(f"{extra}\n")
    data = _probe(wheel_venv.python)
    locations = [Path(d["location"]).resolve() for d in data["duplicates"]["markupsafe"]]
    assert locations == [wheel_venv.site_packages.resolve(), extra.resolve()]
    # The first on sys.path is the one `import markupsafe` loads, and the one described.
    assert Path(data["packages"]["markupsafe"]["location"]).resolve() == wheel_venv.site_packages.resolve()


def test_our_own_interpreter_lists_torch_with_its_compiled_files() -> None:
    data = _probe(sys.executable)
    torch = data["packages"]["torch"]
    assert torch["compiled_files"] and torch["compiled_files"] > 1
    assert torch["build_id"].startswith("sha256:")
    assert data["interpreter"] == sys.executable


def test_an_interpreter_that_cannot_run_the_script_is_unavailable_not_an_error() -> None:
    outcome = run_one(PackagesProbe(), LocalHost("/bin/false"), ProbeOptions())
    assert outcome.status == "unavailable"
    assert "dist_facts" in outcome.error["message"]


def test_build_id_follows_the_record_hashes_not_the_file_order() -> None:
    first = [["pkg/_a.so", "sha256=AAAA", 10], ["pkg/_b.so", "sha256=BBBB", 20]]
    assert build_id(first) == build_id(list(reversed(first)))
    rebuilt = [["pkg/_a.so", "sha256=CCCC", 10], ["pkg/_b.so", "sha256=BBBB", 20]]
    assert build_id(first) != build_id(rebuilt)
    assert build_id([]) is None and build_id(None) is None


def test_editable_install_is_read_from_direct_url() -> None:
    # direct_url.json as pip writes it for `pip install -e /src/proj` (PEP 610).
    dist = {"name": "proj", "version": "0.1", "location": "/venv/lib/python3.11/site-packages",
            "format": "dist-info", "direct_url": {"url": "file:///src/proj", "dir_info": {"editable": True}},
            "compiled": []}
    entry = package_entry(dist)
    assert entry["editable"] is True
    assert entry["build_id"] is None and entry["compiled_files"] == 0
    legacy = {"name": "old", "version": "1", "location": "/src/old", "format": "egg-info", "compiled": None}
    assert package_entry(legacy)["editable"] is True
    assert package_entry(legacy)["compiled_files"] is None


def test_names_are_normalized_as_pip_compares_them() -> None:
    assert normalize_name("Flash_Attn") == "flash-attn"
    assert normalize_name("zope.interface") == "zope-interface"
    assert normalize_name("sgl--kernel") == "sgl-kernel"


def test_categories_split_versions_from_binaries() -> None:
    assert category_of(PackagesProbe, "packages.markupsafe.version") == "package_version"
    assert category_of(PackagesProbe, "packages.markupsafe") == "package_version"
    assert category_of(PackagesProbe, "packages.markupsafe.build_id") == "package_binary"
    assert category_of(PackagesProbe, "packages.flash-attn.compiled_files") == "package_binary"
    assert category_of(PackagesProbe, 'conda["ca-certificates"].build') == "package_binary"


def test_recorded_venv_without_conda() -> None:
    host = ReplayHost(DATA / "hosts" / "cpu-venv-patched-markupsafe")
    outcome = run_one(PackagesProbe(), host, ProbeOptions())
    assert outcome.status == "ok", outcome.error
    data = outcome.data
    assert data is not None
    assert list(data["packages"]) == ["markupsafe"]
    package = data["packages"]["markupsafe"]
    assert package["version"] == "3.0.2" and package["installer"] == "pip"
    # pip installed it from a wheel file, and says so (PEP 610), with the wheel's hash.
    assert package["direct_url"]["url"].startswith("file:///srv/wheels/MarkupSafe-3.0.2-cp311")
    assert package["direct_url"]["archive_info"]["hashes"]["sha256"] == (
        "a123e330ef0853c6e822384873bef7507557d8e4a082961e1defa947aa59ba84")
    # RECORD still holds the hash of the extension as the wheel shipped it: the build id is unchanged.
    assert package["build_id"].startswith("sha256:") and package["compiled_files"] == 1
    assert data["conda"] is None and data["duplicates"] == {}


def test_conda_meta_of_the_prefix_is_read(wheel_venv: WheelVenv) -> None:
    meta = wheel_venv.root / "conda-meta"
    meta.mkdir()
    for record in (DATA / "conda-meta" / "miniforge3-osx-arm64").glob("*.json"):
        (meta / record.name).write_bytes(record.read_bytes())
    (meta / "history").write_text("==> 2022-06-01 12:00:00 <==\n")  # not a package record: ignored
    data = _probe(wheel_venv.python)
    assert data["conda"] == {
        "ca-certificates": {"version": "2022.5.18.1", "build": "h4653dfc_0", "channel": "conda-forge/osx-arm64"},
        "libzlib": {"version": "1.2.12", "build": "h90dfc92_0", "channel": "conda-forge/osx-arm64"},
    }
    assert "markupsafe" in data["packages"]  # pip's view of the same prefix goes on as before


def test_an_editable_install_is_seen_through_its_pth_and_marked_editable(
        wheel_venv: WheelVenv, tmp_path: Path) -> None:
    project = tmp_path / "tiny-proj"
    (project / "src" / "tinyproj").mkdir(parents=True)
    (project / "src" / "tinyproj" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "tiny_proj"\nversion = "0.1.0"\n')
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(wheel_venv.python), "install", "-q",
                           "-e", str(project)], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:  # the build backend comes from the package index
        pytest.skip(f"cannot build an editable install here: {done.stderr.strip()[-300:]}")
    package = _probe(wheel_venv.python)["packages"]["tiny-proj"]
    assert package["editable"] is True
    assert package["direct_url"] == {"dir_info": {"editable": True}, "url": project.as_uri()}
    assert package["version"] == "0.1.0" and package["build_id"] is None
