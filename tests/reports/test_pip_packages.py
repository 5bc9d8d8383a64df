"""`pip freeze` and `pip list` pastes: read into the packages probe, and two of them diffed by version."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.pip_packages import parse
from tests.conftest import DATA, CliResult

PIP = DATA / "reports" / "pip"


@pytest.mark.parametrize("name, variant, count, pins", [
    ("freeze_small.txt", "pip freeze", 3, {"six": "1.16.0", "packaging": "24.0", "idna": "3.7"}),
    ("list_small.txt", "pip list", 5, {"six": "1.17.0", "pip": "23.2.1", "setuptools": "65.5.0"}),
    # pip freeze leaves out pip and setuptools; pip's note names the editable install its -e line cannot.
    ("freeze_ml_venv.txt", "pip freeze", 73, {"torch": "2.13.0+cpu", "transformers": "5.24.0", "driftcheck": "0.1.0"}),
    ("list_ml_venv.txt", "pip list", 75, {"torch": "2.13.0+cpu", "transformers": "5.24.0", "driftcheck": "0.1.0"}),
])
def test_each_recorded_list_reads_its_packages(name: str, variant: str, count: int, pins: dict[str, str]) -> None:
    text = (PIP / name).read_text("utf-8")
    found = detect(text)
    assert found is not None and found.name == "pip-packages"
    parsed = parse(text)
    packages = parsed.probes["packages"]["packages"]
    assert parsed.variant == variant and len(packages) == count
    assert {key: packages[key]["version"] for key in pins} == pins


def test_a_line_left_unread_is_kept_and_then_the_list_claims_no_completeness() -> None:
    text = (PIP / "freeze_small.txt").read_text("utf-8")
    assert parse(text).complete == ["probes.packages.data.packages"]
    warned = "WARNING: You are using pip version 23.2.1\n" + text
    parsed = parse(warned)
    assert parsed.unclaimed == ["WARNING: You are using pip version 23.2.1"] and parsed.complete == []


def test_a_pip_freeze_and_a_pip_list_diff_by_version(cli: Callable[..., CliResult]) -> None:
    done = cli("diff", str(PIP / "freeze_small.txt"), str(PIP / "list_small.txt"), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    changed = {c["path"]: (c["before"], c["after"]) for c in report["changes"] if c["kind"] == "changed"}
    assert changed == {"probes.packages.data.packages.six.version": ("1.16.0", "1.17.0")}
    # Only the packages were compared: the rest of a machine is in neither paste.
    assert report["not_compared"]["only_in_a"] == 0 and report["not_compared"]["only_in_b"] == 0
    text = cli("diff", str(PIP / "freeze_small.txt"), str(PIP / "list_small.txt")).stdout
    assert "six" in text and "1.16.0" in text and "1.17.0" in text


def test_a_quoted_reply_is_read_and_the_lines_above_the_table_are_kept() -> None:
    """A real `> `-quoted e-mail reply (vLLM #18295): the quote marks go, the user's lines above the table stay."""
    from driftcheck.reports.importer import parse_text

    imported = parse_text((PIP / "list_quoted_reply.txt").read_text("utf-8"), "list_quoted_reply.txt")
    packages = imported.parsed.probes["packages"]["packages"]
    assert imported.format.name == "pip-packages" and len(packages) == 19
    assert packages["antlr4-python3-runtime"]["version"] == "4.7.2" and packages["click"]["version"] == "8.1.8"
    assert imported.parsed.unclaimed[0] == "are you refer to pip libs? here are them"
    assert "=== Installed pip Packages ===" in imported.parsed.unclaimed
    # Lines no row reads: the list is not claimed whole.
    assert imported.parsed.complete == []
