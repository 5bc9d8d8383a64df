"""Keeping secrets out of snapshots while a change of a secret stays visible.

A value is replaced by `<redacted:hmac-sha256:` + 16 hex digits + `>`, an HMAC keyed by the user's own
secret: the same value gives the same digest on the same user's snapshots, and nobody holding only
a snapshot can test guesses against it.

This module is the one catalog of what counts as a secret, and every boundary uses it: the probes (env,
process, server), recordings, imported pastes, the run store (run, try, bisect), try's and bisect's output and
every error message the command line prints. `Redactor.text` reads a value once, whatever it holds (its
patterns start only where a run begins and read a secret's value only after a secret's name), so a
megabyte-long token costs about a second, not minutes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping, Sequence

from driftcheck.snapshot.jsontypes import JSONValue
from driftcheck.snapshot.keys import load_redaction_secret

SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY",
                     "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PWD")
# Parts of names that look like a secret word but count things: MAX_TOKENS, TOKENIZER_PATH, AUTHOR (not
# AUTHORIZATION), OLDPWD/PWD
# (the working directory). They never make a name secret on their own.
_NOT_SECRET_PARTS = re.compile(r"TOKENS|TOKENI[SZ]|AUTHORS?(?![A-Z])|^(?:OLD)?PWD$")
# Names ending in _KEY that carry no secret: key ids and public key material published on purpose.
PUBLIC_KEY_NAMES = frozenset({"GPG_KEY", "PYTHON_GPG_KEY", "PUBLIC_KEY", "SSH_PUBLIC_KEY", "GPG_KEY_ID",
                              "NVIDIA_GPG_KEY", "CUDA_GPG_KEY", "DEBIAN_KEY"})
REDACTED_PATTERN = re.compile(r"<redacted:hmac-sha256:[0-9a-f]{16}>")
_FLAG_WORD = re.compile(r"--?[A-Za-z][A-Za-z0-9_.-]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# Words of a command line that announce a secret in the next word: `password:`, `Authorization:`, `Bearer`.
_KEY_WORD = re.compile(r"[{\[\"']*(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[\"']?:")
_CREDENTIAL_SCHEME = re.compile(r"(?i)bearer|basic|token|digest|negotiate")
_PEM_BEGIN_WORD = re.compile(r"-----BEGIN(?:$|\s| (?:[A-Z0-9]+ ){0,3}PRIVATE KEY)")
# Every pattern below can start only where its first character class begins (a look-behind refuses a start
# inside a run), and none backtracks over more than the run it starts: one pass over a value is linear in its
# length, whatever it holds (a 10 MB token imports in seconds, not hours).
#
# A URL's authority: everything after `scheme://` up to the path, query or end. Its user-info is what comes
# before the LAST `@` of it (a password may itself hold `@`), and may have an empty user (`redis://:pw@host`).
# `git+https://TOKEN@host` (pip freeze of a VCS install) is a scheme too.
_URL_AUTHORITY = re.compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<authority>[^/?#\s\"'<>]*)")
# `user:password@host` without a scheme (a proxy as `http_proxy=user:pw@proxy:3128`, `pip --proxy` takes it):
# a word that starts with `name:`, holds no `/` before the `@`, and goes on with a host name (not a digest: an
# image pinned as `pytorch:24.01-py3@sha256:...` is no credential).
_BARE_USER_INFO = re.compile(r"(?<![^\s\"'=,;(\[])(?P<info>[A-Za-z0-9._%+~-]+:[^\s@/\"'<>]+)@(?!sha\d+:)"
                             r"(?=[A-Za-z0-9\[])")
# `name=value` in a query string or a `key=value;` connection string.
_QUERY_PARAMETER = re.compile(r"(?P<head>[?&;](?P<name>[A-Za-z0-9_.-]+)=)(?P<value>[^&;#\s\"'<>]*)")
# Webhook URLs carry their secret in the path; so does a conda channel's token (`https://HOST/t/TOKEN/channel`,
# the form anaconda.org and conda's `channel_alias` give), whose channel name after it stays.
_PATH_SECRET = re.compile(r"(?P<head>hooks\.slack\.com/(?:services|workflows)/|discord(?:app)?\.com/api/webhooks/"
                          r"|webhook\.office\.com/webhookb2/|api\.telegram\.org/bot)(?P<secret>[^\s?#\"'<>]+)")
_CONDA_TOKEN = re.compile(r"(?P<head>://[^/\s\"'<>]+/t/)(?P<secret>[^/\s\"'<>]+)")
# Secrets behind a name: `--flag value` / `--flag=value` / `--flag "value"` inside a value (EXTRA_ARGS="--port
# 30000 --token X"), `NAME=value` words (`env AWS_SECRET_ACCESS_KEY=... cmd`, `--b HF_TOKEN=...`, a label typed as
# a command line), and `name: value` / `"name": "value"` (YAML, JSON, a pasted `vars.HF_TOKEN: ...`, an HTTP
# header). Each pattern is the head only (the name and what joins it to its value): `_named_values` reads the
# value only after a secret name, so a harmless `V=HF_TOKEN=x` leaves its inner assignment to be found.
_FLAG_HEAD = re.compile(r"(?<![\w-])(?P<name>--?[A-Za-z][A-Za-z0-9_-]*)(?:=|[ \t]+)")
_ASSIGNMENT_HEAD = re.compile(r"(?<![\w.$-])(?P<name>[A-Za-z_][A-Za-z0-9_.]*)=")
_KEY_HEAD = re.compile(r"(?<![\w.-])[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[\"']?[ \t]*:[ \t]*")
# A value as a shell would give it: quoted (to its closing quote, or the end of its line when it has none), or a
# bare word. A key's value (`_KEY_VALUE`) leaves JSON's own literals, numbers, objects and arrays alone, so a
# printed JSON document stays JSON.
_QUOTED = r"\"(?:[^\"\\\n]|\\[^\n]?)*(?:\"|(?=\n)|$)|'[^'\n]*(?:'|(?=\n)|$)"
_VALUE = re.compile(_QUOTED + r"|(?!<redacted:)[^\s\"'&;,<>]+")
_KEY_VALUE = re.compile(_QUOTED + r"|(?!<redacted:|null\b|true\b|false\b|-?\d[\d.eE+-]*(?:[\s,}\]]|$)|[{\[])"
                        r"[^\s\"',;<>}\]]+")
# `Authorization: Bearer X`, `Proxy-Authorization: Basic X` (curl -H, a pasted request), and a bare `Bearer X`.
_AUTHORIZATION = re.compile(r"(?i)(?P<head>(?<![\w-])(?:(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
                            r"(?:(?:bearer|basic|token|digest|negotiate|apikey)\s+)?|bearer\s+))"
                            r"(?P<value>(?!<redacted:)[^\s\"',;<>]+)")
# JSON Web Tokens: three base64url parts, the first two JSON objects (`eyJ` is base64 of `{"`).
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
# A private key in PEM, whatever the variable holding it is called (`-----BEGIN ... PRIVATE KEY-----`).
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----")
# Well-known token shapes, caught even in a variable whose name looks harmless: Hugging Face, GitHub, OpenAI
# and Anthropic, Slack, AWS key ids, GitLab, PyPI upload tokens, npm, Google API keys, Stripe.
_TOKEN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|sk-[A-Za-z0-9_-]{20,}|xox[abprse]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|glpat-[A-Za-z0-9_-]{20,}|pypi-[A-Za-z0-9_-]{50,}|npm_[A-Za-z0-9]{36}|AIza[0-9A-Za-z_-]{35}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{20,})[A-Za-z0-9_-]*")


def is_secret_name(name: str) -> bool:
    """Whether a name (an environment variable, a command-line flag, a query parameter) says its value is a
    credential. One rule for all three: `--hf_token`, `--openai-api-key`, `HF_TOKEN`, `?password=`."""
    upper = re.sub(r"[^A-Z0-9]+", "_", name.upper().lstrip("-")).strip("_")
    words = _NOT_SECRET_PARTS.sub("", upper)
    if any(part in words for part in SECRET_NAME_PARTS):
        return True
    # An SSH host key is public (`--accept-new-host-key`, `HOST_KEY`): published on purpose, as a GPG key.
    return (upper.endswith("_KEY") or upper == "KEY") and upper not in PUBLIC_KEY_NAMES and not upper.endswith(
        "HOST_KEY")


def is_secret_flag(flag: str) -> bool:
    """Whether a named command-line flag (`--api-key`, `--hf_token`, `--openai-api-key`) carries a secret."""
    # Only a flag-shaped word: a whole argument holding spaces ("--port 1 --token X") is a value to scrub.
    return bool(_FLAG_WORD.fullmatch(flag)) and len(flag.lstrip("-")) > 1 and is_secret_name(flag)


def _private_key_items(items: Sequence[JSONValue]) -> list[bool]:
    """Which items of a list (the words of a command line, the lines of a paste) belong to a private key written
    across several of them: from a `-----BEGIN ... PRIVATE KEY` item to its `-----END` item, or the end."""
    inside = False
    marks: list[bool] = []
    for item in items:
        text = item if isinstance(item, str) else ""
        inside = inside or _PEM_BEGIN_WORD.match(text) is not None
        marks.append(inside)
        inside = inside and "-----END" not in text
    return marks


class Redactor:
    """Replaces secrets by digests keyed with the user's redaction secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def of_user(cls) -> Redactor:
        """The redactor keyed with the user's own redaction secret (made on first use)."""
        return cls(load_redaction_secret())

    def digest(self, value: str) -> str:
        """The redacted stand-in for `value`; already-redacted values are kept as they are."""
        if REDACTED_PATTERN.fullmatch(value):
            return value
        mac = hmac.new(self._secret, value.encode("utf-8", errors="surrogateescape"), hashlib.sha256)
        return f"<redacted:hmac-sha256:{mac.hexdigest()[:16]}>"

    def scrub_value(self, value: str) -> str:
        """`value` with every secret inside it replaced: private keys, URL user-info (with a scheme or not),
        secret query parameters, webhook and conda-channel paths, `Authorization:` credentials, the values of
        secret flags (`--token X` inside EXTRA_ARGS), of secret assignments (`HF_TOKEN=...`) and keys
        (`"password": ...`), JSON Web Tokens and well-known token shapes. Linear in the length of `value`."""
        value = self._private_keys(value)
        value = _URL_AUTHORITY.sub(self._authority, value)
        value = _BARE_USER_INFO.sub(lambda m: self.digest(m.group("info")) + "@", value)
        value = _QUERY_PARAMETER.sub(lambda m: m.group("head") + self._digest_if(m.group("name"), m.group("value")),
                                     value)
        value = _PATH_SECRET.sub(lambda m: m.group("head") + self.digest(m.group("secret")), value)
        value = _CONDA_TOKEN.sub(lambda m: m.group("head") + self.digest(m.group("secret")), value)
        value = _AUTHORIZATION.sub(lambda m: m.group("head") + self.digest(m.group("value")), value)
        value = self._named_values(value, _FLAG_HEAD, _VALUE, is_secret_flag)
        value = self._named_values(value, _ASSIGNMENT_HEAD, _VALUE, is_secret_name)
        value = self._named_values(value, _KEY_HEAD, _KEY_VALUE, is_secret_name)
        value = _JWT.sub(lambda m: self.digest(m.group(0)), value)
        return _TOKEN_SHAPES.sub(lambda m: self.digest(m.group(0)), value)

    def text(self, value: str) -> str:
        """Any free text bound for a snapshot, a label, a run record, a page or a log line: `scrub_value`."""
        return self.scrub_value(value)

    def json(self, value: JSONValue, name: str = "") -> JSONValue:
        """A JSON value safe to keep or print: a string under a secret name (`token`, `{"password": ...}`, at
        any depth) digested, every other string scrubbed; keys, numbers and the shape kept."""
        if isinstance(value, str):
            # Only a key shaped as a name says what its value is: a prose key ("Token path ?") holds a path.
            named = bool(value) and _KEY_NAME.fullmatch(name) is not None and is_secret_name(name)
            return self.digest(value) if named else self.scrub_value(value)
        if isinstance(value, dict):
            return {key: self.json(item, key) for key, item in value.items()}
        if isinstance(value, list):
            in_key = _private_key_items(value)
            return [self.digest(item) if isinstance(item, str) and hidden else self.json(item, name)
                    for item, hidden in zip(value, in_key, strict=True)]
        return value

    def _private_keys(self, value: str) -> str:
        """Every PEM private key block digested whole (to its END line, or to the end when it has none)."""
        if "PRIVATE KEY" not in value:
            return value
        parts: list[str] = []
        at = 0
        while (begin := _PEM_BEGIN.search(value, at)) is not None:
            end = _PEM_END.search(value, begin.end())
            stop = end.end() if end is not None else len(value)
            parts += [value[at:begin.start()], self.digest(value[begin.start():stop])]
            at = stop
        return "".join(parts) + value[at:]

    def _authority(self, match: re.Match[str]) -> str:
        authority = match.group("authority")
        if "@" not in authority:
            return match.group(0)
        user_info, _, host = authority.rpartition("@")
        return match.group("scheme") + self.digest(user_info) + "@" + host

    def _digest_if(self, name: str, value: str) -> str:
        return self.digest(value) if value and is_secret_name(name) else value

    def _named_values(self, text: str, head: re.Pattern[str], value: re.Pattern[str],
                      secret: Callable[[str], bool]) -> str:
        """`text` with the value after each `head` whose name is `secret` digested. A value is read only after a
        secret name, and the search goes on right after a harmless head (its value may hold a secret's head):
        each character is looked at a bounded number of times."""
        parts: list[str] = []
        at = 0
        while (found := head.search(text, at)) is not None:
            parts.append(text[at:found.end()])
            at = found.end()
            if not secret(found.group("name")):
                continue
            given = value.match(text, at)
            if given is not None and given.group(0):
                parts.append(self._quoted_digest(given.group(0)))
                at = given.end()
        return "".join(parts) + text[at:]

    def _quoted_digest(self, value: str) -> str:
        """The digest of a value as written: its quotes kept around the digest of what they hold."""
        quote = value[:1]
        if quote in ("'", '"'):
            closed = len(value) > 1 and value.endswith(quote)
            inner = value[1:-1] if closed else value[1:]
            return quote + self.digest(inner) + (quote if closed else "") if inner else value
        return self.digest(value)

    def environ(self, environ: Mapping[str, str]) -> dict[str, str]:
        """An environment safe to store: secret-named values digested, others scrubbed."""
        return {name: self.digest(value) if value and is_secret_name(name) else self.scrub_value(value)
                for name, value in environ.items()}

    def argv(self, argv: Sequence[str]) -> list[str]:
        """A command line safe to store: the values of secret flags and secret `NAME=VALUE` words digested,
        the word after a secret key (`password:`, `Authorization: Bearer`), every word of a private key split
        into words, and the rest scrubbed."""
        cleaned: list[str] = []
        hide_next = False
        for arg, in_key in zip(argv, _private_key_items(argv), strict=True):
            if in_key:
                cleaned.append(self.digest(arg))
                continue
            if hide_next:
                hide_next = _CREDENTIAL_SCHEME.fullmatch(arg) is not None  # `Authorization: Bearer X`: X goes
                cleaned.append(arg if hide_next else self.digest(arg))
                continue
            flag, sep, value = arg.partition("=")
            if is_secret_flag(flag):
                if sep:
                    cleaned.append(f"{flag}={self.digest(value)}" if value else arg)
                else:
                    cleaned.append(arg)
                    hide_next = True
                continue
            if sep and value and _NAME.fullmatch(flag) and is_secret_name(flag):
                cleaned.append(f"{flag}={self.digest(value)}")
                continue
            key = _KEY_WORD.fullmatch(arg)
            hide_next = bool(key and is_secret_name(key.group("name"))) or _CREDENTIAL_SCHEME.fullmatch(arg) is not None
            cleaned.append(self.scrub_value(arg))
        return cleaned
