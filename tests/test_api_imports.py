"""`driftcheck.api` imports each verb when it is first used, and a verb imports what it runs.

Reading one snapshot (`show`, `verify`) pays for the loader and the trust check, not the diff engine; an
explain of two snapshots pays for the diff and the rules, not the run store, the trial runner, the probes or
the benchmark verdicts.
A fresh interpreter each: what a module imports is only visible from an empty `sys.modules`.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys

import pytest

from driftcheck import api
from tests.conftest import REPO_ROOT

_MODULES_AFTER = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_after(*modules: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _MODULES_AFTER, *modules], capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    return set(json.loads(done.stdout))


def _under(loaded: set[str], *packages: str) -> list[str]:
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in packages))


def test_importing_the_face_imports_no_verb() -> None:
    assert _under(_loaded_after("driftcheck.api"), "driftcheck.analysis", "driftcheck.probes", "driftcheck.runs",
                  "driftcheck.store", "yaml") == []


def test_reading_one_snapshot_imports_no_diff_engine_no_importer_and_no_run_store() -> None:
    loaded = _loaded_after("driftcheck.api.show", "driftcheck.api.verify")
    assert "driftcheck.store.snapshots" in loaded  # it does read the store
    assert _under(loaded, "driftcheck.analysis.diff", "driftcheck.analysis.explain", "driftcheck.reports.importer",
                  "driftcheck.runs.store", "driftcheck.probes") == []


def test_explaining_two_snapshots_imports_no_run_store_no_trial_and_no_probes() -> None:
    loaded = _loaded_after("driftcheck.api.explain", "driftcheck.commands.explain")
    assert "driftcheck.analysis.explain" in loaded
    assert _under(loaded, "driftcheck.runs.store", "driftcheck.runs.trial", "driftcheck.analysis.confirm",
                  "driftcheck.api.confirm", "driftcheck.probes", "driftcheck.analysis.bench_verdicts",
                  "driftcheck.baselines") == []
    # Nor what only a branch of explain needs: two servers' flag tables, a version to compare, a pin's host name.
    assert _under(loaded, "driftcheck.serving.flag_tables", "packaging", "socket", "yaml") == []
    # --confirm's options are declared on every call: their defaults come without the tests behind a trial.
    assert _under(loaded, "driftcheck.stats.comparison", "statistics", "random") == []



def test_taking_a_snapshot_imports_no_benchmark_plan_and_no_http_client() -> None:
    loaded = _loaded_after("driftcheck.commands.snapshot", "driftcheck.api.catalog", "driftcheck.api.snapshot",
                           "driftcheck.probes.prober")
    assert "driftcheck.probes.kernels" in loaded and "driftcheck.baselines.suites" in loaded  # it does probe
    # The suites' names come without their plans; the server probe's HTTP client and the bench probe's looks
    # are imported where they run, PyYAML where a table is parsed (not read from its cached JSON) or a
    # server's --config file is read, cryptography where a key is loaded (a signed snapshot) or a signature
    # checked, and the NVML reader where NVML is read (never on a machine without a driver). The facts scripts
    # and the tables are read without importlib.resources (driftcheck.snapshot.shipped); a traceback is formatted
    # only for a probe that failed, and the server probe's launch and startup-log readers where a server is asked.
    assert _under(loaded, "driftcheck.baselines.plans", "driftcheck.baselines.workloads", "http.client",
                  "driftcheck.stats", "yaml", "cryptography", "driftcheck.nvidia.nvml", "ctypes",
                  "importlib.resources", "zipfile", "tempfile", "traceback", "driftcheck.serving.launch",
                  "driftcheck.serving.startup_log", "decimal") == []


@pytest.mark.parametrize("verb", ["show", "explain", "check", "verify", "log", "bench", "report", "record"])
def test_a_verb_stays_the_function_when_its_module_is_imported_first(verb: str) -> None:
    importlib.import_module(f"driftcheck.api.{verb}")  # binds the submodule on the package, as any import does
    assert inspect.isfunction(getattr(api, verb))
    assert getattr(api, verb) is getattr(sys.modules[f"driftcheck.api.{verb}"], verb)


def test_every_name_of_the_face_resolves_to_what_its_module_defines() -> None:
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'no_such_verb'"):
        api.no_such_verb  # noqa: B018 - the attribute access is the test


def test_a_run_imports_no_server_reader_no_nvidia_parser_and_no_run_comparison() -> None:
    loaded = _loaded_after("driftcheck.commands.run", "driftcheck.api.run", "driftcheck.probes.prober")
    assert "driftcheck.probes.server" in loaded and "driftcheck.probes.gpu" in loaded  # the probes are there
    # What only a server asked for, nvidia-smi's text or two runs compared need is imported where it is used.
    assert _under(loaded, "driftcheck.serving.engine", "driftcheck.serving.flag_tables", "driftcheck.nvidia.smi_xml",
                  "driftcheck.nvidia.smi_text", "driftcheck.nvidia.topo", "xml", "driftcheck.runs.compare",
                  "driftcheck.runs.speculative") == []


def test_a_run_loads_what_watching_needs_beside_the_snapshot_before_not_while_its_command_line_is_read() -> None:
    # The pumps and the sampling (~15-20 ms) are imported by `runs.session._import_watch_modules` while the
    # snapshot before waits on the target interpreter: nothing of them is imported before that snapshot starts.
    loaded = _loaded_after("driftcheck.commands.run", "driftcheck.api.run", "driftcheck.probes.prober")
    assert _under(loaded, "driftcheck.runs.execute", "driftcheck.runs.telemetry", "driftcheck.runs.summary",
                  "driftcheck.runs.store", "driftcheck.runs.metrics", "driftcheck.runs.render", "psutil",
                  "statistics") == []
    from driftcheck.runs.session import _END_MODULES, _WATCH_MODULES

    watched = _loaded_after(*_WATCH_MODULES)
    assert {"driftcheck.runs.execute", "driftcheck.runs.telemetry"} <= watched
    # The scan's patterns and the record's modules only once the command runs (runs.session._BesideCommand): the
    # command's start waits for none of them.
    assert _under(watched, "driftcheck.runs.metrics", "driftcheck.runs.output", "driftcheck.runs.summary",
                  "driftcheck.runs.store") == []
    assert {"driftcheck.runs.metrics", "driftcheck.runs.summary", "driftcheck.runs.store"} <= _loaded_after(
        *_END_MODULES, "driftcheck.runs.output")
    # psutil (~20 ms) only where watching asks it from the command's start (runs.session.watch_modules): on a
    # machine without a GPU, and with no --server/--pid/--process, nothing asks it unless a signal is relayed.
    assert "psutil" not in watched


def test_psutil_is_loaded_beside_the_snapshot_before_where_the_watching_asks_it_from_the_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from driftcheck.probes.base import ProbeOptions
    from driftcheck.runs import session
    from driftcheck.runs.session import RunPlan, watch_modules

    monkeypatch.setattr(session, "missing_driver", lambda host: "no driver")
    assert "psutil" not in watch_modules(RunPlan(argv=["true"]))
    for options in (ProbeOptions(pids=(1,)), ProbeOptions(process_patterns=("sglang",)),
                    ProbeOptions(server_url="http://127.0.0.1:30000")):
        assert "psutil" in watch_modules(RunPlan(argv=["true"], options=options))
    monkeypatch.setattr(session, "missing_driver", lambda host: None)  # a driver here: GPU processes to tell apart
    assert "psutil" in watch_modules(RunPlan(argv=["true"]))


def test_a_run_starts_its_target_interpreter_before_it_imports_the_probes() -> None:
    # What `driftcheck run` imports up to the start of its target interpreter's facts run (api.run's warm-up:
    # the command line, the face's run, a facts script's source): no probe, no store, no run session.
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    code = ("import json, sys\nfrom driftcheck.cli import parse\nparse(['run', '--', 'true'])\n"
            "from driftcheck.hosts.base import facts_script\nfacts_script('facts_batch')\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                          check=True)
    loaded = set(json.loads(done.stdout))
    assert "driftcheck.api.run" in loaded and "driftcheck.hosts.warm" in loaded
    assert _under(loaded, "driftcheck.probes", "driftcheck.store", "driftcheck.runs.session") == []


def test_the_names_of_the_probes_are_one_list() -> None:
    from driftcheck.api.catalog import probe_names
    from driftcheck.probes import PROBE_CLASSES

    assert probe_names() == [cls.name for cls in PROBE_CLASSES]
