"""No secret in any channel: every form of secret people leave in commands, labels, pastes and server replies,
in every channel driftcheck takes text in or gives it out, is gone.

The corpus (`FORMS`) holds each form once with a secret of its own; a channel leaks a form when that secret
(or the distinctive part of it) appears in what the channel produced. The channels: the redactor itself
(free text, an environment, a command line, a JSON value), `try` and `bisect` (their output, progress and
the runs table), `run` (label, command, environment), the store's decoded rows and its raw bytes, `runs`
and the `runs --html` page, `show --full`, report.md, `import` of a pasted report, the server probe,
error messages and recordings.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from driftcheck.probes.redact import Redactor
from driftcheck.store.delta import unpack
from tests.conftest import CliResult
from tests.servers import recorded_routes

DATA = Path(__file__).resolve().parent / "data"


def _core(n: int) -> str:
    """A secret's distinctive letters: unique per form, alphanumeric so every token shape can hold it."""
    return f"Qz{n:02d}Xv8Lm3Np6RtYwB5cD"


def _jwt(n: int) -> str:
    return f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{_core(n)}In0.c2lnbmF0dXJl{_core(n)}"


# (name, text as it is written somewhere, the secret in it)
FORMS: list[tuple[str, str, str]] = [
    ("assignment HF_TOKEN", "HF_TOKEN={s}", _core(0)),
    ("export assignment", "export OPENAI_API_KEY={s}", _core(1)),
    ("env word in a command", "env AWS_SECRET_ACCESS_KEY={s} true", _core(2)),
    ("flag and value", "--token {s}", _core(3)),
    ("flag=value", "--token={s}", _core(4)),
    ("flag, double-quoted value", '--api-key "{s}"', _core(5)),
    ("flag, single-quoted value", "--api-key '{s}'", _core(6)),
    ("underscore flag", "--hf_token {s}", _core(7)),
    ("long flag=value", "--openai-api-key={s}", _core(8)),
    ("password flag", "--password {s}", _core(9)),
    ("URL user and password", "https://user:{s}@pypi.internal/simple", _core(10)),
    ("URL token as user", "https://{s}@github.com/org/repo.git", _core(11)),
    ("pip freeze VCS line", "mypkg @ git+https://{s}@github.com/org/mypkg.git@abc123", _core(12)),
    ("redis password only", "redis://:{s}@cache:6379/0", _core(13)),
    ("database URL", "postgresql://app:{s}@db.internal/app", _core(14)),
    ("proxy URL in a variable", "http_proxy=http://u:{s}@proxy:3128", _core(15)),
    ("scheme-less proxy", "user:{s}@proxy.corp:3128", _core(16)),
    ("scheme-less proxy variable", "HTTPS_PROXY=user:{s}@proxy:3128", _core(17)),
    ("query password", "https://example.org/m.bin?password={s}&rev=main", _core(18)),
    ("query token", "https://example.org/x?token={s}", _core(19)),
    ("query access_token", "https://example.org/x?a=1&access_token={s}", _core(20)),
    ("query api_key", "https://example.org/x?api_key={s}", _core(21)),
    ("connection string", "Server=db;User Id=sa;Password={s};", _core(22)),
    ("Slack webhook", "https://hooks.slack.com/services/T000/B000/{s}", _core(23)),
    ("Discord webhook", "https://discord.com/api/webhooks/123/{s}", _core(24)),
    ("Telegram bot", "https://api.telegram.org/bot{s}/sendMessage", _core(25)),
    ("conda channel token", "https://conda.anaconda.org/t/{s}/my-channel", _core(26)),
    ("Authorization Bearer", "Authorization: Bearer {s}", _core(27)),
    ("Authorization Basic", "Authorization: Basic {s}", _core(28)),
    ("authorization token", "authorization: token {s}", _core(29)),
    ("Proxy-Authorization", "Proxy-Authorization: Basic {s}", _core(30)),
    ("curl header", "curl -H 'Authorization: Bearer {s}' https://api.example.org", _core(31)),
    ("bare Bearer", "Bearer {s}", _core(32)),
    ("JWT", "{s}", _jwt(33)),
    ("PEM private key", "-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----", _core(34)),
    ("PEM RSA key on one line", "-----BEGIN RSA PRIVATE KEY-----{s}-----END RSA PRIVATE KEY-----", _core(35)),
    ("PEM key cut short", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r{s}", _core(36)),
    ("Hugging Face token", "hf_{s}", _core(37)),
    ("GitHub classic token", "ghp_{s}abcdef", _core(38)),
    ("GitHub fine-grained token", "github_pat_{s}_abcdef", _core(39)),
    ("GitHub OAuth token", "gho_{s}abcdef", _core(40)),
    ("OpenAI key", "sk-{s}", _core(41)),
    ("OpenAI project key", "sk-proj-{s}", _core(42)),
    ("Anthropic key", "sk-ant-api03-{s}", _core(43)),
    ("Slack bot token", "xoxb-1234-{s}", _core(44)),
    ("AWS access key id", "{s}", "AKIA" + _core(45).upper()[:16]),
    ("AWS temporary key id", "{s}", "ASIA" + _core(46).upper()[:16]),
    ("GitLab token", "glpat-{s}abcd", _core(47)),
    ("PyPI token", "pypi-AgEIcHlwaS5vcmcCJ{s}{s}{s}", _core(48)),
    ("npm token", "npm_{s}", (_core(49) * 3)[:36]),
    ("Google API key", "AIza{s}", (_core(50) * 3)[:35]),
    ("Stripe live key", "sk_live_{s}", _core(51)),
    ("JSON password", '{{"password": "{s}"}}', _core(52)),
    ("YAML password", "password: {s}", _core(53)),
    ("report variable line", "vars.HF_TOKEN: {s}", _core(54)),
    ("JSON token", '{{"token": "{s}"}}', _core(55)),
    ("short-named password variable", "DB_PWD={s}", _core(56)),
    ("cookie variable", "SESSION_COOKIE={s}", _core(57)),
    ("auth variable", "MY_SERVICE_AUTH={s}", _core(58)),
    ("apikey variable", "WANDB_APIKEY={s}", _core(59)),
    ("auth flag", "--x-auth={s}", _core(60)),
    ("pwd flag", "--db-pwd {s}", _core(61)),
    ("query auth", "https://example.org/?auth={s}", _core(62)),
    ("MySQL URL", "mysql://root:{s}@localhost/db", _core(63)),
    ("admin token flag", "--admin_token={s}", _core(64)),
    ("client secret assignment", "client_secret={s}", _core(65)),
    ("JSON api_key", '"api_key": "{s}"', _core(66)),
    ("API key header", "X-Api-Key: {s}", _core(67)),
    ("Cookie header", "Cookie: session={s}", _core(68)),
    ("AWS session token", "AWS_SESSION_TOKEN={s}", _core(69)),
]
TEXTS = [text.format(s=secret) for _, text, secret in FORMS]
SECRETS = [secret for _, _, secret in FORMS]
# One line each (an environment section of a paste, a label): the forms that hold no newline.
ONE_LINE = [text for text in TEXTS if "\n" not in text]


def leaks(text: str) -> list[str]:
    """The names of the forms whose secret (or its distinctive letters) `text` holds."""
    return [name for (name, _, secret), core in zip(FORMS, (_core(n) for n in range(len(FORMS))), strict=True)
            if secret in text or core in text]


def test_the_corpus_holds_every_form_of_the_issue() -> None:
    assert len(FORMS) >= 56
    assert len({secret for secret in SECRETS}) == len(FORMS)
    assert all(secret in text for text, secret in zip(TEXTS, SECRETS, strict=True))


# --- the redactor, one form at a time: free text, an environment, a command line, a JSON value ---

@pytest.mark.parametrize("index", range(len(FORMS)), ids=[name for name, _, _ in FORMS])
def test_every_form_is_gone_from_every_shape_the_redactor_takes(index: int) -> None:
    redactor = Redactor(b"k" * 32)
    text = TEXTS[index]
    shapes = {"text": redactor.text(text), "environ": json.dumps(redactor.environ({"HARMLESS": text})),
              "argv": json.dumps(redactor.argv(["cmd", text])),
              "argv words": json.dumps(redactor.argv(["cmd", *shlex.split(text.replace("\n", " "))])),
              "json": json.dumps(redactor.json({"value": text, "nested": [{"v": text}]})),
              "inside prose": redactor.text(f"see ({text}) and more")}
    assert {shape: out for shape, out in shapes.items() if leaks(out)} == {}


def test_what_is_no_secret_stays_as_it_was() -> None:
    redactor = Redactor(b"k" * 32)
    plain = ["--port 30000 --tp 8", "https://pypi.org/simple", "git@github.com:org/repo.git",
             '{"max_tokens": 128, "api_key": null, "ok": true}', "NCCL_ALGO=Tree", "torch==2.7.0+cu128",
             "MAX_TOKENS=4096", "tokenizer: /models/tok", "12:30:01 done", "a@b.example.org",
             "IMAGE=pytorch:24.01-py3@sha256:0123abcd"]
    assert [redactor.text(text) for text in plain] == plain


# --- the command line: every channel, all forms at once ---

def _store_text(home: Path) -> str:
    """Every row of the store's tables, compressed payloads unpacked, and the file's raw bytes."""
    db = sqlite3.connect(home / "snapshots.db")
    parts: list[str] = []
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f"SELECT * FROM {table}"):  # noqa: S608 - names read from the file itself
                parts.extend(unpack(cell) if isinstance(cell, bytes) and cell[:1] != b"{" else str(cell)
                             for cell in row)
    finally:
        db.close()
    raw = b"".join(path.read_bytes() for path in home.iterdir() if path.name.startswith("snapshots.db"))
    return "\n".join(parts) + raw.decode("latin-1")


