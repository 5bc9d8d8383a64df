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

SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY",
                     "CREDENTIAL", "AUTH", "COOKIE", "SESSION")
# Names ending in _KEY that carry no secret: key ids and public key material published on purpose.
PUBLIC_KEY_NAMES = frozenset({"GPG_KEY", "PYTHON_GPG_KEY", "PUBLIC_KEY", "SSH_PUBLIC_KEY", "GPG_KEY_ID",
                              "NVIDIA_GPG_KEY", "CUDA_GPG_KEY", "DEBIAN_KEY"})
REDACTED_PATTERN = re.compile(r"<redacted:hmac-sha256:[0-9a-f]{16}>")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<cred>[^/@\s:]+:[^/@\s]*|[^/@\s:]+)@")
# Well-known token shapes, caught even in a variable whose name looks harmless.
_TOKEN_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,})\b")
# Command-line flags whose value is a secret (`--api-key X` or `--api-key=X`).
SECRET_FLAGS = ("--api-key", "--token", "--password", "--hf-token", "--secret", "--auth", "--admin-api-key")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a credential."""
    upper = name.upper()
    if any(part in upper for part in SECRET_NAME_PARTS):
        return True
    return upper.endswith("_KEY") and upper not in PUBLIC_KEY_NAMES


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
        """`value` with credentials inside URLs and well-known token shapes replaced."""
        value = _URL_CREDENTIALS.sub(lambda m: m.group("scheme") + self.digest(m.group("cred")) + "@", value)
        return _TOKEN_SHAPES.sub(lambda m: self.digest(m.group(0)), value)

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
            if flag.lower() in SECRET_FLAGS:
                if sep:
                    cleaned.append(f"{flag}={self.digest(value)}")
                else:
                    cleaned.append(arg)
                    hide_next = True
                continue
            cleaned.append(self.scrub_value(arg))
        return cleaned
