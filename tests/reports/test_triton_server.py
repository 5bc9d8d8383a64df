"""Triton's option table: the server's version and settings. Values read off the files by hand; every paste here
ends inside its table.
"""

from __future__ import annotations

import pytest

from driftcheck.reports.formats import detect, triton_server
from tests.conftest import DATA

TRITON = DATA / "reports" / "triton"

# version, settings read whole (the row the paste ends inside is never one), the cut row kept raw.
TRITON_EXPECTED = {
    "options_2_19_cut.txt": ("2.19.0", {"model_repository_path[0]": "/models"}, ("model_control_mode", "MODE_NONE")),
    "options_2_21_header_cut.txt": ("2.21.0", None, ("server_extensions", "classification sequence model_repository "
                                    "model_repository(unload_dependents) schedule_policy model_configuration "
                                    "system_shared_memory cuda_shared_memory binary_tensor_data")),
    "options_2_24_log_prefix.txt": ("2.24.0", None, ("server_extensions", "classification")),
    "options_2_24_readme.txt": ("2.24.0", {"model_repository_path[0]": "/models", "model_control_mode": "MODE_NONE",
                                           "strict_model_config": "0"}, None),
}


@pytest.mark.parametrize("name", sorted(TRITON_EXPECTED))
def test_triton_tables_give_the_version_and_the_whole_rows(name: str) -> None:
    text = (TRITON / name).read_text("utf-8")
    assert (found := detect(text)) is not None and found.name == "triton-server"
    parsed = triton_server.parse(text)
    version, args, cut_row = TRITON_EXPECTED[name]
    server = parsed.probes["server"]
    assert server["engine"] == "triton" and server["version"] == version
    assert server.get("server_args") == args
    assert parsed.fields["server_id"] == "triton"
    if cut_row:
        assert parsed.fields[f"{cut_row[0]} (cut)"] == cut_row[1]
    assert parsed.cut == [triton_server.SERVER_ARGS]  # no closing rule: more options may follow


def test_glog_lines_before_the_table_are_noise() -> None:
    parsed = triton_server.parse((TRITON / "options_2_24_log_prefix.txt").read_text("utf-8"))
    assert parsed.noise == ["I1104 07:09:32.737486 15 metrics.cc:650] Collecting metrics for GPU 0: NVIDIA A10",
                            "I1104 07:09:32.738248 15 tritonserver.cc:2176]"]