def _variant_specs() -> list[str]:
    return [f"--b={shlex.quote(f'V{n:02d}={text}')}" for n, text in enumerate(TEXTS)]


def _leaking(outputs: dict[str, str]) -> dict[str, list[str]]:
    return {channel: leaks(text) for channel, text in outputs.items() if leaks(text)}


def test_try_keeps_and_shows_no_secret(cli: Callable[..., CliResult], driftcheck_home: Path,
                                       tmp_path: Path) -> None:
    label = " ".join(ONE_LINE)
    outputs: dict[str, str] = {}
    for fmt in ("text", "json"):
        done = cli("try", "--max-pairs", "2", "--wall", "--seed", "1", "--label", label, "--format", fmt,
                   *_variant_specs(), "--", "true", *TEXTS)
        assert done.returncode in (0, 1), done.stderr
        outputs[f"try {fmt}"] = done.stdout + done.stderr
    for args in (("runs",), ("runs", "--format", "json"), ("runs", "1"), ("runs", "1", "--format", "json")):
        done = cli(*args)
        assert done.returncode == 0, done.stderr
        outputs[" ".join(args)] = done.stdout + done.stderr
    page = tmp_path / "runs.html"
    assert cli("runs", "--html", str(page)).returncode == 0
    outputs["runs --html"] = page.read_text()
    outputs["store"] = _store_text(driftcheck_home)
    assert _leaking(outputs) == {}
    assert "<redacted:hmac-sha256:" in outputs["try text"]


