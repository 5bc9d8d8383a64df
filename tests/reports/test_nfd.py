"""The node-feature-discovery feature file: its lines as NFD's local source reads them, and as nfd-master keeps them.

The rules are the other tools' own, read from their source (not restated from memory):
- NFD's `parseFeatureFile` (source/local/local.go, kubernetes-sigs/node-feature-discovery at 76e6cc8,
  v0.20.0-devel): lines trimmed, empty and `#` lines skipped, `key[=value]` split at the first `=`, a
  missing value is "true"; dot files are ignored (docs/usage/customization-guide.md);
- nfd-master's `validate.Label` (pkg/apis/nfd/validate/validate.go, same commit): a qualified key with a
  namespace, which under kubernetes.io must be `feature.node.kubernetes.io` or a sub-namespace of it, and a
  value valid by apimachinery's `IsValidLabelValue` (pkg/util/validation/validation.go: at most 63
  characters, `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from driftcheck.errors import DriftcheckError
from driftcheck.reports.drift_verdict import DriftVerdict
from driftcheck.reports.nfd import FEATURE_FILE, label_value, node_features, write_feature_file
from driftcheck.snapshot.model import Snapshot
from tests.reports.helpers import large_document

# apimachinery validation.go: qualifiedNameFmt, labelValueFmt, dns1123SubdomainFmt and their lengths.
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def nfd_parse(text: str) -> dict[str, str]:
    """NFD's parseFeatureFile, without expiry directives (driftcheck writes none)."""
    labels = {}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        labels[key] = value if sep else "true"
    return labels


def nfd_master_keeps(key: str, value: str) -> bool:
    """nfd-master's validate.Label: a namespaced qualified key in an allowed namespace, a valid label value."""
    namespace, sep, name = key.partition("/")
    if not sep or not namespace or len(namespace) > 253 or not DNS1123_SUBDOMAIN.match(namespace):
        return False
    if not (0 < len(name) <= 63 and QUALIFIED_NAME.match(name)):
        return False
    if namespace == "kubernetes.io" or namespace.endswith(".kubernetes.io"):
        allowed = ("feature.node.kubernetes.io", "profile.node.kubernetes.io")
        if namespace not in allowed and not namespace.endswith(tuple("." + ns for ns in allowed)):
            return False
    return len(value) <= 63 and bool(LABEL_VALUE.match(value))


def test_the_8_gpu_snapshot_becomes_labels_nfd_reads_and_nfd_master_keeps(tmp_path: Path) -> None:
    snapshot = Snapshot(large_document(), "8 x H100")
    verdict = DriftVerdict(reference="default", drift=True, checked_at=0.0, causes={"pcie_link": 1})
    path = write_feature_file(tmp_path, node_features(snapshot, verdict))
    assert path == tmp_path / FEATURE_FILE and os.listdir(tmp_path) == [FEATURE_FILE]  # no dot file left
    labels = nfd_parse(path.read_text("utf-8"))
    prefix = "driftcheck.feature.node.kubernetes.io/"
    assert labels == {prefix + "drift": "true", prefix + "baseline": "default", prefix + "driver": "535.161.08",
                      prefix + "cuda-driver": "12.2",
                      prefix + "cuda-torch": str(snapshot.probe_data("torch")["cuda_version"])}  # type: ignore[index]
    assert all(nfd_master_keeps(key, value) for key, value in labels.items())


def test_without_a_check_there_is_no_drift_label_rather_than_a_guess() -> None:
    features = node_features(Snapshot(large_document(), "A"), None)
    assert "drift" not in features and "baseline" not in features and features["driver"] == "535.161.08"


@pytest.mark.parametrize("raw", ["550.54.15 (beta)", "baseline:default", "x" * 80, "-leading.and.trailing_",
                                 "@latest", "sglang 0.5.3rc0+cu128"])
def test_any_value_becomes_one_nfd_master_keeps(raw: str) -> None:
    value = label_value(raw)
    assert nfd_master_keeps("driftcheck.feature.node.kubernetes.io/x", value), value


def test_a_value_already_valid_is_kept_as_it_is() -> None:
    assert label_value("535.161.08") == "535.161.08" and label_value("12.2") == "12.2"


def test_a_missing_features_directory_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(DriftcheckError, match="no such directory"):
        write_feature_file(tmp_path / "absent", {"drift": "false"})
