"""The facts scripts' cache: dist_facts's RECORD parses and facts_batch's compiled code, each reused only for what
it was made from (a RECORD as it was parsed, the same source), never changing an answer.

Each test runs the scripts as a snapshot does, in a real interpreter (`python -S -c SOURCE ...`), over files
written here, with the cache directory named the way hosts/local.py names it.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

from driftcheck.hosts import LocalHost, ScriptCall
from driftcheck.hosts.local import FACTS_CACHE_VARIABLE

SCRIPTS = resources.files("driftcheck.probes.scripts")
SOURCE = SCRIPTS.joinpath("dist_facts.py").read_text("utf-8")
BATCH = SCRIPTS.joinpath("facts_batch.py").read_text("utf-8")


def _distribution(site: Path, name: str, record: str) -> Path:
    meta = site / f"{name}-1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n")
    (meta / "RECORD").write_text(record)
    return meta


def _answer(site: Path, cache: Path | None, mode: str = "packages") -> dict[str, object]:
    """dist_facts's answer for the distributions in `site` (and none other: no site-packages)."""
    env = {key: value for key, value in os.environ.items() if key != FACTS_CACHE_VARIABLE}
    env["PYTHONPATH"] = str(site)
    if cache is not None:
        env[FACTS_CACHE_VARIABLE] = str(cache)
    done = subprocess.run([sys.executable, "-S", "-c", SOURCE, mode], capture_output=True, env=env, cwd="/",
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


def _compiled(answer: dict[str, object]) -> dict[str, object]:
    return {dist["name"]: dist["compiled"] for dist in answer["distributions"]}  # type: ignore[attr-defined, index]


def _kept(cache: Path) -> dict[str, list[object]]:
    (only,) = cache.glob("records-*.json")
    records = json.loads(only.read_text())["records"]
    assert isinstance(records, dict)
    return records


def _site(tmp_path: Path) -> tuple[Path, Path]:
    site = tmp_path / "site"
    _distribution(site, "alpha", "alpha/_c.so,sha256=a,1\nalpha/__init__.py,,\n")
    beta = _distribution(site, "beta", "beta/lib/libb.so.1,sha256=b,2\n")
    return site, beta


def test_a_kept_parse_answers_as_a_fresh_read_and_is_what_the_next_run_uses(tmp_path: Path) -> None:
    site, beta = _site(tmp_path)
    cache = tmp_path / "cache" / "facts"
    fresh = _answer(site, None)
    assert _answer(site, cache) == fresh  # the run that writes the cache
    assert set(_kept(cache)) == {str(site / "alpha-1.0.dist-info" / "RECORD"), str(beta / "RECORD")}
    assert _answer(site, cache) == fresh  # the run that reads it
    assert _answer(site, cache, "files") == _answer(site, None, "files")
    # What the next run answers comes from the kept parse: one altered in the file (its identity left) shows.
    kept_file = next(cache.glob("records-*.json"))
    doc = json.loads(kept_file.read_text())
    doc["records"][str(beta / "RECORD")][1] = [["beta/altered.so", None, None]]
    kept_file.write_text(json.dumps(doc))
    assert _compiled(_answer(site, cache))["beta"] == [["beta/altered.so", None, None]]


def test_a_record_rewritten_is_read_again_even_at_its_old_size_and_mtime(tmp_path: Path) -> None:
    site, beta = _site(tmp_path)
    cache = tmp_path / "records"
    _answer(site, cache)
    record = beta / "RECORD"
    before = record.stat()
    record.write_text("beta/lib/libz.so.1,sha256=z,2\n")  # the same size
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))  # and its old mtime: only its ctime tells
    assert record.stat().st_size == before.st_size
    assert _compiled(_answer(site, cache))["beta"] == [["beta/lib/libz.so.1", "sha256=z", 2]]
    assert _kept(cache)[str(record)][1] == [["beta/lib/libz.so.1", "sha256=z", 2]]


