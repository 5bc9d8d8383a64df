"""Fixes safe to paste whatever a snapshot holds: a value or a name that a shell would read as more than itself
(a backquote, `$(...)`, `;`, a space, an option) never lands in a command. The fix says why instead, and is
advice; a plain value still gives the command, with every word as shlex reads it."""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from driftcheck.analysis.diff import diff_snapshots
from driftcheck.analysis.explain import explain
from driftcheck.analysis.explain.fixes import Vars, command_words, plain_word, render_fix
from driftcheck.snapshot.model import Snapshot

PAIRS = Path(__file__).resolve().parent.parent / "data" / "pairs"
HOSTILE = ["1`touch ~/pwned`", "1$(touch ~/pwned)", "1; touch ~/pwned", "1 && reboot", "--help", "1\ntouch ~/pwned",
           "1|sh", "'1'", "1 # comment", "x" * 5000]


def _pair(case: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return tuple(json.loads((PAIRS / case / f"{side}.json").read_text()) for side in ("a", "b"))  # type: ignore[return-value]


def _fixes(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str]]:
    result = explain(diff_snapshots(Snapshot(a, source="a"), Snapshot(b, source="b")))
    return [(e.fix, e.fix_kind) for e in result.explanations]


def _injected(fix: str) -> bool:
    """Whether a pasted `fix` would run anything beyond its own words: a word holding shell syntax."""
    words = command_words(fix)
    return words is not None and any(not plain_word(word) and word not in ("|",) for cmd in words for word in cmd
                                     if "touch" in word or "reboot" in word or "`" in word or "$(" in word)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_setting_value_gives_the_reason_not_a_command(value: str) -> None:
    a, b = _pair("numa-balancing")
    a["probes"]["system"]["data"]["numa"]["balancing"] = value
    [(fix, kind)] = _fixes(a, b)[:1]
    assert fix.startswith("no command: ") and kind == "advice", fix
    assert "touch" not in fix.split("'")[0] and not _injected(fix)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_value_in_a_pipeline_gives_the_reason(value: str) -> None:
    a, b = _pair("thp-enabled")
    a["probes"]["system"]["data"]["thp"]["enabled"] = value
    fix, kind = _fixes(a, b)[0]
    assert fix.startswith("no command: ") and kind == "advice", fix


@pytest.mark.parametrize("name", ["X;touch ~/pwned", "X`id`", "A B", "$(id)", "1X"])
def test_a_hostile_variable_name_gives_the_reason(name: str) -> None:
    a, b = _pair("env-other")
    for side in (a, b):
        variables = side["probes"]["env"]["data"]["vars"]
        variables[name] = variables.pop("LANG")
    fixes = _fixes(a, b)
    assert fixes and all(fix.startswith("no command: ") and kind == "advice" for fix, kind in fixes), fixes


def test_a_hostile_variable_value_is_quoted_as_one_word() -> None:
    a, b = _pair("env-other")
    a["probes"]["env"]["data"]["vars"]["LANG"] = "C.UTF-8`touch ~/pwned`"
    fix, kind = _fixes(a, b)[0]
    assert kind == "command" and fix == "export LANG=" + shlex.quote("C.UTF-8`touch ~/pwned`")
    assert command_words(fix) == [["export", "LANG=C.UTF-8`touch ~/pwned`"]]


def test_plain_values_still_give_their_commands() -> None:
    assert _fixes(*_pair("numa-balancing"))[0] == ("sudo sysctl kernel.numa_balancing=0", "command")
    assert _fixes(*_pair("thp-enabled"))[0] == ("echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled",
                                                "command")
    a, b = _pair("numa-balancing")
    b2 = copy.deepcopy(b)
    b2["probes"]["system"]["data"]["numa"]["balancing"] = -1
    assert _fixes(a, b2)[0][0] == "sudo sysctl kernel.numa_balancing=0"


def test_advice_shows_a_hostile_value_quoted() -> None:
    fix = render_fix("check what {proc} is doing during the benchmark", Vars(proc="x; rm -rf ~"))
    assert fix == "check what 'x; rm -rf ~' is doing during the benchmark"


def test_a_long_value_is_no_command_and_is_decided_at_once() -> None:
    a, b = _pair("numa-balancing")
    a["probes"]["system"]["data"]["numa"]["balancing"] = "9" * 10_000_000
    fix, kind = _fixes(a, b)[0]
    assert fix.startswith("no command: ") and len(fix) < 300 and kind == "advice"
