"""A `pip list | grep` quoted in an e-mail reply (ROCm/ROCm#2746): the `> ` quotes, the reply's header wrapped
after a sender GitHub masked as `***@***.***`, the masked prompt `***@***.***:~$`, and GitHub's footer. Values
read off the file by hand.
"""

from __future__ import annotations

from driftcheck.reports.importer import import_texts, parse_paste
from tests.conftest import DATA

REPLY = DATA / "reports" / "email" / "pip_grep_masked_prompt_reply.txt"


def test_a_grepped_pip_list_in_a_quoted_reply_gives_its_rows_and_never_claims_the_list_whole() -> None:
    files, unread = parse_paste(REPLY.read_text("utf-8"), REPLY.name)
    assert unread == [] and [f.format.name for f in files] == ["pip-packages"]
    parsed = files[0].parsed
    assert parsed.variant == "pip list | grep"
    assert {k: v["version"] for k, v in parsed.probes["packages"]["packages"].items()} == {
        "pytorch-triton-rocm": "2.2.0+dafe145982", "torch": "2.3.0.dev20240123+rocm5.7",
        "torchaudio": "2.2.0.dev20240123+rocm5.7", "torchvision": "0.18.0.dev20240123+rocm5.7"}
    # grep kept four rows of a longer list: no package is "not installed" because it is missing here.
    assert parsed.complete == []


def test_the_masked_prompt_and_the_mail_header_and_footer_are_noise_not_text() -> None:
    parsed = parse_paste(REPLY.read_text("utf-8"), REPLY.name)[0][0].parsed
    assert "***@***.***:~$ pip list|grep -i torch" in parsed.noise
    assert {"wrote:", "—", "Reply to this email directly, view it on GitHub", "unsubscribe"} <= set(parsed.noise)
    # The user's own words stay, verbatim and counted.
    assert "I'm unable to upgrade torch, torchaudio and torchvision" in parsed.unclaimed
    assert not [line for line in parsed.unclaimed if "***" in line]


def test_imported_the_rows_are_the_packages_probe() -> None:
    document = import_texts([(str(REPLY), REPLY.name, REPLY.read_text("utf-8"))]).document
    assert document["probes"]["packages"]["data"]["packages"]["torch"]["version"] == "2.3.0.dev20240123+rocm5.7"
    assert "complete" not in document["host"]
