"""What a document can hold: a byte that is not UTF-8 anywhere (an environment value or name) is kept as its
escape, a number that is not finite as null, never fatal: the reproduction of the issue, `X=$(printf 'caf\\xe9')
driftcheck run -- true`, in-process."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest

from driftcheck.snapshot.storable import escape_undecodable, storable
from tests.conftest import CliResult


def test_a_surrogate_escaped_byte_is_written_as_its_escape() -> None:
    read = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")
    assert escape_undecodable(read) == "caf\\xe9 \\xff"
    assert escape_undecodable("café") == "café"
    assert escape_undecodable("\ud800x") == "\\ud800x"
    assert storable({read: [read, 1, None]}) == {"caf\\xe9 \\xff": ["caf\\xe9 \\xff", 1, None]}


def test_a_number_that_is_not_finite_is_kept_as_null() -> None:
    assert storable({"uptime_s": float("inf"), "x": [float("nan"), 1.5]}) == {"uptime_s": None, "x": [None, 1.5]}
    plain = {"a": [1, 2.5, "text"]}
    assert storable(plain) is plain


@pytest.mark.parametrize("args", [("snapshot", "--probe", "env"), ("run", "--probe", "env", "--", "true"),
                                  ("check", "--probe", "env")])
def test_an_environment_byte_that_is_not_utf8_is_never_fatal(args: tuple[str, ...], cli: Callable[..., CliResult],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environb, b"DC_UNDECODABLE", b"caf\xe9")
    monkeypatch.setitem(os.environb, b"DC_NAME_\xff", b"1")
    if args[0] == "check":  # something to check against, taken with the same environment
        assert cli("snapshot", "--probe", "env").returncode == 0
    done = cli(*args)
    assert done.returncode in (0, 1), done.stderr
    assert "internal error" not in done.stderr
    shown = cli("show", "@latest", "--format", "json")
    variables = json.loads(shown.stdout)["probes"]["env"]["data"]["vars"]
    assert variables["DC_UNDECODABLE"] == "caf\\xe9" and variables["DC_NAME_\\xff"] == "1"
