"""One run of the target interpreter answers every probe's facts scripts, each part as its own run would."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from driftcheck.errors import CommandTimeout, FactsScriptError, TargetPythonError
from driftcheck.hosts import CommandResult, LocalHost, RecordingHost, ReplayHost, ScriptCall
from driftcheck.hosts.shared import HeldBackScripts, SharedCommandsHost, SharedScriptsHost
from driftcheck.probes.base import Probe, ProbeOptions
from driftcheck.probes.kernels import KernelsProbe
from driftcheck.probes.nccl import NcclProbe
from driftcheck.probes.packages import PackagesProbe
from driftcheck.probes.python import PythonProbe
from driftcheck.probes.redact import Redactor
from driftcheck.probes.runner import run_one, run_probes
from driftcheck.probes.server import ServerProbe
from driftcheck.probes.torch import TorchProbe
from driftcheck.store.hashcache import HashCache
from tests.conftest import DATA

# dist_facts twice: its parts share one load of the script and the RECORDs it read.
CALLS = [ScriptCall("python_facts"), ScriptCall("dist_facts", ("packages",)), ScriptCall("torch_facts"),
         ScriptCall("dist_facts", ("files",))]


def _counting_python(tmp_path: Path) -> tuple[str, Path]:
    """An interpreter that writes the arguments after its `-c SOURCE` of each start to a file of its own."""
    starts = tmp_path / "starts"
    starts.mkdir()
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\n(shift 2; printf '%s\\0' \"$@\") > {starts}/$$\nexec {sys.executable} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return str(wrapper), starts


def _started(starts: Path) -> list[list[str]]:
    """The arguments of each start after `-c SOURCE`."""
    return [path.read_text().split("\0")[:-1] for path in sorted(starts.iterdir())]


def _first(starts: Path) -> list[str]:
    """The first argument of each start: `--script` for a batch, a script's mode, '' for none."""
    return [words[0] if words else "" for words in _started(starts)]


def _parts(words: list[str]) -> list[str]:
    """The script names of a batch's parts, in order."""
    return [words[index + 1] for index, word in enumerate(words) if word == "--part"]


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
    batches = [words for words in _started(starts) if words[:1] != ["hash"]]
    assert len(batches) == 1, [words[:1] for words in batches]
    assert sorted(_parts(batches[0])) == ["dist_facts", "dist_facts", "python_facts", "torch_facts"]
    # python and nccl both read python_facts: asked once, each probe parses its own copy.
    assert outcomes["python"].data is not None and outcomes["python"].data["sys_path"]


def test_a_probe_left_out_asks_nothing_and_deep_torch_runs_apart(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    run_probes(LocalHost(python), [PythonProbe(), PackagesProbe()])
    assert [sorted(_parts(words)) for words in _started(starts)] == [["dist_facts", "python_facts"]]
    # An import of torch could take the shared run down with it: --deep keeps it in a run (and child) of its own.
    deep = ProbeOptions(deep=True)
    assert TorchProbe().interpreter_calls(LocalHost(), deep) == [] and TorchProbe().isolated_with(deep)
    assert not TorchProbe().isolated_with(ProbeOptions())


def test_a_call_not_named_ahead_is_asked_of_the_inner_host(tmp_path: Path) -> None:
    python, starts = _counting_python(tmp_path)
    host = SharedScriptsHost(LocalHost(python), [ScriptCall("python_facts")])
    host.wait()
    assert host.python("python_facts") == host.python("python_facts")  # the second a copy of the first
    assert _first(starts) == [""]  # one call: no batch, a run of its own (no arguments), answered twice
    packages = host.python("dist_facts", ["packages"])
    assert isinstance(packages, dict) and packages["distributions"]
    assert sorted(_first(starts)) == ["", "packages"]


def test_hundreds_of_libraries_pass_as_words_not_one_oversized_argument() -> None:
    # A GPU server's loader cache names hundreds of libraries for the kernels call; Linux refuses a single
    # argument past 128 KiB, and these paths come to ~200 KiB.
    libraries = [f"/usr/lib/x86_64-linux-gnu/nvidia/libnvidia-compute-{index:05d}-padding.so.1" for index in
                 range(3000)]
    files = ScriptCall("dist_facts", ("files", *[word for path in libraries for word in ("--lib", path)]))
    answers = LocalHost().python_many([ScriptCall("python_facts"), files])
    assert [answer.error for answer in answers] == [None, None]
    listed = answers[1].value
    assert isinstance(listed, dict) and [entry["path"] for entry in listed["libraries"]] == libraries


def test_a_caller_waits_no_longer_than_its_own_limit(tmp_path: Path) -> None:
    slow = tmp_path / "python"
    slow.write_text(f"#!/bin/sh\nsleep 3\nexec {sys.executable} \"$@\"\n")
    os.chmod(slow, 0o755)
    host = SharedScriptsHost(LocalHost(str(slow)), [ScriptCall("python_facts"), ScriptCall("torch_facts")])
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match="no answer within 0.5 s"):
        host.python("python_facts", timeout_s=0.5)
    assert time.monotonic() - started < 2.5
    assert isinstance(host.python("torch_facts"), dict)  # the run itself goes on and answers the patient


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


