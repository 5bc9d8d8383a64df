"""One run of the target interpreter answers every probe's facts scripts, each part as its own run would."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from driftcheck.errors import FactsScriptError, TargetPythonError
from driftcheck.hosts import LocalHost, RecordingHost, ReplayHost, ScriptCall
from driftcheck.hosts.shared import HeldBackScripts, SharedScriptsHost
from driftcheck.probes.base import ProbeOptions
from driftcheck.probes.kernels import KernelsProbe
from driftcheck.probes.nccl import NcclProbe
from driftcheck.probes.packages import PackagesProbe
from driftcheck.probes.python import PythonProbe
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import run_probes
from driftcheck.probes.torch import TorchProbe
from driftcheck.store.hashcache import HashCache

# dist_facts twice: its parts share one load of the script and the RECORDs it read.
CALLS = [ScriptCall("python_facts"), ScriptCall("dist_facts", ("packages",)), ScriptCall("torch_facts"),
         ScriptCall("dist_facts", ("files",))]


def _counting_python(tmp_path: Path) -> tuple[str, Path]:
    """An interpreter that writes the first argument after its `-c SOURCE` of each start to a file of its own."""
    starts = tmp_path / "starts"
    starts.mkdir()
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nprintf '%s' \"$3\" > {starts}/$$\nexec {sys.executable} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return str(wrapper), starts


def _started(starts: Path) -> list[str]:
    """The first argument of each start: a batch's request, a script's mode, or '' for none."""
    return [path.read_text() for path in sorted(starts.iterdir())]


def _parts(request: str) -> list[list[str]]:
    return [[part["name"], *part["args"]] for part in json.loads(request)["parts"]]


def test_each_part_answers_as_its_own_run_would() -> None:
    host = LocalHost()
    answers = host.python_many(CALLS)
    assert [answer.error for answer in answers] == [None] * len(CALLS)
    for call, answer in zip(CALLS, answers, strict=True):
        assert answer.value == host.python(call.script_name, call.args, call.timeout_s), call


def test_a_failing_part_costs_only_its_own_answer() -> None:
    calls = [ScriptCall("dist_facts", ("hash", "--jobs", "many")), ScriptCall("dist_facts", ("nonsense",)),
             ScriptCall("python_facts")]
    raised, refused, fine = LocalHost().python_many(calls)
    # int("many") raises inside the part: a traceback, as a script that raises in its own run.
    assert isinstance(raised.error, FactsScriptError) and "ValueError" in str(raised.error)
    assert isinstance(refused.error, TargetPythonError) and "unknown mode 'nonsense'" in str(refused.error)
    assert fine.error is None and isinstance(fine.value, dict) and fine.value["executable"]


def test_an_interpreter_that_cannot_start_fails_every_part(tmp_path: Path) -> None:
    answers = LocalHost(str(tmp_path / "no-python")).python_many(CALLS)
    assert all(isinstance(answer.error, FileNotFoundError) for answer in answers)


def test_the_probes_start_the_target_interpreter_once(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    probes = [PythonProbe(), PackagesProbe(), KernelsProbe(HashCache(tmp_path / "cache.db")), TorchProbe(),
              NcclProbe(Redactor(b"k"))]
    outcomes = run_probes(LocalHost(python), probes)
    assert [outcomes[name].status for name in ("python", "packages", "kernels", "nccl")] == ["ok"] * 4, outcomes
    assert outcomes["torch"].status in ("ok", "unavailable"), outcomes["torch"]  # unavailable: no torch here
    # Hashing the binaries the cache does not know yet is work of its own; every other question is one run.
    batches = [first for first in _started(starts) if first != "hash"]
    assert len(batches) == 1, batches
    assert sorted(part[0] for part in _parts(batches[0])) == ["dist_facts", "dist_facts", "python_facts",
                                                               "torch_facts"]
    # python and nccl both read python_facts: asked once, each probe parses its own copy.
    assert outcomes["python"].data is not None and outcomes["python"].data["sys_path"]


def test_a_probe_left_out_asks_nothing_and_deep_torch_runs_apart(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    run_probes(LocalHost(python), [PythonProbe(), PackagesProbe()])
    assert [sorted(part[0] for part in _parts(first)) for first in _started(starts)] == [["dist_facts",
                                                                                          "python_facts"]]
    # An import of torch could take the shared run down with it: --deep keeps it in a run (and child) of its own.
    deep = ProbeOptions(deep=True)
    assert TorchProbe().interpreter_calls(LocalHost(), deep) == [] and TorchProbe().isolated_with(deep)
    assert not TorchProbe().isolated_with(ProbeOptions())


def test_a_call_not_named_ahead_is_asked_of_the_inner_host(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    host = SharedScriptsHost(LocalHost(python), [ScriptCall("python_facts")])
    host.wait()
    assert host.python("python_facts") == host.python("python_facts")  # the second a copy of the first
    assert len(_started(starts)) == 1  # one call: no batch, a run of its own, answered twice
    packages = host.python("dist_facts", ["packages"])
    assert isinstance(packages, dict) and packages["distributions"]
    assert _started(starts).count("packages") == 1


def test_speculating_asks_no_script() -> None:
    with pytest.raises(FileNotFoundError):
        HeldBackScripts(LocalHost()).python("python_facts")


def test_a_recording_keeps_each_part_and_its_replay_answers_alike(tmp_path: Path) -> None:
    recording = RecordingHost(LocalHost())
    live = recording.python_many(CALLS)
    recording.save(tmp_path / "rec")
    scripts = json.loads((tmp_path / "rec" / "host.json").read_text())["scripts"]
    assert sorted(scripts) == sorted(json.dumps([call.script_name, *call.args]) for call in CALLS)
    replayed = ReplayHost(tmp_path / "rec").python_many(CALLS)
    assert [answer.value for answer in replayed] == [answer.value for answer in live]
