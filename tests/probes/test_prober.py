"""The one way to take a snapshot: a Prober (host, redactor, key, store, options) takes, signs, keeps and records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftcheck.errors import KeyFileError, OptionError
from driftcheck.hosts import LocalHost, ReplayHost
from driftcheck.probes.base import BenchRequest, ProbeOptions
from driftcheck.probes.prober import Prober, signing_key_loading
from driftcheck.probes.redact import Redactor
from driftcheck.snapshot.keys import load_signing_key
from driftcheck.snapshot.signing import verify_document
from driftcheck.store.snapshots import Store

HOSTS = Path(__file__).resolve().parents[1] / "data" / "hosts"
REDACTOR = Redactor(b"k" * 32)


def test_a_prober_with_a_store_keeps_and_one_without_a_key_does_not_sign() -> None:
    prober = Prober(ReplayHost(HOSTS / "debian12-vm-docker"), REDACTOR, store=Store())
    taken = prober.snapshot(prober.probes(["system"]), label="replayed")
    assert list(taken.probes) == ["system"] and taken.document["origin"] == "replayed"
    assert not taken.document.get("signature")
    assert [entry.id for entry in Store().entries()] == [taken.id]


def test_a_prober_with_a_key_signs_and_without_a_store_keeps_nothing() -> None:
    prober = Prober(LocalHost(), REDACTOR, key=load_signing_key())
    taken = prober.snapshot(prober.probes(["env"]))
    assert verify_document(taken.document).intact
    assert Store().entries() == []


def test_what_a_prober_records_replays_as_it_probed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "supersecret-value")
    live = Prober(LocalHost(), REDACTOR, options=ProbeOptions(pids=(1,)))
    result = live.record(tmp_path / "rec", live.probes(["env", "python"]))
    assert result.outcomes["env"].status == "ok"
    assert "supersecret-value" not in (tmp_path / "rec" / "host.json").read_text("utf-8")
    replay = ReplayHost(tmp_path / "rec")
    assert ProbeOptions.from_json(replay.recorded_options or {}) == ProbeOptions(pids=(1,))
    replayed = Prober(replay, REDACTOR).snapshot(Prober(replay, REDACTOR).probes(["env", "python"]))
    assert replayed.probe_data("python") == live.snapshot(live.probes(["python"])).probe_data("python")


def test_probe_options_are_typed_and_cross_a_process_boundary_as_json() -> None:
    options = ProbeOptions(deep=True, pids=(7,), process_patterns=("sglang",),
                           bench=BenchRequest("standard", runs=3, budget_s=40.0), server_url="http://gpu7:30000")
    assert ProbeOptions.from_json(json.loads(json.dumps(options.to_json()))) == options
    # A recording written before the typed fields kept a string-keyed `extra`: read, and nothing asked.
    assert ProbeOptions.from_json({"deep": False, "extra": {}, "pids": [3], "process_patterns": []}) == \
        ProbeOptions(pids=(3,))
    with pytest.raises(OptionError, match=r"budget_s=-1: must be positive"):
        BenchRequest("quick", budget_s=-1.0)


def test_a_key_still_loading_signs_as_the_loaded_key_and_raises_what_loading_raised() -> None:
    host = ReplayHost(HOSTS / "debian12-vm-docker")
    loaded = load_signing_key()
    prober = Prober(host, REDACTOR, key_loading=signing_key_loading())
    signed = prober.snapshot(prober.probes(["system"]))
    assert signed.document["signature"]["public_key"] == loaded.public_key_b64
    assert verify_document(signed.document).status == "valid"
    loaded.path.write_bytes(b"not a key")
    with pytest.raises(KeyFileError):  # raised where the snapshot is signed, not lost in the loading thread
        Prober(host, REDACTOR, key_loading=signing_key_loading()).signing_key()
