"""Masking who and where a snapshot came from, before it is attached to a public bug report.

Host names, user names, IPv4/IPv6 and MAC addresses and home directories are replaced by tokens derived
from a keyed digest (the user's redaction secret): the same name always masks to the same token, in
this snapshot and in any other the same user anonymizes, so two masked snapshots still diff cleanly.
Version strings that look like addresses (`12.8.3.14`) are left alone: package, kernel and torch facts
never hold a machine's address. Secrets never reach a snapshot in the first place (see redact.py), but a
snapshot stored by an older driftcheck may hold some (a label, a command line): every string is scrubbed by
the same redaction rule on the way out, the environment's values by their variables' names.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from driftcheck.probes.redact import Redactor
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty, value_at

_IPV4 = re.compile(r"(?<![\w.])((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])")
_IPV6 = re.compile(r"(?<![\w:])(?=[0-9A-Fa-f:]*::|(?:[0-9A-Fa-f]{1,4}:){7})(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}"
                   r"(?![\w:])")
_MAC = re.compile(r"(?<![\w:])([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![\w:])")
_HOME = re.compile(r"(/home/|/Users/|C:\\\\Users\\\\|C:\\Users\\)([^/\\\s:\"']+)")
# Probes whose strings are versions and digests, never addresses.
_NO_ADDRESS_PROBES = ("packages", "kernels", "torch")
# Document members that are the signature's own: never rewritten.
_UNTOUCHED_TOP = ("signature", "schema", "created_at", "tool", "origin")
_HOST_VARS = ("HOSTNAME", "HOST", "NODENAME", "SLURMD_NODENAME", "SLURM_NODELIST", "SLURM_JOB_NODELIST")
_USER_VARS = ("USER", "LOGNAME", "USERNAME", "SUDO_USER")


class Anonymizer:
    """Masks the identifying strings of snapshot documents; one instance keeps the name → token map."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.masked: dict[str, str] = {}
        self.redactor = Redactor(secret)

    def token(self, kind: str, value: str) -> str:
        """`<kind>-<8 hex>` for `value`: the same for the same value and secret."""
        digest = hmac.new(self.secret, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:8]
        self.masked[value] = f"{kind}-{digest}"
        return self.masked[value]

    def document(self, document: JSONObject) -> JSONObject:
        """A masked copy of `document` (the signature is dropped: the content changed)."""
        names = self._names(document)
        document = self._scrubbed_environment(document)
        out: JSONObject = {}
        for key, value in document.items():
            if key == "signature":
                continue
            out[key] = value if key in _UNTOUCHED_TOP else self._walk(value, names, addresses=True)
        probes = out.get("probes")
        if isinstance(probes, dict):
            for probe in probes:
                if probe in _NO_ADDRESS_PROBES:
                    probes[probe] = self._walk(value_at(document, "probes", probe), names, addresses=False)
        out["anonymized"] = True
        return out

    def _scrubbed_environment(self, document: JSONObject) -> JSONObject:
        """`document` with the env probe's variables redacted by name (HF_TOKEN=...), as the probe does now."""
        probes = object_or_empty(document.get("probes"))
        env = object_or_empty(probes.get("env"))
        data = object_or_empty(env.get("data"))
        variables = data.get("vars")
        if not isinstance(variables, dict):
            return document
        texts = {name: value for name, value in variables.items() if isinstance(value, str)}
        if len(texts) < len(variables):
            return document
        redacted = {**data, "vars": self.redactor.environ(texts)}
        return {**document, "probes": {**probes, "env": {**env, "data": redacted}}}

    def _names(self, document: JSONObject) -> dict[str, str]:
        """Literal host and user names found in the document → their tokens, longest first."""
        found: dict[str, str] = {}
        host = object_or_empty(document.get("host"))
        env = object_or_empty(value_at(document, "probes", "env", "data", "vars"))
        for name in [host.get("name"), *(env.get(v) for v in _HOST_VARS)]:
            if isinstance(name, str) and name and name not in ("localhost", "imported"):
                found[name] = self.token("host", name)
                short = name.split(".")[0]
                if len(short) >= 3 and short != name:
                    found[short] = self.token("host", short)
        for name in (env.get(v) for v in _USER_VARS):
            if isinstance(name, str) and len(name) >= 2 and name != "root":
                found[name] = self.token("user", name)
        return dict(sorted(found.items(), key=lambda kv: -len(kv[0])))

    def _walk(self, value: JSONValue, names: dict[str, str], addresses: bool) -> JSONValue:
        if isinstance(value, str) and value in names:
            return names[value]  # a whole value that is a name, however short
        if isinstance(value, dict):
            # A value under a *version* key (NV_CUDNN_VERSION=8.9.7.29) is a version, not an address.
            return {self.text(k, names, addresses) if isinstance(k, str) else k:
                    self._walk(v, names, addresses and "version" not in str(k).lower()) for k, v in value.items()}
        if isinstance(value, list):
            texts = [v for v in value if isinstance(v, str)]
            if value and len(texts) == len(value):  # a command line's `--token X` spans two items
                return [self._walk(v, names, addresses) for v in self.redactor.argv(texts)]
            return [self._walk(v, names, addresses) for v in value]
        if isinstance(value, str):
            return self.text(self.redactor.text(value), names, addresses)
        return value

    def text(self, text: str, names: dict[str, str] | None = None, addresses: bool = True) -> str:
        """`text` with home directories, known names and (when `addresses`) IP and MAC addresses masked."""
        text = _HOME.sub(lambda m: m.group(1) + self.token("user", m.group(2)), text)
        for name, token in (names or {}).items():
            # Inside longer text only names long enough not to hit ordinary words (`vm`, `a1`).
            if len(name) >= 4 and name in text:
                text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", token, text)
        if addresses:
            text = _MAC.sub(lambda m: self.token("mac", m.group(0).lower()), text)
            text = _IPV4.sub(lambda m: m.group(0) if m.group(0).startswith("127.") else self.token("ip", m.group(0)),
                             text)
            text = _IPV6.sub(lambda m: m.group(0) if m.group(0) in ("::1", "::") or m.group(0).count(":") < 2
                             else self.token("ip6", m.group(0).lower()), text)
        return text
