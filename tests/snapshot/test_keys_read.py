"""The signing key file is read without cryptography's serialization module, and reads as that module reads it.

The key file is PKCS #8 PEM (RFC 8410). driftcheck reads the plain Ed25519 form itself (see
driftcheck/snapshot/keys.py); these tests hold that reading to cryptography's own loader and to keys made by
the real `openssl genpkey`, and check that any other PEM still gets cryptography's loader and its errors.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from driftcheck.errors import KeyFileError
from driftcheck.snapshot.keys import SIGNING_KEY_FILE, load_signing_key
from tests.conftest import REPO_ROOT


def _raw_private(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption())


def _as_cryptography_reads_it(path: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def test_the_key_made_on_first_use_reads_as_cryptography_reads_it(tmp_path: Path) -> None:
    made = load_signing_key(tmp_path)
    expected = _as_cryptography_reads_it(tmp_path / SIGNING_KEY_FILE)
    assert _raw_private(made.private_key) == _raw_private(expected)
    again = load_signing_key(tmp_path)
    assert again.public_key_b64 == made.public_key_b64 == base64.b64encode(
        expected.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)).decode()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_key_made_by_openssl_genpkey_reads_and_its_public_key_is_the_one_openssl_derives(tmp_path: Path) -> None:
    path = tmp_path / SIGNING_KEY_FILE
    subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(path)], check=True)
    public_der = subprocess.run(["openssl", "pkey", "-in", str(path), "-pubout", "-outform", "DER"], check=True,
                                capture_output=True).stdout
    loaded = load_signing_key(tmp_path)
    assert _raw_private(loaded.private_key) == _raw_private(_as_cryptography_reads_it(path))
    assert base64.b64decode(loaded.public_key_b64) == public_der[-32:]  # SubjectPublicKeyInfo ends with the key


def test_the_same_key_with_crlf_lines_still_reads(tmp_path: Path) -> None:
    made = load_signing_key(tmp_path / "first")
    (tmp_path / SIGNING_KEY_FILE).write_bytes(made.path.read_bytes().replace(b"\n", b"\r\n"))
    assert load_signing_key(tmp_path).public_key_b64 == made.public_key_b64


def test_another_kind_of_key_and_a_non_key_get_cryptographys_verdict(tmp_path: Path) -> None:
    rsa_pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "rsa").mkdir()
    (tmp_path / "rsa" / SIGNING_KEY_FILE).write_bytes(rsa_pem)
    with pytest.raises(KeyFileError, match="holds a .*RSAPrivateKey, not an Ed25519 key"):
        load_signing_key(tmp_path / "rsa")
    (tmp_path / "junk").mkdir()
    not_a_key = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    (tmp_path / "junk" / SIGNING_KEY_FILE).write_bytes(not_a_key)
    with pytest.raises(KeyFileError, match="is not a PEM private key"):
        load_signing_key(tmp_path / "junk")


_KEY_SHOW_MODULES = """
import contextlib, io, json, sys
from driftcheck.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["key", "show"])
print(json.dumps(sorted(sys.modules)))
"""


def test_key_show_never_imports_cryptographys_serialization_module() -> None:
    load_signing_key()  # made once, as on first use; what is measured is every later `key show`
    # A fresh interpreter is the point: what `key show` imports is its start-up time.
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _KEY_SHOW_MODULES], capture_output=True, text=True, env=env,
                          timeout=60, check=True)
    loaded = json.loads(done.stdout)
    assert "cryptography.hazmat.primitives.asymmetric.ed25519" in loaded
    assert "cryptography.hazmat.primitives.serialization" not in loaded