def test_bisect_keeps_and_shows_no_secret(cli: Callable[..., CliResult], driftcheck_home: Path) -> None:
    outputs: dict[str, str] = {}
    for fmt in ("text", "json"):
        done = cli("bisect", "--max-pairs", "2", "--wall", "--seed", "1", "--format", fmt, *_variant_specs(),
                   "--", "true")
        assert done.returncode in (0, 1), done.stderr
        outputs[f"bisect {fmt}"] = done.stdout + done.stderr
    outputs["store"] = _store_text(driftcheck_home)
    assert _leaking(outputs) == {}
    assert "trial 1: " in outputs["bisect text"]


def test_run_label_command_and_environment_keep_and_show_no_secret(
        cli: Callable[..., CliResult], driftcheck_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n, text in enumerate(TEXTS):
        monkeypatch.setenv(f"CORPUS_{n:02d}", text)
    done = cli("run", "--probe", "env", "--label", " ".join(ONE_LINE), "--", "true", *TEXTS)
    assert done.returncode == 0, done.stderr
    outputs = {"run": done.stdout + done.stderr}
    for args in (("show", "@latest", "--full"), ("show", "@latest", "--format", "json"), ("runs",),
                 ("runs", "1", "--format", "json"), ("log",)):
        shown = cli(*args)
        assert shown.returncode == 0, shown.stderr
        outputs[" ".join(args)] = shown.stdout + shown.stderr
    report = tmp_path / "report"
    made = cli("report", "@latest", "--output", str(report))
    assert made.returncode == 0, made.stderr
    outputs["report.md"] = "".join(path.read_text() for path in sorted(report.iterdir()))
    page = tmp_path / "runs.html"
    assert cli("runs", "--html", str(page)).returncode == 0
    outputs["runs --html"] = page.read_text()
    outputs["store"] = _store_text(driftcheck_home)
    assert _leaking(outputs) == {}


def test_a_pasted_report_keeps_no_secret(cli: Callable[..., CliResult], driftcheck_home: Path,
                                         tmp_path: Path) -> None:
    """vLLM's collect-env (a real report) with the forms in its environment section and in prose after it."""
    report = (DATA / "reports" / "vllm_10.txt").read_text()
    variables = "\n".join(f"V{n:02d}={text}" for n, text in enumerate(ONE_LINE))
    paste = tmp_path / "issue.txt"
    paste.write_text(report.rstrip("\n") + "\n" + variables + "\nHF_TOKEN=hf_" + _core(37) + "\n\n"
                     "What I ran:\n\n```\n" + "\n".join(TEXTS) + "\n```\n")
    done = cli("import", str(paste), "--label", " ".join(ONE_LINE))
    assert done.returncode == 0, done.stderr
    outputs = {"import": done.stdout + done.stderr}
    for args in (("show", "@latest", "--full"), ("show", "@latest", "--format", "json")):
        shown = cli(*args)
        assert shown.returncode == 0, shown.stderr
        outputs[" ".join(args)] = shown.stdout + shown.stderr
    out = tmp_path / "report"
    assert cli("report", "@latest", "--output", str(out)).returncode == 0
    outputs["report.md"] = "".join(path.read_text() for path in sorted(out.iterdir()))
    outputs["store"] = _store_text(driftcheck_home)
    assert _leaking(outputs) == {}
    # The variables were read (redacted), not dropped.
    assert "V00" in outputs["show @latest --format json"]


def test_a_server_reply_keeps_no_secret(cli: Callable[..., CliResult], driftcheck_home: Path,
                                        replay_server: Any) -> None:
    """SGLang's recorded /get_server_info with the forms as a top-level token, a nested password, a rank's
    auth_token and plain argument values; /v1/models with credentials in a model's root URL."""
    info = json.loads((DATA / "servers" / "sglang-docs-native-api" / "get_server_info.json").read_text())
    info.update({f"extra_arg_{n:02d}": text for n, text in enumerate(TEXTS)})
    info.update({"token": SECRETS[0], "auth": {"password": SECRETS[1]}, "api_key": SECRETS[2]})
    states = info.get("internal_states")
    if isinstance(states, list) and states and isinstance(states[0], dict):
        states[0]["auth_token"] = SECRETS[3]
    models = {"object": "list", "data": [{"id": "m", "object": "model",
                                          "root": f"https://user:{SECRETS[10]}@models.internal/m"}]}
    url = replay_server(recorded_routes("sglang-docs-native-api",
                                        **{"get_server_info.json": info, "models.json": models}))
    done = cli("snapshot", "--probe", "server", "--server", url)
    assert done.returncode == 0, done.stderr
    outputs = {"snapshot": done.stdout + done.stderr}
    for args in (("show", "@latest", "--full"), ("show", "@latest", "--format", "json")):
        shown = cli(*args)
        outputs[" ".join(args)] = shown.stdout + shown.stderr
    outputs["store"] = _store_text(driftcheck_home)
    assert _leaking(outputs) == {}
    assert "extra_arg_00" in outputs["show @latest --format json"]


def test_error_messages_show_no_secret(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    outputs: dict[str, str] = {}
    for n, text in enumerate(ONE_LINE):
        done = cli("show", text)
        assert done.returncode == 2
        outputs[f"show {n}"] = done.stderr
    document = tmp_path / "unreachable.json"
    unreachable = cli("snapshot", "--probe", "server", "--server", f"http://user:{SECRETS[10]}@127.0.0.1:9/",
                      "--no-store", "-o", str(document))
    assert unreachable.returncode == 0 and "server probe: cannot reach" in unreachable.stderr, unreachable.stderr
    outputs["server unreachable"] = unreachable.stdout + unreachable.stderr
    # the probe's outcome as the snapshot keeps it (its error message names the URL)
    outputs["server unreachable, kept"] = document.read_text("utf-8")
    assert _leaking(outputs) == {}


def test_a_recording_keeps_no_secret(cli: Callable[..., CliResult], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for n, text in enumerate(TEXTS):
        monkeypatch.setenv(f"CORPUS_{n:02d}", text)
    directory = tmp_path / "rec"
    done = cli("record", str(directory), "--probe", "env")
    assert done.returncode == 0, done.stderr
    kept = "".join(path.read_bytes().decode("utf-8", "replace") for path in sorted(directory.rglob("*"))
                   if path.is_file())
    assert "CORPUS_00" in kept
    assert _leaking({"recording": kept, "record": done.stdout + done.stderr}) == {}
