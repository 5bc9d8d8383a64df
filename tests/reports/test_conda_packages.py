"""`conda list` pastes: rows into the packages probe's conda map, completeness only for a whole list.

Counts and values below were read off the files by hand (rows between the header and the end).
"""

from __future__ import annotations

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.conda_packages import CONDA, parse
from driftcheck.reports.importer import parse_text
from tests.conftest import DATA

CONDA_DIR = DATA / "reports" / "conda"


def _read(name: str) -> str:
    return (CONDA_DIR / name).read_text("utf-8")


def test_a_whole_list_of_the_2025_layout_is_complete() -> None:
    text = _read("list_windows_2025.txt")
    assert (found := detect(text)) is not None and found.name == "conda-list"
    parsed = parse(text)
    conda = parsed.probes["packages"]["conda"]
    assert len(conda) == 12
    assert conda["python"] == {"version": "3.8.20", "build": "h8205438_0"}
    assert conda["vc14_runtime"] == {"version": "14.44.35208", "build": "h4927774_10"}
    assert conda["ucrt"]["version"] == "10.0.22621.0"
    assert parsed.fields == {"environment": r"C:\Users\user\miniconda3\envs\testpip"}
    assert parsed.variant == "conda list" and parsed.complete == [CONDA] and parsed.cut == []
    # Nothing pip installed: no Python distribution is named by this list.
    assert parsed.probes["packages"]["packages"] == {}


def test_a_grep_of_the_list_gives_its_rows_with_channels_but_claims_nothing_absent() -> None:
    parsed = parse(_read("grep_pytorch_2022.txt"))
    conda = parsed.probes["packages"]["conda"]
    assert sorted(conda) == ["cpuonly", "ffmpeg", "pytorch", "pytorch-mutex", "torchaudio", "torchdata", "torchvision"]
    assert conda["pytorch"] == {"version": "1.11.0", "build": "py3.8_cpu_0", "channel": "pytorch"}
    assert conda["pytorch-mutex"] == {"version": "1.0", "build": "cpu", "channel": "pytorch"}
    assert parsed.variant == "conda list (filtered)" and parsed.complete == [] and parsed.unclaimed == []


def test_a_list_the_paste_ends_inside_keeps_its_rows_and_says_it_is_cut() -> None:
    parsed = parse(_read("list_cut_2023.txt"))
    packages = parsed.probes["packages"]
    assert len(packages["conda"]) == 20
    assert packages["conda"]["cudatoolkit"] == {"version": "11.3.1", "build": "h2bc3f7f_2"}
    assert packages["conda"]["ffmpeg"]["channel"] == "pytorch"
    # Rows from the `pypi` channel are pip's installs: Python distributions too.
    assert {k: v["version"] for k, v in packages["packages"].items()} == {"cycler": "0.11.0", "fonttools": "4.37.1"}
    assert parsed.unclaimed == ["jinja2"] and parsed.complete == [] and parsed.cut == [CONDA]


def test_a_pip_list_is_not_read_as_a_conda_list() -> None:
    text = (DATA / "reports" / "pip" / "list_ml_venv.txt").read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "pip-packages"


def test_importer_names_conda_as_the_reader() -> None:
    imported = parse_text(_read("list_windows_2025.txt"), "conda.txt")
    assert imported.format.title == "conda list" and imported.parsed.variant == "conda list"
