"""The Host factory: one target syntax (`local`, `replay:DIR`, `[user@]host[:port]`) builds every kind of host."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from driftcheck.errors import HostError, OptionError, UsageError
from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.hosts.targets import host_for

HOSTS = Path(__file__).resolve().parents[1] / "data" / "hosts"


def test_local_is_this_machine_with_the_interpreter_asked_for() -> None:
    host = host_for("local", sys.executable)
    assert isinstance(host, LocalHost) and host.target_python == sys.executable
    assert host.capabilities.in_process
    with host as opened:  # every host opens and closes alike; a local one has nothing to open
        assert opened is host


def test_an_empty_target_is_an_error_not_this_machine() -> None:
    for target in ("", "   "):
        with pytest.raises(OptionError, match="empty; name a machine") as raised:
            host_for(target)
        assert raised.value.option == "target"


def test_replay_names_a_recording_and_refuses_an_interpreter(tmp_path: Path) -> None:
    host = host_for(f"replay:{HOSTS / 'debian12-vm-docker'}")
    assert isinstance(host, ReplayHost) and host.capabilities.recorded
    assert host.recorded_options is not None and host.recorded_options["pids"] == [11189]
    with pytest.raises(OptionError, match="a recording holds its interpreter's facts") as raised:
        host_for(f"replay:{HOSTS / 'debian12-vm-docker'}", "/usr/bin/python3")
    assert raised.value.option == "python"
    with pytest.raises(OptionError, match=r"replay:DIR"):
        host_for("replay:")
    with pytest.raises(HostError, match="not a recording"):
        host_for(f"replay:{tmp_path}")


def test_anything_else_is_ssh_built_in_one_place_and_not_connected_yet(tmp_path: Path) -> None:
    from driftcheck.hosts.ssh import SSHHost

    host = host_for("root@gpu7:2222", "/root/ml-env/bin/python3")
    assert isinstance(host, SSHHost)
    assert (host.target.user, host.target.host, host.target.port) == ("root", "gpu7", 2222)
    assert host.target_python == "/root/ml-env/bin/python3" and host.round_trips == 0
    assert not host.capabilities.in_process and host.capabilities.few_calls
    with pytest.raises(UsageError, match="is not a host"):
        host_for("root@gpu7:notaport")
    with pytest.raises(OptionError, match="no such file") as raised:
        host_for("gpu7", identity=str(tmp_path / "id_missing"))
    assert raised.value.option == "identity"


def test_an_ssh_login_goes_only_with_an_ssh_target() -> None:
    with pytest.raises(OptionError, match="goes with an SSH target"):
        host_for("local", accept_new_host_key=True)


def test_a_live_host_has_no_recorded_options() -> None:
    assert host_for("local").recorded_options is None


def test_a_relative_interpreter_is_kept_absolute_so_the_facts_scripts_find_it_from_root(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `driftcheck run -- .venv/bin/python bench.py` named an interpreter relative to the user's directory; the
    # facts scripts run from "/", so its python, packages, kernels and torch probes all ended "unavailable".
    venv_bin = Path(sys.executable).parent
    monkeypatch.chdir(venv_bin.parent)
    relative = str(Path(venv_bin.name) / Path(sys.executable).name)
    host = host_for("local", relative)
    assert host.target_python == str(venv_bin / Path(sys.executable).name)
    facts = host.python("python_facts")
    assert isinstance(facts, dict) and facts["prefix"] == sys.prefix