def test_a_distribution_gone_leaves_the_cache_and_a_damaged_cache_is_a_miss(tmp_path: Path) -> None:
    site, beta = _site(tmp_path)
    cache = tmp_path / "records"
    _answer(site, cache)
    (beta / "RECORD").unlink()
    (beta / "METADATA").unlink()
    beta.rmdir()
    fresh = _answer(site, None)
    assert _answer(site, cache) == fresh
    assert set(_kept(cache)) == {str(site / "alpha-1.0.dist-info" / "RECORD")}
    for damaged in ("not json", '{"records": []}', '{"records": {"%s": [[1, 2], "rows"]}}' % (
            site / "alpha-1.0.dist-info" / "RECORD")):
        next(cache.glob("records-*.json")).write_text(damaged)
        assert _answer(site, cache) == fresh
    assert _kept(cache)[str(site / "alpha-1.0.dist-info" / "RECORD")][1] == [["alpha/_c.so", "sha256=a", 1]]


def test_a_cache_that_cannot_be_written_costs_nothing_but_time(tmp_path: Path) -> None:
    site, _beta = _site(tmp_path)
    blocked = tmp_path / "a file"
    blocked.write_text("")
    assert _answer(site, blocked / "records") == _answer(site, None)


def test_this_machine_keeps_its_parses_and_code_in_the_cache_directory(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DRIFTCHECK_HOME", str(tmp_path))
    answer = LocalHost(sys.executable).python("dist_facts", ["packages"])
    assert isinstance(answer, dict) and answer["distributions"]
    kept = _kept(tmp_path / "cache" / "facts")
    assert kept and all(path.endswith("/RECORD") for path in kept)
    assert LocalHost(sys.executable).python_batch([ScriptCall("python_facts")])
    assert list((tmp_path / "cache" / "facts").glob("code-python_facts-*.bin"))


def _batch(source: str, cache: Path | None) -> list[object]:
    """What a facts_batch run answers for one part of a script `source`."""
    env = {key: value for key, value in os.environ.items() if key != FACTS_CACHE_VARIABLE}
    if cache is not None:
        env[FACTS_CACHE_VARIABLE] = str(cache)
    done = subprocess.run([sys.executable, "-S", "-c", BATCH, "--script", "greet", source, "--part", "greet", "1",
                           "there"], capture_output=True, env=env, cwd="/", timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    parts = json.loads(done.stdout)["parts"]
    assert isinstance(parts, list)
    return parts


GREET = "import sys\ndef main(argv):\n    sys.stdout.write('hello ' + argv[0])\n"


def test_a_kept_code_serves_only_its_own_source(tmp_path: Path) -> None:
    cache = tmp_path / "facts"
    fresh = _batch(GREET, None)
    assert fresh[0] == {"returncode": 0, "stdout": "hello there", "stderr": ""}  # type: ignore[index]
    assert _batch(GREET, cache) == fresh  # the run that keeps the code
    (kept,) = cache.glob("code-greet-*.bin")
    assert _batch(GREET, cache) == fresh  # the run that loads it
    # The next run executes the kept code: one replaced in the file (its source left) shows.
    other = compile("import sys\ndef main(argv):\n    sys.stdout.write('kept ' + argv[0])\n", "<greet>", "exec")
    version, source, _code = marshal.loads(kept.read_bytes())
    kept.write_bytes(marshal.dumps((version, source, other)))
    assert _batch(GREET, cache)[0]["stdout"] == "kept there"  # type: ignore[index]
    # Another source never gets it, even under the same file name; a damaged file is compiled anew.
    kept.write_bytes(marshal.dumps((version, GREET + "# changed\n", other)))
    assert _batch(GREET, cache) == fresh
    kept.write_bytes(b"not marshal data")
    assert _batch(GREET, cache) == fresh
    assert marshal.loads(kept.read_bytes())[1] == GREET
    # Another source of the script (a newer driftcheck's) is kept in its place.
    assert _batch(GREET + "# newer\n", cache) == fresh
    (newer,) = cache.glob("code-greet-*.bin")
    assert newer != kept and marshal.loads(newer.read_bytes())[1] == GREET + "# newer\n"


def test_a_code_cache_that_cannot_be_written_costs_nothing_but_time(tmp_path: Path) -> None:
    blocked = tmp_path / "a file"
    blocked.write_text("")
    assert _batch(GREET, blocked / "facts") == _batch(GREET, None)
