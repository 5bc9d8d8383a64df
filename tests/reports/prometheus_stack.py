"""A real node_exporter and a real Prometheus on 127.0.0.1, with temporary configs, for the export tests.

Debian's `prometheus-node-exporter` (1.5.0) runs only its textfile collector (`--collector.disable-defaults
--collector.textfile`) over a temporary directory; Debian's `prometheus` (2.42.0) scrapes it every second
into a temporary TSDB. Queries go through Prometheus's HTTP API (`/api/v1/query`). Only the processes
started here are stopped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.servers import free_port

NODE_EXPORTER = shutil.which("prometheus-node-exporter")
PROMETHEUS = shutil.which("prometheus")
needs_prometheus = pytest.mark.skipif(
    NODE_EXPORTER is None or PROMETHEUS is None,
    reason="prometheus / prometheus-node-exporter not installed; .ci/run installs Debian's packages")
JSONDict = dict[str, object]


def _get(url: str, timeout_s: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout_s) as reply:
        body: bytes = reply.read()
        return body


def _wait(what: str, url: str, logs: list[Path], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            _get(url)
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    tails = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}" for log in logs if log.exists())
    raise RuntimeError(f"{what} not ready at {url} within {timeout_s:g} s\n{tails}")


@dataclass
class PrometheusStack:
    """node_exporters (one textfile directory each) scraped by one Prometheus."""

    directory: Path
    textfile_dirs: list[Path]
    prometheus_url: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def query(self, promql: str) -> list[JSONDict]:
        """The result vector of an instant query through the HTTP API."""
        url = f"{self.prometheus_url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        reply = json.loads(_get(url))
        assert reply["status"] == "success", reply
        result: list[JSONDict] = reply["data"]["result"]
        return result

    def wait_for(self, promql: str, timeout_s: float = 60.0) -> list[JSONDict]:
        """The first non-empty result of `promql`, polled until it comes (AssertionError after the timeout)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            result = self.query(promql)
            if result:
                return result
            time.sleep(0.5)
        raise AssertionError(f"{promql} stayed empty for {timeout_s:g} s")

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)


def _start(stack: PrometheusStack, name: str, argv: list[str]) -> Path:
    log = stack.directory / f"{name}.log"
    with open(log, "wb") as out:
        stack.processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                                start_new_session=True))
    return log


def start_stack(directory: Path, exporters: int = 1) -> PrometheusStack:
    """Start `exporters` node_exporters (each over a textfile directory of its own) and a Prometheus scraping them."""
    assert NODE_EXPORTER and PROMETHEUS
    directory.mkdir(parents=True, exist_ok=True)
    stack = PrometheusStack(directory, [], "")
    targets, logs = [], []
    try:
        for index in range(exporters):
            textfiles = directory / f"textfile-{index}"
            textfiles.mkdir()
            stack.textfile_dirs.append(textfiles)
            port = free_port()
            logs.append(_start(stack, f"node-exporter-{index}", [
                NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                "--collector.textfile", f"--collector.textfile.directory={textfiles}"]))
            _wait("node_exporter", f"http://127.0.0.1:{port}/metrics", logs)
            targets.append(f"127.0.0.1:{port}")
        config = directory / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          "scrape_configs:\n  - job_name: node\n    static_configs:\n"
                          f"      - targets: {json.dumps(targets)}\n", "utf-8")
        port = free_port()
        logs.append(_start(stack, "prometheus", [
            PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={directory / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}"]))
        stack.prometheus_url = f"http://127.0.0.1:{port}"
        _wait("prometheus", f"{stack.prometheus_url}/-/ready", logs)
    except BaseException:
        stack.stop()
        raise
    return stack
