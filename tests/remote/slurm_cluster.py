"""A real single-node Slurm for the tests: munged, slurmctld and slurmd, everything in a temporary directory.

Nothing is read from or written under /etc: the clients find the configuration through SLURM_CONF,
munged runs with its own socket, key, pid and seed files, and slurm.conf points Slurm at that socket.
The node is this machine (`hostname -s`, reached at 127.0.0.1) on random free ports. Only the daemons
started here are stopped, after any job left is cancelled; a stopped daemon can linger as a zombie,
so liveness is read from /proc/PID/cmdline rather than `kill -0`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.servers import free_port

BINARIES = ("/usr/sbin/munged", "/usr/sbin/mungekey", "/usr/sbin/slurmctld", "/usr/sbin/slurmd")
MISSING = [b for b in BINARIES if not Path(b).exists()] + [b for b in ("srun", "sinfo", "scancel")
                                                          if shutil.which(b) is None]
needs_slurm = pytest.mark.skipif(bool(MISSING), reason=f"Slurm/munge not installed ({', '.join(MISSING)}); "
                                                      ".ci/run installs slurm-wlm and munge")


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie has an empty cmdline)."""
    try:
        return bool(Path(f"/proc/{pid}/cmdline").read_bytes())
    except OSError:
        return False


@dataclass
class SlurmCluster:
    """The running daemons and the environment a client needs to use them."""

    directory: Path
    node: str
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.directory / "slurm.conf"

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def log_tail(self) -> str:
        tails = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            path = self.directory / name
            if path.exists():
                tails.append(f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(tails)

    def stop(self) -> None:
        subprocess.run(["scancel", "--full", "--user", str(os.getuid())], env=self.env(), capture_output=True,
                       timeout=30, check=False)
        for name in ("slurmd", "slurmctld", "munged"):
            process = self.processes.get(name)
            if process is None:
                continue
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 15
            while _alive(process.pid) and time.monotonic() < deadline:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=0.2)
            if _alive(process.pid):
                process.kill()
            process.wait(timeout=10)


def _start(cluster: SlurmCluster, name: str, argv: list[str]) -> None:
    with open(cluster.directory / f"{name}.out", "wb") as out:
        cluster.processes[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                                   stderr=subprocess.STDOUT, env=cluster.env(),
                                                   start_new_session=True)


def _wait_for(what: str, check: object, cluster: SlurmCluster, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    cluster.stop()
    raise RuntimeError(f"{what} not ready within {timeout_s:g} s\n{cluster.log_tail()}")


def start_cluster(directory: Path, extra_conf: str = "") -> SlurmCluster:
    """Start munged, slurmctld and slurmd for one node (this machine) and wait until it is idle; `extra_conf`
    lines are added to slurm.conf (e.g. a HealthCheckProgram)."""
    directory.mkdir(parents=True, exist_ok=True)
    munge = directory / "munge"
    munge.mkdir(mode=0o700)
    key = munge / "munge.key"
    subprocess.run(["/usr/sbin/mungekey", "--create", f"--keyfile={key}"], check=True, capture_output=True,
                   timeout=30)
    key.chmod(0o600)
    node = socket.gethostname().split(".")[0]
    cpus = os.cpu_count() or 1
    for sub in ("state", "spool"):
        (directory / sub).mkdir()
    socket_path = munge / "munge.socket"
    conf = f"""ClusterName=driftchecktest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
StateSaveLocation={directory}/state
SlurmdSpoolDir={directory}/spool
SlurmctldPidFile={directory}/slurmctld.pid
SlurmdPidFile={directory}/slurmd.pid
SlurmctldLogFile={directory}/slurmctld.log
SlurmdLogFile={directory}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP
{extra_conf}"""
    (directory / "slurm.conf").write_text(conf)
    cluster = SlurmCluster(directory, node)
    _start(cluster, "munged", ["/usr/sbin/munged", "--foreground", "--force", f"--socket={socket_path}",
                               f"--key-file={key}", f"--pid-file={munge}/munged.pid",
                               f"--seed-file={munge}/munged.seed", f"--log-file={directory}/munged.log"])
    _wait_for("munged", socket_path.exists, cluster)
    _start(cluster, "slurmctld", ["/usr/sbin/slurmctld", "-D", "-i", "-f", str(cluster.conf)])
    _start(cluster, "slurmd", ["/usr/sbin/slurmd", "-D", "-f", str(cluster.conf)])

    def idle() -> bool:
        done = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=cluster.env(), capture_output=True, text=True,
                              timeout=10, check=False)
        return done.returncode == 0 and done.stdout.strip().startswith("idle")

    _wait_for("the Slurm node", idle, cluster)
    return cluster
