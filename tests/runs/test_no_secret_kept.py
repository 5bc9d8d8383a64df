"""No secret kept: secrets planted as flags of the run command, inside a label and in environment variables
reach neither any output (`run`, `log`, `runs`, the HTML page, `report --anonymize`, `show`, `explain`)
nor any row of the store, decompressed."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.reports.anonymize import Anonymizer
from driftcheck.store.delta import unpack
from tests.conftest import CliResult
from tests.probes.test_redact_forms import ENVIRON, SECRETS

# Flags and values of the run command, each hiding its own secret.
ARGV_SECRETS = [f"A-s3cr3t-{n:02}" for n in range(1, 15)] + ["p@ss-tail-A15"]
RUN_ARGS = ["--api-key", ARGV_SECRETS[0], "--openai-api-key", ARGV_SECRETS[1], f"--hf_token={ARGV_SECRETS[2]}",
            "--admin_token", ARGV_SECRETS[3], "--password", ARGV_SECRETS[4],
            f"redis://:{ARGV_SECRETS[5]}@cache:6379/0", f"https://example.org/m?password={ARGV_SECRETS[6]}&rev=1",
            f"https://hooks.slack.com/services/T000/B000/{ARGV_SECRETS[7]}",
            f"--port 30000 --token {ARGV_SECRETS[8]} --tp 8", f"Server=db;User Id=sa;Password={ARGV_SECRETS[9]};",
            "--db-pwd", ARGV_SECRETS[10], "--session-cookie", ARGV_SECRETS[11],
            f"--x-auth={ARGV_SECRETS[12]}", "--wandb-apikey", ARGV_SECRETS[13],
            f"postgresql://app:{ARGV_SECRETS[14]}@db.internal/app", "--max-tokens", "128"]
LABEL_SECRETS = ["L-s3cr3t-01", "L-s3cr3t-02", "L-s3cr3t-03", "L-s3cr3t-04"]
LABEL = (f"nightly --token {LABEL_SECRETS[0]} via https://u:{LABEL_SECRETS[1]}@proxy:3128 "
         f"?password={LABEL_SECRETS[2]} hf_{LABEL_SECRETS[3].replace('-', '')}abcdefghijklmnopqrstu")
GH_TOKEN = "ghp_" + "A" * 36
PLANTED = [*SECRETS, *ARGV_SECRETS, *LABEL_SECRETS[:3], GH_TOKEN, "ss-tail",
           f"hf_{LABEL_SECRETS[3].replace('-', '')}abcdefghijklmnopqrstu"]


def _leaks(text: str) -> list[str]:
    return [secret for secret in PLANTED if secret in text]


def _store_text(home: Path) -> str:
    """Every row of the store's tables, compressed payloads unpacked."""
    db = sqlite3.connect(home / "snapshots.db")
    parts: list[str] = []
    try:
        for table in ("snapshots", "runs"):
            for row in db.execute(f"SELECT * FROM {table}"):
                parts.extend(unpack(cell) if isinstance(cell, bytes) else str(cell) for cell in row)
    finally:
        db.close()
    return "\n".join(parts)


def test_secrets_planted_in_a_run_reach_no_output_and_no_row(
        cli: Callable[..., CliResult], driftcheck_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    assert len(set(PLANTED)) >= 20
    outputs: dict[str, str] = {}
    for n in (1, 2):
        ran = cli("run", "--probe", "env", "--probe", "system", "--label", LABEL, "--",
                  sys.executable, "-c", "pass", *RUN_ARGS)
        assert ran.returncode == 0, ran.stderr
        outputs[f"run {n}"] = ran.stdout + ran.stderr
    commands = {"log": ("log",), "log json": ("log", "--format", "json"), "runs": ("runs",),
                "runs json": ("runs", "--format", "json"), "runs 2": ("runs", "2"),
                "runs 2 json": ("runs", "2", "--format", "json"), "show": ("show", "@latest"),
                "show full": ("show", "@latest", "--full"), "show json": ("show", "run:@prev", "--format", "json"),
                "explain": ("explain", "run:@prev", "run:@latest"),
                "explain md": ("explain", "run:@prev", "run:@latest", "--format", "markdown"),
                "explain json": ("explain", "run:@prev", "run:@latest", "--format", "json"),
                "diff": ("diff", "@prev", "@latest", "--all")}
    for name, args in commands.items():
        done = cli(*args)
        assert done.returncode in (0, 1), (name, done.stderr)
        outputs[name] = done.stdout + done.stderr
    page = tmp_path / "runs.html"
    assert cli("runs", "--html", str(page)).returncode == 0
    outputs["runs --html"] = page.read_text()
    report_dir = tmp_path / "report"
    made = cli("report", "@latest", "--against", "@prev", "--anonymize", "--output", str(report_dir))
    assert made.returncode == 0, made.stderr
    outputs["report --anonymize"] = made.stdout + made.stderr + "".join(
        p.read_text() for p in sorted(report_dir.iterdir()))
    outputs["store"] = _store_text(driftcheck_home)

    assert {name: _leaks(text) for name, text in outputs.items() if _leaks(text)} == {}
    # What is no secret stays readable: the run is still recognisable by its label and command.
    assert "nightly --token <redacted:hmac-sha256:" in outputs["runs"]
    assert "--max-tokens 128" in outputs["runs 2"]
    record = json.loads(cli("runs", "2", "--format", "json").stdout)
    assert record["command"][:3] == [sys.executable, "-c", "pass"]


def test_an_old_snapshot_holding_secrets_is_scrubbed_by_anonymize() -> None:
    """A snapshot stored before labels were redacted: `report --anonymize` still keeps none of its secrets."""
    document = {"schema": 1, "label": LABEL, "host": {"name": "gpu-node-7"},
                "probes": {"env": {"status": "ok", "data": {"vars": dict(ENVIRON)}},
                           "process": {"status": "ok", "data": {"cmdline": ["python", *RUN_ARGS]}}}}
    masked = json.dumps(Anonymizer(b"k" * 32).document(document))
    assert _leaks(masked) == []
    assert "gpu-node-7" not in masked and "--max-tokens" in masked
