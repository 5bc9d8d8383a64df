"""The README's operator set-ups (Prometheus export, NFD labels, Slurm health check) are the tested ones: every
`driftcheck` line in them parses with the real parser, the PromQL queries are those tests/reports/
test_prometheus_stack.py runs through a real Prometheus, the slurm.conf keys are those slurmd is given in
tests/remote/test_slurm_health.py, and the directories named are the tools' own defaults."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest

from driftcheck.cli import parse
from tests.conftest import REPO_ROOT

# The fleet's examples (`--bench` among them) are held to the real parser too.
SECTIONS = ("### `driftcheck export prometheus", "### `driftcheck export nfd", "### `driftcheck slurm-health",
            "### `driftcheck fleet")


def _section(title: str) -> str:
    text = (REPO_ROOT / "README.md").read_text("utf-8")
    start = text.index(title)
    end = text.index("\n### ", start + 1)
    return text[start:end]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def readme_promql() -> list[str]:
    """The PromQL queries of the README's Prometheus section, one per line."""
    return [line for line in _blocks(_section(SECTIONS[0]), "promql")[0].splitlines() if line.strip()]


def _driftcheck_lines() -> list[list[str]]:
    lines = []
    for title in SECTIONS:
        for block in _blocks(_section(title), "sh"):
            for line in block.splitlines():
                words = shlex.split(line.split(" #")[0]) if line.strip() else []
                if words[:1] == ["sudo"]:
                    words = words[1:]
                if words[:1] == ["driftcheck"]:
                    lines.append(words[1:])
    return lines


@pytest.mark.parametrize("words", _driftcheck_lines(), ids=" ".join)
def test_every_driftcheck_line_of_the_set_ups_parses(words: list[str]) -> None:
    args = parse(words)
    assert args.handler is not None


def test_the_set_ups_name_the_commands_they_document() -> None:
    commands = {tuple(words[:2]) for words in _driftcheck_lines()}
    assert {("export", "prometheus"), ("export", "nfd"), ("schedule", "install")} <= commands


def test_the_promql_is_the_tested_promql() -> None:
    from tests.reports.test_prometheus_stack import QUERIES
    assert readme_promql() == list(QUERIES)


def test_the_slurm_conf_lines_are_the_ones_slurmd_is_given_in_the_tests() -> None:
    conf = _blocks(_section(SECTIONS[2]), "conf")[0]
    keys = [line.split("=", 1)[0] for line in conf.splitlines() if line.strip()]
    assert keys == ["HealthCheckProgram", "HealthCheckInterval"]
    test = (REPO_ROOT / "tests" / "remote" / "test_slurm_health.py").read_text("utf-8")
    assert all(f"{key}=" in test for key in keys)


@pytest.mark.skipif(shutil.which("prometheus-node-exporter") is None, reason="node_exporter not installed")
def test_the_textfile_directory_is_node_exporters_default() -> None:
    # Debian's prometheus-node-exporter 1.5.0: --collector.textfile.directory="/var/lib/prometheus/node-exporter"
    help_text = subprocess.run(["prometheus-node-exporter", "--help"], capture_output=True, text=True, timeout=60,
                               check=False)
    assert '--collector.textfile.directory="/var/lib/prometheus/node-exporter"' in help_text.stdout + help_text.stderr
    assert "--textfile-dir /var/lib/prometheus/node-exporter" in _section(SECTIONS[0])
