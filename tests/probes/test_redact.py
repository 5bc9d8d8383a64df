"""Secrets never enter a snapshot: names, URL credentials, token shapes, command-line flags."""

from __future__ import annotations

import pytest

from driftcheck.probes.redact import REDACTED_PATTERN, Redactor, is_secret_name

SECRET = b"k" * 32


@pytest.mark.parametrize("name", ["HF_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "MYSQL_PASSWD",
                                  "OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "SSH_PRIVATE_KEY", "GOOGLE_CREDENTIALS",
                                  "BASIC_AUTH", "SESSION_COOKIE", "WANDB_KEY", "hf_token"])
def test_credential_names_are_secret(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "OMP_NUM_THREADS", "GPG_KEY",
                                  "PYTHON_GPG_KEY", "HOME", "LD_LIBRARY_PATH"])
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret_name(name)


def test_secret_value_is_replaced_by_a_stable_keyed_digest() -> None:
    redactor = Redactor(SECRET)
    env = redactor.environ({"HF_TOKEN": "hf_example123", "HOME": "/root"})
    assert env["HOME"] == "/root"
    assert "hf_example123" not in env["HF_TOKEN"]
    assert REDACTED_PATTERN.fullmatch(env["HF_TOKEN"])
    assert redactor.environ({"HF_TOKEN": "hf_example123"})["HF_TOKEN"] == env["HF_TOKEN"]
    assert redactor.environ({"HF_TOKEN": "hf_example124"})["HF_TOKEN"] != env["HF_TOKEN"]
    # Another user's secret gives another digest: a snapshot alone cannot be used to test guesses.
    assert Redactor(b"x" * 32).environ({"HF_TOKEN": "hf_example123"})["HF_TOKEN"] != env["HF_TOKEN"]


def test_redaction_is_idempotent() -> None:
    redactor = Redactor(SECRET)
    once = redactor.environ({"API_KEY": "abc", "URL": "https://u:p@h/x"})
    assert redactor.environ(once) == once


def test_url_credentials_are_replaced_but_the_rest_of_the_url_kept() -> None:
    redactor = Redactor(SECRET)
    value = redactor.scrub_value("https://alice:s3cret@pypi.example.org/simple https://plain.example.org/x")
    assert "alice" not in value and "s3cret" not in value
    assert "@pypi.example.org/simple" in value
    assert "https://plain.example.org/x" in value


def test_token_shapes_are_caught_in_harmless_looking_names() -> None:
    token = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1"
    scrubbed = Redactor(SECRET).environ({"EXTRA_ARGS": f"--model x --header {token}"})
    assert token not in scrubbed["EXTRA_ARGS"]
    assert scrubbed["EXTRA_ARGS"].startswith("--model x --header <redacted:")


def test_secret_flags_on_a_command_line() -> None:
    argv = Redactor(SECRET).argv(["python", "-m", "sglang.launch_server", "--api-key", "abc123",
                                  "--hf-token=hf_zzz", "--port", "30000"])
    assert "abc123" not in " ".join(argv) and "hf_zzz" not in " ".join(argv)
    assert argv[:4] == ["python", "-m", "sglang.launch_server", "--api-key"]
    assert argv[-2:] == ["--port", "30000"]
