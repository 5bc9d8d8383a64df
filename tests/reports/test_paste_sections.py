"""One paste, several tools: an issue body cut into sections, each read by its format, merged into one snapshot.

`body/hf_two_tools_7403.txt` is a real pull-request description holding `transformers-cli env` and
`huggingface-cli env` in two `<details>` blocks (line numbers below read off the file). The merge of
reports from separate files uses real pastes too: the VM's collect_env with its own venv's `pip list`
(one machine, no conflict), and two Hugging Face dumps of two machines (conflicts kept and named).
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from driftcheck.errors import UsageError
from driftcheck.reports import formats
from driftcheck.reports.importer import import_texts, parse_paste
from driftcheck.reports.paste import split_sections
from tests.conftest import DATA, CliResult

REPORTS = DATA / "reports"
BODY = REPORTS / "body" / "hf_two_tools_7403.txt"


def _texts(*paths: Path) -> list[tuple[str, str, str]]:
    return [(str(path), path.name, path.read_text("utf-8")) for path in paths]


def test_an_issue_body_is_cut_at_details_fences_and_banners() -> None:
    sections = split_sections(BODY.read_text("utf-8"), formats.starts)
    assert [s.lines for s in sections] == ["lines 1-2", "lines 8-8", "lines 10-25", "lines 33-41"]
    found = [fmt.name if (fmt := formats.detect(s.text)) else None for s in sections]
    assert found == [None, None, "hf-env", "hf-env"]


def test_each_section_is_read_by_its_format_and_the_rest_kept_as_text() -> None:
    files, unread = parse_paste(BODY.read_text("utf-8"), "body.txt")
    assert [(f.name, f.parsed.variant) for f in files] == [("body.txt lines 10-25", "transformers env"),
                                                          ("body.txt lines 33-41", "huggingface-cli env")]
    # The prose above the dumps and jax's warning inside the first block: read by nothing, counted, kept.
    assert [(u.name, u.reason) for u in unread] == [("body.txt lines 1-2", "no format claims it"),
                                                    ("body.txt lines 8-8", "no format claims it")]
    assert unread[1].text.strip().startswith("An NVIDIA GPU may be present on this machine")


def test_the_sections_merge_into_one_snapshot_that_names_each_reader() -> None:
    document = import_texts(_texts(BODY)).document
    host = document["host"]
    assert [(s["file"], s["variant"]) for s in host["sources"]] == [
        ("hf_two_tools_7403.txt lines 10-25", "transformers env"),
        ("hf_two_tools_7403.txt lines 33-41", "huggingface-cli env")]
    packages = document["probes"]["packages"]["data"]["packages"]
    assert packages["transformers"]["version"] == "4.38.2" and packages["huggingface-hub"]["version"] == "0.21.4"
    assert document["probes"]["torch"]["data"]["version"] == "2.2.1+cu121"
    assert document["probes"]["python"]["data"]["version"] == "3.10.12"
    # Both dumps say the same Python, platform and hub version: nothing conflicts.
    assert "conflicts" not in host and len(host["unread_sections"]) == 2
    assert host["report"]["fields"]["Token path ?"] == "/home/user_n"


def test_a_report_and_the_package_list_of_its_machine_merge_and_the_whole_list_wins() -> None:
    collect_env, pip_list = REPORTS / "own" / "collect_env_vm.txt", REPORTS / "pip" / "list_ml_venv.txt"
    document = import_texts(_texts(collect_env, pip_list)).document
    host = document["host"]
    assert "conflicts" not in host
    assert host["sources"][1]["complete"] == ["probes.packages.data.packages"]
    assert host["complete"] == ["probes.packages.data.packages"]
    packages = document["probes"]["packages"]["data"]["packages"]
    assert len(packages) == 75 and packages["torch"]["version"] == "2.13.0+cpu"
    # collect_env's own facts stay: the VM's CPU and Python.
    assert document["probes"]["python"]["data"]["version"] == "3.11.7"


def test_two_sources_that_disagree_keep_the_first_and_show_the_other() -> None:
    hf = REPORTS / "hf"
    host = import_texts(_texts(hf / "transformers_4_38.txt", hf / "hub_0_14.txt")).document["host"]
    conflicts = {c["path"]: (c["kept"], c["kept_from"], c["other"], c["other_from"]) for c in host["conflicts"]}
    assert conflicts["probes.python.data.version"] == ("3.10.12", "transformers_4_38.txt", "3.10.11", "hub_0_14.txt")
    assert conflicts["probes.packages.data.packages.huggingface-hub.version"] == (
        "0.21.4", "transformers_4_38.txt", "0.14.1", "hub_0_14.txt")
    assert conflicts["probes.system.data.kernel.release"][::2] == ("6.5.0-26-generic", "6.2.10")


def test_two_reports_of_one_tool_are_refused() -> None:
    torch = REPORTS / "torch_03.txt"
    with pytest.raises(UsageError, match="a second python -m torch.utils.collect_env report"):
        import_texts(_texts(torch, REPORTS / "torch_04.txt"))


def test_import_reads_standard_input_and_says_what_read_each_section(
        cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BODY.read_bytes())))
    out = tmp_path / "body.json"
    done = cli("import", "-", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "stdin lines 10-25 (transformers / accelerate" in done.stderr
    assert "not read: stdin lines 1-2 (no format claims it), kept as text" in done.stderr
    assert json.loads(out.read_text("utf-8"))["host"]["sources"][1]["file"] == "stdin lines 33-41"


def test_a_refused_file_says_in_one_line_what_was_tried_and_what_it_looked_like(
        cli: Callable[..., CliResult], tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The model got slower after the upgrade.\nNo idea why.\n", "utf-8")
    done = cli("show", str(notes))
    assert done.returncode != 0 and done.stderr.count("\n") == 1
    assert "conda list" in done.stderr and "pip freeze / pip list" in done.stderr
    assert "2 line(s), the first 'The model got slower after the upgrade.'" in done.stderr


def test_in_one_body_gpu_counts_that_disagree_are_a_conflict_not_a_refusal() -> None:
    """Two real pastes of two machines put in one body (a mechanism test, not a sample): an 8-GPU collect_env
    and a whole 1-GPU nvidia-smi table. As separate files they are refused; as one body the table's count is kept."""
    report, table = (REPORTS / "torch_03.txt").read_text("utf-8"), (REPORTS / "smi_01.txt").read_text("utf-8")
    body = f"```\n{report}\n```\n\n```\n{table}\n```\n"
    host = import_texts([("body", "body", body)]).document["host"]
    gpu_count = next(c for c in host["conflicts"] if c["path"] == "probes.gpu.data.gpu_count")
    assert (gpu_count["kept"], gpu_count["other"]) == (1, 8)
    assert [s["format"] for s in host["sources"]] == ["python -m torch.utils.collect_env", "nvidia-smi"]
    with pytest.raises(UsageError, match="describes 1 GPUs, the report lists 8"):
        import_texts(_texts(REPORTS / "torch_03.txt", REPORTS / "smi_01.txt"))


