"""Numbers and names out of range are one line and exit 2: a gate cannot be switched off by a typo, a
twenty-digit count or a binary file is a usage error, and a bug of ours is never a traceback nor exit 1
(which `diff` and `check` readers take as "drift found")."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from driftcheck import api
from driftcheck.analysis.gate import check_against
from driftcheck.errors import OptionError
from driftcheck.snapshot.model import read_snapshot_file

PAIR = Path(__file__).resolve().parent / "data" / "pairs" / "cpu-governor"


def _one_line_exit_2(result) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["nan", "5", "inf", "-0.1", "-inf", "1.0000001", "x"])
def test_min_confidence_outside_0_1_is_refused_at_the_command_line(cli, value: str) -> None:
    result = cli("check", "--against", str(PAIR / "a.json"), "--min-confidence", value, "--no-store")
    _one_line_exit_2(result)
    assert "--min-confidence" in result.stderr


@pytest.mark.parametrize("value", [math.nan, 5.0, math.inf, -0.5, True, "0.5"])
def test_min_confidence_outside_0_1_is_refused_by_the_library(value: object) -> None:
    a = read_snapshot_file(PAIR / "a.json")
    b = read_snapshot_file(PAIR / "b.json")
    with pytest.raises(OptionError, match="min_confidence"):
        check_against(a, b, min_confidence=value)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="min_confidence"):
        api.CheckRequest(against=a, min_confidence=value)  # type: ignore[arg-type]


def test_a_drift_is_drift_at_both_ends_of_the_range() -> None:
    a = read_snapshot_file(PAIR / "a.json")
    b = read_snapshot_file(PAIR / "b.json")
    assert check_against(a, b, min_confidence=0).drift
    assert check_against(a, b, min_confidence=0.5).drift


@pytest.mark.parametrize("args", [
    ["show", "@99999999999999999999"],
    ["show", "@" + "9" * 5000],
    ["diff", "@0", "@123456789012345678901234567890"],
    ["show", "run:@9223372036854775808"],
    ["show", "run:99999999999999999999:after"],
    ["diff", "@0", "run:@" + "9" * 5000],
    ["log", "-n", "99999999999999999999"],
    ["log", "-n", "9" * 5000],
    ["runs", "-n", "99999999999999999999"],
    ["show", "a" * 10_000],
    ["show", "/" + "a" * 300],
    ["show", "x\0y"],
    ["fleet", "--hosts-file", "/bin/ls"],
    ["fleet", "--hosts-file", "/dev/zero"],
    ["fleet", "--host-timeout", "inf", "h1"],
    ["fleet", "--host-timeout", "1e300", "h1"],
    ["fleet", "--concurrency", "99999999999999999999", "h1"],
    ["bench", "--budget-s", "nan"],
    ["gc", "--keep-days", "1e308"],
    ["gc", "--keep-days", "inf"],
    ["gc", "--keep-last", "99999999999999999999"],
])
def test_huge_numbers_long_names_and_binary_files_are_one_line(cli, args: list[str]) -> None:
    assert cli("snapshot", "--probe", "env", "-q").returncode == 0
    _one_line_exit_2(cli(*args))


def test_a_five_thousand_digit_csv_value_is_one_line(cli, tmp_path: Path) -> None:
    csv = tmp_path / "gpus.csv"
    csv.write_text("name, memory.total [MiB], power.limit [W]\nNVIDIA H100, " + "9" * 5000 + ", 700.00 W\n")
    _one_line_exit_2(cli("import", str(csv), "--no-store", "-o", "-"))
    csv.write_text("name, memory.total [MiB], power.limit [W]\nNVIDIA H100, 81559 MiB, " + "9" * 400 + ".0 W\n")
    _one_line_exit_2(cli("import", str(csv), "--no-store", "-o", "-"))


def test_an_uncaught_exception_is_one_line_and_exit_2(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import driftcheck.commands.key as key

    def broken(args: object) -> int:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(key, "_cmd_key_show", broken)
    monkeypatch.delenv("DRIFTCHECK_DEBUG", raising=False)
    result = cli("key", "show")
    assert result.returncode == 2
    assert result.stderr == ("driftcheck: internal error: RuntimeError: boom second line (set DRIFTCHECK_DEBUG=1 "
                             "for the traceback; please report it)\n")
    monkeypatch.setenv("DRIFTCHECK_DEBUG", "1")
    debug = cli("key", "show")
    assert debug.returncode == 2
    assert "Traceback" in debug.stderr and "RuntimeError: boom" in debug.stderr


def test_an_integer_beyond_64_bits_inside_probe_data_is_one_line(cli, tmp_path: Path) -> None:
    text = (PAIR / "a.json").read_text()
    bad = tmp_path / "big.json"
    bad.write_text(text.replace('"vars": {', '"vars": {"HUGE": ' + "9" * 30 + ", ", 1))
    for args in (["show", str(bad)], ["diff", str(PAIR / "a.json"), str(bad)], ["explain", str(bad), str(bad)]):
        result = cli(*args)
        _one_line_exit_2(result)
        assert "64 bits" in result.stderr


def test_facts_of_a_wrong_shape_deep_in_probe_data_still_show(cli, tmp_path: Path) -> None:
    document = json.loads((PAIR / "a.json").read_text())
    document.pop("signature", None)
    document["probes"]["gpu"] = {"status": "ok", "data": {
        "gpus": {"0": {"max_clocks": [1], "power": "x", "locked_clocks": 5, "clock_event_reasons": 7,
                       "processes": 3}}, "driver_version": 7}}
    document["probes"]["pcie"] = {"status": "ok", "data": {"topology": {"pairs": {"GPU0~GPU1": 5}, "devices": [1]},
                                                           "gpus": {"0": {"index": [], "link": "Gen4"}}}}
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(document))
    for args in (["show", str(odd)], ["show", "--full", str(odd)], ["diff", str(PAIR / "a.json"), str(odd)],
                 ["explain", str(PAIR / "a.json"), str(odd)]):
        result = cli(*args)
        assert result.returncode in (0, 1), (args, result.stderr)
        assert result.stderr == "", result.stderr


@pytest.mark.parametrize(("probe", "data", "message"), [
    ("packages", {"packages": {"torch": [1]}}, "data.packages must map each key to an object"),
    ("kernels", {"files": 1.5}, "data.files must be an object"),
    ("pcie", {"topology": {"pairs": {}, "devices": "GPU0"}}, "data.topology.devices must be a list"),
    ("env", {"vars": ["A=1"]}, "data.vars must be an object"),
])
def test_containers_of_the_wrong_shape_are_refused_at_load(cli, tmp_path: Path, probe: str,
                                                           data: dict[str, object], message: str) -> None:
    document = json.loads((PAIR / "a.json").read_text())
    document.pop("signature", None)
    document["probes"][probe] = {"status": "ok", "data": data}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    for args in (["show", str(bad)], ["diff", str(PAIR / "a.json"), str(bad)], ["explain", str(bad), str(bad)]):
        result = cli(*args)
        _one_line_exit_2(result)
        assert f"probe '{probe}': {message}" in result.stderr


@pytest.mark.parametrize(("key", "value"), [("tool", []), ("label", 5), ("origin", ["x"]), ("created_at", 5)])
def test_top_level_members_of_the_wrong_type_are_refused_at_load(cli, tmp_path: Path, key: str,
                                                                 value: object) -> None:
    document = json.loads((PAIR / "a.json").read_text())
    document.pop("signature", None)
    document[key] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    for args in (["show", "--full", str(bad)], ["show", str(bad)], ["diff", str(bad), str(PAIR / "a.json")]):
        result = cli(*args)
        _one_line_exit_2(result)
        assert f"({key} must be" in result.stderr


def test_a_version_of_five_thousand_digits_is_no_version(cli, tmp_path: Path) -> None:
    document = json.loads((PAIR / "a.json").read_text())
    document.pop("signature", None)
    name = next(iter(document["probes"]["packages"]["data"]["packages"]))
    document["probes"]["packages"]["data"]["packages"][name]["version"] = "1." + "9" * 5000
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    for args in (["explain", str(bad), str(PAIR / "a.json")], ["diff", str(PAIR / "a.json"), str(bad)]):
        result = cli(*args)
        assert result.returncode == 1, (args, result.stderr)
        assert result.stderr == ""
