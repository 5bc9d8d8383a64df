"""Whose signature a snapshot carries, and whether the user trusts that key.

A valid signature only says the content is what some key signed; "signed by SHA256:..." in the same words
for the user's own key and for a stranger's says nothing about who. The trust store is a small text file
in the config dir (`trusted_keys`: one `SHA256:<fingerprint> <name>` per line, as OpenSSH keeps
known_hosts): the user's own key is trusted from the start, others by `driftcheck key trust`, or on first
use where the user opts in (`verify --accept-new`). Every command that reads a snapshot can then say
"signed by you", "by <name>", "by an unknown key SHA256:...", or "not signed".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import DriftcheckError, KeyFileError, UsageError
from driftcheck.snapshot.home import config_dir, ensure_private_dir
from driftcheck.snapshot.jsontypes import JSONObject
from driftcheck.snapshot.keys import SIGNING_KEY_FILE, fingerprint, load_signing_key
from driftcheck.snapshot.signing import Verification, verify_document

TRUST_FILE = "trusted_keys"
# As text, compiled by `re` (and kept in its cache) when a trusted key is read or added: naming the signer of the
# user's own snapshots (every show and explain) needs neither.
_FINGERPRINT = r"^SHA256:[A-Za-z0-9+/]{43}$"
_NAME = r"^[\w .@:+-]{1,64}$"
SIGNER_STATES = ("you", "trusted", "unknown", "unsigned", "altered")


@dataclass(frozen=True)
class TrustedKey:
    """A key the user trusts: its fingerprint and the name it is shown under."""

    fingerprint: str
    name: str


@dataclass(frozen=True)
class Signer:
    """Who signed a snapshot, as far as this user can tell. `state` is one of `SIGNER_STATES`."""

    state: str
    fingerprint: str | None = None
    name: str | None = None
    # Where an unsigned document came from when that explains why it is unsigned ("imported from a paste").
    note: str | None = None

    @property
    def trusted(self) -> bool:
        return self.state in ("you", "trusted")

    def who(self) -> str | None:
        """Who signed it, for "signed by ...": `you`, a trusted name, `an unknown key SHA256:...`; None when
        the snapshot is unsigned or altered (no signer to name)."""
        if self.state not in ("you", "trusted", "unknown"):
            return None
        return self.text().removeprefix("signed by ")

    def text(self) -> str:
        """`signed by you`, `signed by alice (SHA256:...)`, `signed by an unknown key SHA256:...`, ..."""
        if self.state == "you":
            return "signed by you"
        if self.state == "trusted":
            if self.name == self.fingerprint:  # trusted without a name
                return f"signed by a trusted key {self.fingerprint}"
            return f"signed by {self.name} ({self.fingerprint})"
        if self.state == "unknown":
            return f"signed by an unknown key {self.fingerprint}"
        if self.state == "altered":
            return "altered after signing: the signature does not match"
        return f"{self.note}: not signed" if self.note else "not signed"

    def to_json(self) -> JSONObject:
        """The signer as JSON: state, fingerprint, name, trusted, note and the sentence `text()` says."""
        return {"state": self.state, "fingerprint": self.fingerprint, "name": self.name, "trusted": self.trusted,
                "note": self.note, "text": self.text()}


# Names that would make another's key read as the user's own in "signed by NAME".
_YOU = frozenset({"you", "me", "myself", "yourself", "your key", "my key", "you (this machine)"})


def _reads_as_you(name: str) -> bool:
    """Whether a trusted key's `name` reads as the user's own key."""
    return " ".join(name.lower().split()) in _YOU


class UntrustedSignerError(DriftcheckError):
    """A snapshot that `--require-trusted` refuses: unsigned, altered, or signed by a key the user does not
    trust. `role` names the side (A, B, the reference, a host), `signer` says who signed it."""

    def __init__(self, role: str, signer: Signer) -> None:
        hint = (f"; compare {signer.fingerprint} with what its owner says their key is, then "
                f"`driftcheck key trust {signer.fingerprint} --name NAME`" if signer.state == "unknown" else "")
        super().__init__(f"--require-trusted: {role} is {signer.text()}{hint}")
        self.role = role
        self.signer = signer


def normalize_fingerprint(text: str) -> str:
    """`SHA256:<43 base64>` from a fingerprint (with or without the prefix) or a raw base64 public key."""
    candidate = text.strip()
    if not candidate.startswith("SHA256:"):
        try:
            as_key = fingerprint(candidate)
        except ValueError:
            as_key = ""
        candidate = as_key if len(candidate) == 44 and as_key else f"SHA256:{candidate}"
    if not re.match(_FINGERPRINT, candidate):
        raise UsageError(f"{text[:60]!r} is not a key fingerprint (SHA256:... as `driftcheck key` prints it) "
                         "or a public key")
    return candidate


class TrustStore:
    """The user's trusted keys (their own included), kept in `<config dir>/trusted_keys`."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or config_dir()
        self.path = self.directory / TRUST_FILE

    def own_fingerprint(self) -> str | None:
        """The fingerprint of this user's signing key, or None while none exists (never creates one)."""
        if not (self.directory / SIGNING_KEY_FILE).exists():
            return None
        try:
            return load_signing_key(self.directory).fingerprint
        except KeyFileError:
            return None

    def entries(self) -> list[TrustedKey]:
        """The keys trusted by name, in the file's order (the user's own key is implied, not listed)."""
        try:
            lines = self.path.read_text("utf-8").splitlines()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise KeyFileError(f"cannot read {self.path}: {exc}") from exc
        found = []
        for line in lines:
            key, _, name = line.strip().partition(" ")
            if re.match(_FINGERPRINT, key):
                # A hand-edited name that `add` would refuse (control characters) is shown as the fingerprint.
                # So is a name that reads as the user's own key: only the user's key is "you".
                shown = name.strip() if re.match(_NAME, name.strip()) and not _reads_as_you(name) else key
                found.append(TrustedKey(key, shown))
        return found

    def add(self, key: str, name: str | None = None) -> TrustedKey:
        """Trust `key` (a fingerprint or public key) under `name`; replaces an earlier name for it."""
        wanted = normalize_fingerprint(key)
        label = (name or wanted).strip()
        if not re.match(_NAME, label) and label != wanted:
            raise UsageError(f"name {label[:60]!r}: letters, digits, spaces and . @ : + - only, up to 64")
        if _reads_as_you(label):
            raise UsageError(f"name {label!r}: it would read as your own key (\"signed by you\"); give the key "
                             "its owner's name")
        kept = [k for k in self.entries() if k.fingerprint != wanted]
        self._write([*kept, TrustedKey(wanted, label)])
        return TrustedKey(wanted, label)

    def remove(self, key: str) -> bool:
        """Stop trusting `key`; False when it was not trusted by name."""
        wanted = normalize_fingerprint(key)
        entries = self.entries()
        kept = [k for k in entries if k.fingerprint != wanted]
        if len(kept) == len(entries):
            return False
        self._write(kept)
        return True

    def _write(self, entries: list[TrustedKey]) -> None:
        ensure_private_dir(self.directory)
        tmp = self.path.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
        tmp.write_text("".join(f"{k.fingerprint} {k.name}\n" for k in entries), "utf-8")
        os.replace(tmp, self.path)  # whole or not at all, never half a file

    def signer_of(self, document: Mapping[str, object], verdict: Verification | None = None) -> Signer:
        """Who signed `document`, in this user's terms. `verdict`: its signature's verdict (without a trust list)
        where it was already worked out, as a Snapshot's `verification`; checked here when not given."""
        verdict = verdict or verify_document(document)
        if verdict.status == "unsigned":
            # A pasted report is imported here, unsigned by nature: say so rather than "not signed" alone.
            imported = document.get("origin") == "imported"
            return Signer("unsigned", note="imported from a paste" if imported else None)
        if verdict.status != "valid" or verdict.fingerprint is None:
            return Signer("altered", verdict.fingerprint)
        if verdict.fingerprint == self.own_fingerprint():
            return Signer("you", verdict.fingerprint, "you")
        named = next((k for k in self.entries() if k.fingerprint == verdict.fingerprint), None)
        if named is not None:
            return Signer("trusted", verdict.fingerprint, named.name)
        return Signer("unknown", verdict.fingerprint)