class _CountingReplay(ReplayHost):
    """A replay of a recorded machine that counts the commands it is asked to run."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.runs: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        self.runs.append(tuple(argv))
        return super().run(argv, timeout_s)


HOSTS = DATA / "hosts"


# What each recording's ldconfig runs are: the markupsafe machine's answers on PATH; the docker VM's PATH lacks
# /sbin, so `ldconfig` fails there (a failure is not kept: each asker tries it) and /sbin/ldconfig answers.
@pytest.mark.parametrize(("recording", "expected_runs"), [
    ("cpu-venv-patched-markupsafe", {("ldconfig", "-p"): 1}),
    ("debian12-vm-docker", {("ldconfig", "-p"): 3, ("/sbin/ldconfig", "-p"): 1}),
])
def test_the_loader_cache_is_listed_once_per_snapshot_and_read_alike(
        recording: str, expected_runs: dict[tuple[str, ...], int], tmp_path: Path) -> None:
    def probes() -> list[Probe]:
        return [KernelsProbe(HashCache(tmp_path / "unused.db")), NcclProbe(Redactor(b"k"))]

    def ldconfig_runs(host: _CountingReplay) -> dict[tuple[str, ...], int]:
        return {argv: host.runs.count(argv) for argv in set(host.runs) if "-p" in argv}

    alone = {probe.name: run_one(probe, ReplayHost(HOSTS / recording), ProbeOptions()) for probe in probes()}
    host = _CountingReplay(HOSTS / recording)
    together = run_probes(host, probes())
    # kernels asks twice (to name its interpreter call, then in its gather) and nccl once: one answer for all.
    assert ldconfig_runs(host) == expected_runs
    for name, outcome in alone.items():
        assert (together[name].status, together[name].data, together[name].error) == \
            (outcome.status, outcome.data, outcome.error), name
    assert "ok" in {outcome.status for outcome in together.values()}  # kernels on one, nccl on the other
    # The next snapshot lists it again: no answer outlives the run of the probes it was taken for.
    run_probes(host, probes())
    assert ldconfig_runs(host) == {argv: 2 * count for argv, count in expected_runs.items()}


class _Commands(LocalHost):
    """This machine, with `run` answered by `answer` (a function of the argv), counted, slow enough to overlap."""

    def __init__(self, answer: Callable[[tuple[str, ...]], CommandResult]) -> None:
        super().__init__()
        self.answer = answer
        self.runs: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], timeout_s: float = 30.0) -> CommandResult:
        self.runs.append(tuple(argv))
        time.sleep(0.05)
        return self.answer(tuple(argv))


def _printed(argv: tuple[str, ...]) -> CommandResult:
    return CommandResult(argv, 0, " ".join(argv), "")


def test_askers_at_once_share_one_run_and_other_commands_pass_through() -> None:
    inner = _Commands(_printed)
    host = SharedCommandsHost(inner, [("ldconfig", "-p")])
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda argv: host.run(argv), [["ldconfig", "-p"]] * 3 + [["uname", "-r"]] * 2))
    assert [answer.stdout for answer in answers] == ["ldconfig -p"] * 3 + ["uname -r"] * 2
    assert sorted(inner.runs) == [("ldconfig", "-p"), ("uname", "-r"), ("uname", "-r")]


def test_a_failure_is_its_askers_alone_and_the_next_asker_runs_again() -> None:
    failures = [FileNotFoundError("ldconfig: not fetched yet")]

    def once_failing(argv: tuple[str, ...]) -> CommandResult:
        if failures:
            raise failures.pop()
        return _printed(argv)

    inner = _Commands(once_failing)
    host = SharedCommandsHost(inner, [("ldconfig", "-p")])
    with pytest.raises(FileNotFoundError, match="not fetched yet"):
        host.run(["ldconfig", "-p"])
    assert host.run(["ldconfig", "-p"]).stdout == "ldconfig -p"
    assert host.run(["ldconfig", "-p"]).stdout == "ldconfig -p"
    assert inner.runs == [("ldconfig", "-p")] * 2


class _LinesOnly(LocalHost):
    """This machine, where the file `whole` may be read line by line only (a log too large to hold)."""

    def __init__(self, whole: str) -> None:
        super().__init__()
        self.whole = whole

    def read_bytes(self, path: str) -> bytes:
        if path == self.whole:
            raise AssertionError(f"{path} was read whole")
        return super().read_bytes(path)


def test_a_server_log_is_read_line_by_line_beside_the_probes_that_share_answers() -> None:
    """With the default probes beside it, the server probe reads its log through the hosts that share commands
    and scripts: those pass `read_lines` to the host, which reads in pieces (over SSH, on the far side)."""
    log = str(DATA / "servers" / "logs" / "vllm-0.11.0-issue-28910.log")
    host = _LinesOnly(log)
    outcomes = run_probes(host, [PythonProbe(), NcclProbe(Redactor(b"k")), ServerProbe(Redactor(b"k"))],
                          ProbeOptions(server_log=log))
    assert outcomes["python"].status == "ok", outcomes["python"].error
    assert outcomes["server"].status == "ok", outcomes["server"].error
    assert outcomes["server"].data["server_log"]["found"] is True  # type: ignore[index]
