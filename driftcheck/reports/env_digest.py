"""One keyed digest per environment variable family: a family's change is visible, its values never leave.

The families are the catalog's (`env_families` of snapshot/catalog.yaml). A family's digest is an
HMAC-SHA256, keyed with the user's redaction secret, over its variables' `NAME=value` lines in name order:
the same settings give the same digest on this host, a changed one another, and nobody without the key
can test a guess of a value against it (as the env probe's digests of secrets).
"""

from __future__ import annotations

import hashlib
import hmac

from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.jsontypes import object_or_empty
from driftcheck.snapshot.model import Snapshot

DIGEST_HEX_CHARS = 16


def family_settings(snapshot: Snapshot) -> dict[str, dict[str, str]]:
    """family -> {variable: value} of the snapshot's environment, for the families that have a variable set."""
    variables = object_or_empty((snapshot.probe_data("env") or {}).get("vars"))
    catalog = name_catalog()
    families: dict[str, dict[str, str]] = {}
    for name in sorted(variables):
        family = catalog.env_family_of(name)
        if family is not None:
            families.setdefault(family, {})[name] = str(variables[name])
    return families


def family_digests(snapshot: Snapshot, secret: bytes) -> dict[str, str]:
    """family -> keyed digest of its settings (`hmac-sha256:` and 16 hex characters), families in name order."""
    digests = {}
    for family, settings in sorted(family_settings(snapshot).items()):
        lines = "\n".join(f"{name}={value}" for name, value in sorted(settings.items()))
        mac = hmac.new(secret, lines.encode("utf-8", errors="surrogateescape"), hashlib.sha256)
        digests[family] = "hmac-sha256:" + mac.hexdigest()[:DIGEST_HEX_CHARS]
    return digests
