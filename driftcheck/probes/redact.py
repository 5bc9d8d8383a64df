"""Keeping secrets out of snapshots while a change of a secret stays visible.

A value is replaced by `<redacted:hmac-sha256:` + 16 hex digits + `>`, an HMAC keyed by the user's own
secret: the same value gives the same digest on the same user's snapshots, and nobody holding only
a snapshot can test guesses against it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence

SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY",
                     "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PWD")
# Parts of names that look like a secret word but count things: MAX_TOKENS, TOKENIZER_PATH, AUTHOR, OLDPWD/PWD
# (the working directory). They never make a name secret on their own.
_NOT_SECRET_PARTS = re.compile(r"TOKENS|TOKENI[SZ]|AUTHOR|^(?:OLD)?PWD$")
# Names ending in _KEY that carry no secret: key ids and public key material published on purpose.
PUBLIC_KEY_NAMES = frozenset({"GPG_KEY", "PYTHON_GPG_KEY", "PUBLIC_KEY", "SSH_PUBLIC_KEY", "GPG_KEY_ID",
                              "NVIDIA_GPG_KEY", "CUDA_GPG_KEY", "DEBIAN_KEY"})
REDACTED_PATTERN = re.compile(r"<redacted:hmac-sha256:[0-9a-f]{16}>")
# A URL's authority: everything after `scheme://` up to the path, query or end. Its user-info is what comes
# before the LAST `@` of it (a password may itself hold `@`), and may have an empty user (`redis://:pw@host`).
_URL_AUTHORITY = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<authority>[^/?#\s]*)")
# `name=value` in a query string or a `key=value;` connection string.
_QUERY_PARAMETER = re.compile(r"(?P<head>[?&;](?P<name>[A-Za-z0-9_.-]+)=)(?P<value>[^&;#\s]*)")
# Webhook URLs carry their secret in the path.
_WEBHOOK_PATH = re.compile(r"(?P<head>hooks\.slack\.com/(?:services|workflows)/|discord(?:app)?\.com/api/webhooks/"
                           r"|webhook\.office\.com/webhookb2/|api\.telegram\.org/bot)(?P<secret>[^\s?#\"']+)")
# `--flag value` / `--flag=value` inside a value (EXTRA_ARGS="--port 30000 --token X").
_FLAG_PAIR = re.compile(r"(?P<flag>(?<![\w-])--?[A-Za-z][A-Za-z0-9_-]*)(?P<sep>=|\s+)(?P<value>[^\s\"']+)")
_FLAG_WORD = re.compile(r"--?[A-Za-z][A-Za-z0-9_.-]*")
# Well-known token shapes, caught even in a variable whose name looks harmless.
_TOKEN_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,})\b")


def is_secret_name(name: str) -> bool:
    """Whether a name (an environment variable, a command-line flag, a query parameter) says its value is a
    credential. One rule for all three: `--hf_token`, `--openai-api-key`, `HF_TOKEN`, `?password=`."""
    upper = re.sub(r"[^A-Z0-9]+", "_", name.upper().lstrip("-")).strip("_")
    words = _NOT_SECRET_PARTS.sub("", upper)
    if any(part in words for part in SECRET_NAME_PARTS):
        return True
    return (upper.endswith("_KEY") or upper == "KEY") and upper not in PUBLIC_KEY_NAMES


def is_secret_flag(flag: str) -> bool:
    """Whether a named command-line flag (`--api-key`, `--hf_token`, `--openai-api-key`) carries a secret."""
    # Only a flag-shaped word: a whole argument holding spaces ("--port 1 --token X") is a value to scrub.
    return bool(_FLAG_WORD.fullmatch(flag)) and len(flag.lstrip("-")) > 1 and is_secret_name(flag)


class Redactor:
    """Replaces secrets by digests keyed with the user's redaction secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def digest(self, value: str) -> str:
        """The redacted stand-in for `value`; already-redacted values are kept as they are."""
        if REDACTED_PATTERN.fullmatch(value):
            return value
        mac = hmac.new(self._secret, value.encode("utf-8", errors="surrogateescape"), hashlib.sha256)
        return f"<redacted:hmac-sha256:{mac.hexdigest()[:16]}>"

    def scrub_value(self, value: str) -> str:
        """`value` with every secret inside it replaced: URL user-info, secret query parameters, webhook paths,
        the values of secret flags (`--token X` inside EXTRA_ARGS) and well-known token shapes."""
        value = _URL_AUTHORITY.sub(self._authority, value)
        value = _QUERY_PARAMETER.sub(lambda m: m.group("head") + self._digest_if(m.group("name"), m.group("value")),
                                     value)
        value = _WEBHOOK_PATH.sub(lambda m: m.group("head") + self.digest(m.group("secret")), value)
        value = _FLAG_PAIR.sub(lambda m: m.group("flag") + m.group("sep") + (
            self.digest(m.group("value")) if is_secret_flag(m.group("flag")) else m.group("value")), value)
        return _TOKEN_SHAPES.sub(lambda m: self.digest(m.group(0)), value)

    def text(self, value: str) -> str:
        """Any free text bound for a snapshot, a label, a run record or a log line: `scrub_value`."""
        return self.scrub_value(value)

    def _authority(self, match: re.Match[str]) -> str:
        authority = match.group("authority")
        if "@" not in authority:
            return match.group(0)
        user_info, _, host = authority.rpartition("@")
        return match.group("scheme") + self.digest(user_info) + "@" + host

    def _digest_if(self, name: str, value: str) -> str:
        return self.digest(value) if value and is_secret_name(name) else value

    def environ(self, environ: Mapping[str, str]) -> dict[str, str]:
        """An environment safe to store: secret-named values digested, others scrubbed."""
        return {name: self.digest(value) if is_secret_name(name) else self.scrub_value(value)
                for name, value in environ.items()}

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command line safe to store: the values of secret flags digested, the rest scrubbed."""
        cleaned: list[str] = []
        hide_next = False
        for arg in argv:
            if hide_next:
                cleaned.append(self.digest(arg))
                hide_next = False
                continue
            flag, sep, value = arg.partition("=")
            if is_secret_flag(flag):
                if sep:
                    cleaned.append(f"{flag}={self.digest(value)}")
                else:
                    cleaned.append(arg)
                    hide_next = True
                continue
            cleaned.append(self.scrub_value(arg))
        return cleaned
