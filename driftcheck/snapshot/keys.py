"""The user's signing key pair and redaction secret, created on first use with mode 0600.

Reading the key is on the path of every signing command and of `driftcheck key show`, so the key file that
driftcheck itself writes is read without `cryptography.hazmat.primitives.serialization`, whose import (it
brings the SSH key formats, bcrypt and the ciphers) costs more than the rest of `key show`: see
`_ed25519_seed`. Any other PEM goes through cryptography's own loader, as before.

cryptography itself is imported where a key is made or loaded: what only needs the redaction secret (an
unsigned snapshot, its redaction) does not import it.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from driftcheck.errors import KeyFileError
from driftcheck.snapshot.home import config_dir, ensure_private_dir
from driftcheck.snapshot.inputs import InputError, read_input

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

SIGNING_KEY_FILE = "signing_key.pem"
REDACTION_SECRET_FILE = "redaction.secret"


def _write_new_private_file(path: Path, content: bytes) -> bool:
    """Create `path` with mode 0600 holding `content`; False when another process made it first."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
    return True


def _read_or_create(path: Path, make: Callable[[], bytes]) -> bytes:
    """The content of `path`, created with `make()` if absent. Safe against concurrent first use."""
    ensure_private_dir(path.parent)
    # A temp file renamed into place would race two first runs into two different keys; O_EXCL
    # makes exactly one writer win, and a loser reads the winner's file once it is complete.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if not path.exists() and _write_new_private_file(tmp, make()):
            with contextlib.suppress(FileExistsError):  # another first run won: read its file
                os.link(tmp, path)
    except OSError as exc:  # a full disk or a read-only home on first use: one line naming why
        raise KeyFileError(f"cannot create {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):  # nothing to remove, or a read-only home: the file is not ours
            tmp.unlink(missing_ok=True)
    return _read_key_file(path)


# A PEM Ed25519 key is 119 bytes and the redaction secret 32: a key file larger than this is no key file (a
# link to /dev/zero would otherwise be read until memory runs out).
KEY_FILE_LIMIT = 64 * 1024


def _read_key_file(path: Path) -> bytes:
    """The bytes of the key file `path`, bounded, a regular file only; KeyFileError (one line) else."""
    try:
        return read_input(path, "a key file", limit=KEY_FILE_LIMIT)
    except InputError as exc:
        raise KeyFileError(f"{path} {exc}") from None


def existing_redaction_secret(directory: Path | None = None) -> bytes | None:
    """The user's redaction secret when it exists and can be read; None else (nothing is created)."""
    path = (directory or config_dir()) / REDACTION_SECRET_FILE
    try:
        secret = _read_key_file(path)
    except KeyFileError:
        return None
    return secret if len(secret) >= 16 else None


def public_key_text(public_key: Ed25519PublicKey) -> str:
    """The raw 32-byte public key in base64: what travels in a snapshot and what `--trust` accepts."""
    return base64.b64encode(public_key.public_bytes_raw()).decode("ascii")


def fingerprint(public_key_b64: str) -> str:
    """`SHA256:<base64>` of the raw public key, in the style of ssh-keygen -l."""
    raw = base64.b64decode(public_key_b64)
    return "SHA256:" + base64.b64encode(hashlib.sha256(raw).digest()).decode("ascii").rstrip("=")


class KeyPair(NamedTuple):
    """The user's Ed25519 signing key and where it lives."""

    private_key: Ed25519PrivateKey
    path: Path

    @property
    def public_key_b64(self) -> str:
        return public_key_text(self.private_key.public_key())

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key_b64)


# RFC 8410 section 7: an Ed25519 private key in PKCS #8 (version 0, no attributes, no public key) is these
# 16 DER bytes, then the 32-byte seed. It is what `private_bytes(PEM, PKCS8, NoEncryption())` writes.
_PKCS8_ED25519_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
_PEM_HEADER, _PEM_FOOTER = b"-----BEGIN PRIVATE KEY-----", b"-----END PRIVATE KEY-----"


def _ed25519_seed(pem: bytes) -> bytes | None:
    """The 32-byte seed of an unencrypted PKCS #8 Ed25519 PEM, as driftcheck writes it; None for any other."""
    text = pem.strip()
    if not (text.startswith(_PEM_HEADER) and text.endswith(_PEM_FOOTER)):
        return None
    try:
        der = base64.b64decode(b"".join(text[len(_PEM_HEADER):-len(_PEM_FOOTER)].split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(der) != len(_PKCS8_ED25519_PREFIX) + 32 or not der.startswith(_PKCS8_ED25519_PREFIX):
        return None
    return der[len(_PKCS8_ED25519_PREFIX):]


def _new_private_key_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization  # first use only: see the module's docstring
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _load_other_pem(pem: bytes, path: Path) -> Ed25519PrivateKey:
    """A PEM that is not the plain PKCS #8 Ed25519 form, through cryptography's loader (and its errors)."""
    from cryptography.hazmat.primitives import serialization  # rare: see the module's docstring
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except ValueError as exc:
        raise KeyFileError(f"{path} is not a PEM private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def load_signing_key(directory: Path | None = None) -> KeyPair:
    """The user's signing key, created (mode 0600) on first use."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = (directory or config_dir()) / SIGNING_KEY_FILE
    pem = _read_or_create(path, _new_private_key_pem)
    seed = _ed25519_seed(pem)
    key = Ed25519PrivateKey.from_private_bytes(seed) if seed is not None else _load_other_pem(pem, path)
    return KeyPair(key, path)


def load_redaction_secret(directory: Path | None = None) -> bytes:
    """The per-user secret that keys the digests of redacted values, created on first use."""
    path = (directory or config_dir()) / REDACTION_SECRET_FILE
    secret = _read_or_create(path, lambda: os.urandom(32))
    if len(secret) < 16:
        raise KeyFileError(f"{path} is too short to be a redaction secret")
    return secret
