"""Secrets in the forms people actually leave them: every one is gone from what driftcheck keeps, and what
is no secret (MAX_TOKENS, the working directory, a tokenizer path) stays readable."""

from __future__ import annotations

import pytest

from driftcheck.probes.redact import Redactor, is_secret_name

SECRETS = ["s3cr3t-Value-0001", "s3cr3t-Value-0002", "s3cr3t-Value-0003", "s3cr3t-Value-0004", "p@ss-tail-0005",
           "s3cr3t-Value-0006", "s3cr3t-Value-0007", "s3cr3t-Value-0008", "s3cr3t-Value-0009", "T0KEN-0010",
           "hook-secret-0011", "s3cr3t-Value-0012", "s3cr3t-Value-0013", "s3cr3t-Value-0014", "s3cr3t-Value-0015",
           "s3cr3t-Value-0016", "s3cr3t-Value-0017", "s3cr3t-Value-0018", "s3cr3t-Value-0019", "s3cr3t-Value-0020",
           "s3cr3t-Value-0021"]

ENVIRON = {
    "HF_TOKEN": SECRETS[0],
    "OPENAI_API_KEY": SECRETS[1],
    "EXTRA_ARGS": f"--port 30000 --token {SECRETS[2]} --tp 8",
    "REDIS_URL": f"redis://:{SECRETS[3]}@cache:6379/0",
    "DATABASE_URL": f"postgresql://app:{SECRETS[4]}@db.internal/app",
    "MODEL_URL": f"https://example.org/m.bin?password={SECRETS[5]}&rev=main",
    "S3_URL": f"https://bucket.s3.amazonaws.com/x?X-Amz-Signature=1&token={SECRETS[6]}",
    "SERVER_FLAGS": f"--api-key={SECRETS[7]}",
    "LAUNCH": f"python -m sglang.launch_server --hf_token {SECRETS[8]}",
    "NOTIFY": f"https://hooks.slack.com/services/T000/B000/{SECRETS[10]}",
    "WANDB_APIKEY": SECRETS[11],
    "DB_PWD": SECRETS[12],
    "MY_SERVICE_AUTH": SECRETS[13],
    "CONN": f"Server=db;User Id=sa;Password={SECRETS[14]};",
    "DISCORD": f"https://discord.com/api/webhooks/123/{SECRETS[15]}",
    "GH": "ghp_" + "A" * 36,
    "TELEGRAM": f"https://api.telegram.org/bot{SECRETS[16]}/sendMessage",
    "AWS_SECRET_ACCESS_KEY": SECRETS[17],
    "SESSION_COOKIE": SECRETS[18],
    "PIP_INDEX_URL": f"https://user:{SECRETS[19]}@pypi.internal/simple",
}
ARGV = ["python", "-m", "vllm.entrypoints.openai.api_server", "--openai-api-key", SECRETS[9],
        f"--admin_token={SECRETS[20]}", "--max-tokens", "128", "--tokenizer", "/models/tok"]


def test_every_planted_secret_form_is_gone() -> None:
    redactor = Redactor(b"k" * 32)
    kept = " ".join(redactor.environ(ENVIRON).values()) + " " + " ".join(redactor.argv(ARGV))
    leaked = [s for s in [*SECRETS, "ghp_" + "A" * 36, "ss-tail"] if s in kept]
    assert leaked == []
    assert len(SECRETS) + 1 >= 20


def test_what_is_no_secret_stays_readable() -> None:
    redactor = Redactor(b"k" * 32)
    argv = redactor.argv(ARGV)
    assert argv[-4:] == ["--max-tokens", "128", "--tokenizer", "/models/tok"]
    environ = redactor.environ({"PWD": "/work", "OLDPWD": "/root", "MAX_TOKENS": "4096", "AUTHOR": "me",
                                "CACHE_URL": "redis://cache:6379/0", "EXTRA_ARGS": "--port 30000 --tp 8"})
    assert environ == {"PWD": "/work", "OLDPWD": "/root", "MAX_TOKENS": "4096", "AUTHOR": "me",
                       "CACHE_URL": "redis://cache:6379/0", "EXTRA_ARGS": "--port 30000 --tp 8"}
    # The host of a URL stays; only its user-info goes.
    assert redactor.scrub_value(ENVIRON["DATABASE_URL"]).endswith("@db.internal/app")


@pytest.mark.parametrize("name", ["--hf_token", "--openai-api-key", "--admin_token", "HF_TOKEN", "password",
                                  "X_API_KEY", "key", "DB_PWD"])
def test_one_name_rule_for_variables_flags_and_parameters(name: str) -> None:
    assert is_secret_name(name)


def test_a_changed_secret_still_shows_as_a_change_on_the_same_host() -> None:
    redactor = Redactor(b"k" * 32)
    one = redactor.scrub_value("--port 1 --token aaaa-1111")
    two = redactor.scrub_value("--port 1 --token bbbb-2222")
    assert one != two and "aaaa" not in one