def test_in_one_body_a_matrix_of_another_gpu_count_is_a_conflict_and_not_merged() -> None:
    """Two real pastes of two machines in one body (a mechanism test): check_env with an 8-GPU matrix and a 1-GPU
    nvidia-smi table. As separate files they are refused; as one body the table's GPUs are kept, the matrix is
    not merged into them, and the disagreement is shown."""
    report, table = (REPORTS / "sglang_08.txt").read_text("utf-8"), (REPORTS / "smi_01.txt").read_text("utf-8")
    body = f"```\n{report}\n```\n\n```\n{table}\n```\n"
    document = import_texts([("body", "body", body)]).document
    conflict = next(c for c in document["host"]["conflicts"] if c["path"] == "probes.pcie.data.topology")
    assert conflict["other"] == "a matrix of 8 GPUs" and conflict["kept"] is None
    assert document["probes"]["pcie"]["data"].get("topology") is None
    assert len(document["probes"]["gpu"]["data"]["gpus"]) == 1
    with pytest.raises(UsageError, match="import files of one machine together"):
        import_texts(_texts(REPORTS / "sglang_08.txt", REPORTS / "smi_01.txt"))


def test_one_output_deep_in_a_long_body_is_still_found() -> None:
    """A conda list (real) below 25 lines of prose: the whole text is no conda list, its section is."""
    prose = "".join(f"Step {n}: I tried again and it still fails.\n" for n in range(25))
    body = prose + (REPORTS / "conda" / "list_windows_2025.txt").read_text("utf-8")
    assert formats.detect(body) is None
    document = import_texts([("body", "body", body)]).document
    assert [s["format"] for s in document["host"]["sources"]] == ["conda list"]
    assert len(document["probes"]["packages"]["data"]["conda"]) == 12
    assert document["host"]["unread_sections"][0]["section"] == "body lines 1-25"


def test_a_secret_in_a_label_or_in_text_nothing_read_never_enters_the_snapshot() -> None:
    from driftcheck.reports.importer import UNREAD_KEPT_CHARS, import_texts

    smi = (DATA / "reports" / "smi_02.txt").read_text("utf-8")
    pip = (DATA / "reports" / "pip" / "list_small.txt").read_text("utf-8")
    secrets = ("hf_" + "a" * 30, "sk-" + "b" * 30, "tok-SECRET-123", "pw-SECRET-456")
    prose = f"I set HF_TOKEN={secrets[0]} and ran python serve.py --api-key {secrets[1]}\n"
    # One pasted report with prose around it (kept as unclaimed lines), and a body of two outputs with a
    # block nothing claims (kept as an unread section).
    one = import_texts([("a.txt", "a.txt", prose + smi)], label=f"repro --token {secrets[2]}")
    unknown = "```\n" + f"DATABASE_URL=postgres://u:{secrets[3]}@db/x\n" + "log line\n" * 900 + "```\n"
    two = import_texts([("b.txt", "b.txt", unknown + "```\n" + smi + "\n```\n```\n" + pip + "\n```\n")])
    assert two.document["host"]["unread_sections"]
    for snapshot in (one, two):
        text = json.dumps(snapshot.document)
        assert not [s for s in secrets if s in text]
    for section in two.document["host"].get("unread_sections", []):
        assert len(section["text"]) <= UNREAD_KEPT_CHARS + 60
