"""The `- Key: value` env dumps of the Hugging Face family: real pastes, each read into the probes' shapes.

Every expected value below was read off the file by hand: the tool's own version line, the torch line
(`(True)`/`(GPU)` is torch's CUDA availability), Python, the platform's kernel release, the GPU line, and
the package lines that carry a version (`not installed`/`N/A` do not count).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from driftcheck.reports.formats import detect
from driftcheck.reports.formats.hf_env import parse
from driftcheck.reports.importer import parse_text
from tests.conftest import DATA, CliResult

HF = DATA / "reports" / "hf"

# file: (variant, python, kernel release or None, torch version, cuda available, GPU names, GPU count, packages)
EXPECTED: dict[str, tuple[str, str, str | None, str | None, bool | None, list[str], int | None, dict[str, str]]] = {
    "transformers_4_17": ("transformers env", "3.9.8", "5.10.98-1-MANJARO", "1.10.2+cpu", False, [], None, {
        "transformers": "4.17.0.dev0", "torch": "1.10.2+cpu", "tensorflow": "2.8.0", "flax": "0.4.0", "jax": "0.3.1",
        "jaxlib": "0.3.0"}),
    "transformers_4_35": ("transformers env", "3.10.12", "5.15.120+", "2.1.0+cu118", False, [], None, {
        "transformers": "4.35.0", "huggingface-hub": "0.17.3", "safetensors": "0.4.0", "torch": "2.1.0+cu118",
        "tensorflow": "2.14.0", "flax": "0.7.4", "jax": "0.4.16", "jaxlib": "0.4.16"}),
    "transformers_4_38": ("transformers env", "3.10.12", "6.5.0-26-generic", "2.2.1+cu121", True, [], None, {
        "transformers": "4.38.2", "huggingface-hub": "0.21.4", "safetensors": "0.4.2", "accelerate": "0.28.0",
        "torch": "2.2.1+cu121", "flax": "0.8.2", "jax": "0.4.25", "jaxlib": "0.4.25"}),
    # The 2025 form: `(accelerator?)` answers CUDA, and the first GPU's name follows.
    "transformers_5_13": ("transformers env", "3.13.13", "6.8.0-1058-gcp", "2.12.1+cu130", True, ["Tesla T4"], None, {
        "transformers": "5.13.1", "huggingface-hub": "1.23.0", "safetensors": "0.8.0", "accelerate": "1.14.0",
        "torch": "2.12.1+cu130"}),
    "accelerate_0_17": ("accelerate env", "3.8.10", "5.4.0-48-generic", "1.13.0+cu117", True, [], None, {
        "accelerate": "0.17.1", "numpy": "1.22.4", "torch": "1.13.0+cu117"}),
    # The user wrote a note after the version on its line: the version is still the first token.
    "accelerate_0_34": ("accelerate env", "3.11.10", "6.8.0-52-generic", "2.3.0+cu121", True, ["NVIDIA RTX A6000"],
                        None, {"accelerate": "0.34.2", "numpy": "2.1.1", "torch": "2.3.0+cu121"}),
    "diffusers_0_4": ("diffusers-cli env", "3.9.13", "4.4.0-19041-Microsoft", "1.12.1+cu116", False, [], None, {
        "diffusers": "0.4.0.dev0", "torch": "1.12.1+cu116", "huggingface-hub": "0.10.0", "transformers": "4.22.2"}),
    # Windows: platform.platform() names no Linux kernel.
    "diffusers_0_17": ("diffusers-cli env", "3.9.13", None, "2.1.0.dev20230527+cu118", True, [], None, {
        "diffusers": "0.17.0.dev0", "torch": "2.1.0.dev20230527+cu118", "huggingface-hub": "0.14.1",
        "transformers": "4.29.2", "accelerate": "0.19.0"}),
    "diffusers_0_32": ("diffusers-cli env", "3.10.12", "6.1.85+", "2.5.1+cu121", True, ["NVIDIA A100-SXM4-40GB"], 1, {
        "diffusers": "0.32.1", "torch": "2.5.1+cu121", "flax": "0.10.2", "jax": "0.4.33", "jaxlib": "0.4.33",
        "huggingface-hub": "0.27.1", "transformers": "4.47.1", "accelerate": "1.2.1", "peft": "0.14.0",
        "safetensors": "0.5.0"}),
    # 2026: every quantization backend listed; `not installed` ones name no version.
    "diffusers_0_39": ("diffusers-cli env", "3.12.12", "5.15.0-1048-aws", "2.11.0+cu129", True,
                       ["NVIDIA H100 80GB HBM3"], 1, {
        "diffusers": "0.39.0.dev0", "torch": "2.11.0+cu129", "huggingface-hub": "1.11.0", "transformers": "5.6.0.dev0",
        "accelerate": "1.12.0", "peft": "0.18.2.dev0", "bitsandbytes": "0.49.0", "gguf": "0.19.0", "torchao": "0.17.0",
        "safetensors": "0.7.0"}),
    "hub_0_14": ("huggingface-cli env", "3.10.11", "6.2.10", None, None, [], None, {
        "huggingface-hub": "0.14.1", "jinja2": "3.1.2"}),
    "hub_0_34": ("huggingface-cli env", "3.13.4", "6.8.0-83-generic", "2.8.0", None, [], None, {
        "huggingface-hub": "0.34.4", "torch": "2.8.0", "jinja2": "3.1.6", "pillow": "11.3.0", "numpy": "2.2.6",
        "pydantic": "2.11.9", "aiohttp": "3.12.15", "hf-xet": "1.1.10"}),
    "llamafactory_0_9_2": ("llamafactory-cli env", "3.10.14", "5.10.134-008.7.kangaroo.al8.x86_64", "2.5.1+cu124", True,
                           ["NVIDIA A100-SXM4-80GB"], None, {
        "llamafactory": "0.9.2.dev0", "torch": "2.5.1+cu124", "transformers": "4.46.1", "datasets": "3.0.1",
        "accelerate": "1.0.1", "peft": "0.12.0", "trl": "0.9.6", "deepspeed": "0.16.1", "bitsandbytes": "0.45.0",
        "vllm": "0.6.6"}),
    # The user annotated torch's line (`_(actual env would use >=2.6.0)_`): that value is kept raw, no torch fact;
    # `GPU number` gives the count, `GPU type` the first GPU's name.
    "llamafactory_0_9_3": ("llamafactory-cli env", "3.11.10", "5.15.0-1079-nvidia", None, None,
                           ["NVIDIA H100 80GB HBM3"], 8, {
        "llamafactory": "0.9.3.dev0", "transformers": "4.48.2", "datasets": "3.1.0", "accelerate": "1.0.1",
        "peft": "0.15.2", "trl": "0.9.6", "deepspeed": "0.14.4", "bitsandbytes": "0.44.1", "vllm": "0.6.6.post1"}),
    # No `(GPU)` after torch's version and no GPU line: availability is not asserted from an absence.
    "llamafactory_0_9_4": ("llamafactory-cli env", "3.11.11", "6.8.0-65-generic", "2.7.1+cu126", None, [], None, {
        "llamafactory": "0.9.4.dev0", "torch": "2.7.1+cu126", "transformers": "4.55.0", "datasets": "3.1.0",
        "accelerate": "1.7.0", "peft": "0.15.1", "trl": "0.9.6", "deepspeed": "0.16.4", "vllm": "0.10.0"}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_dump_reads_its_key_facts(name: str) -> None:
    variant, python, kernel, torch, available, gpus, count, packages = EXPECTED[name]
    text = (HF / f"{name}.txt").read_text("utf-8")
    found = detect(text)
    assert found is not None and found.name == "hf-env"
    parsed = parse(text)
    probes = parsed.probes
    assert parsed.variant == variant
    assert probes["python"]["version"] == python
    assert (probes.get("system") or {}).get("kernel", {}).get("release") == kernel
    assert (probes.get("torch") or {}).get("version") == torch
    assert (probes.get("torch") or {}).get("cuda_available") == available
    gpu: dict[str, Any] = probes.get("gpu") or {}
    assert [g["name"] for g in (gpu.get("gpus") or {}).values()] == gpus
    assert gpu.get("gpu_count") == count
    listed = probes["packages"]["packages"]
    assert {key: entry["version"] for key, entry in listed.items()} == packages
    # Every line of the dump was read or set aside as markup; nothing left over but what no tool printed.
    assert parsed.unclaimed == UNCLAIMED.get(name, [])


# Lines no tool of the family printed, kept verbatim.
UNCLAIMED = {
    "transformers_4_38": ["  An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. "
                          "Falling back to CPU."],
    "llamafactory_0_9_3": ["Bear in mind that this output is *not* produced directly because installation fails."],
}


def test_settings_and_answers_stay_raw_fields_and_absent_packages_are_named() -> None:
    parsed = parse((HF / "transformers_4_35.txt").read_text("utf-8"))
    assert parsed.fields["Accelerate config"] == "not found"
    assert parsed.fields["Using GPU in script?"] == "no"
    assert parsed.fields["not installed"] == "accelerate"
    hub = parse((HF / "hub_0_34.txt").read_text("utf-8"))
    # huggingface_hub's constants are its resolved settings, not environment variables the user set.
    assert "env" not in hub.probes and hub.fields["HF_HUB_CACHE"] == "/tmp/hf-cache"


def test_an_annotated_value_is_kept_raw_and_named_unread() -> None:
    parsed = parse((HF / "llamafactory_0_9_3.txt").read_text("utf-8"))
    assert parsed.fields["PyTorch version"] == "2.5.1+cu124 (GPU) _(actual env would use >=2.6.0)_"
    assert parsed.fields["unread values"] == "PyTorch version" and "torch" not in parsed.probes["packages"]["packages"]
    assert parsed.complete == []  # 8 GPUs, one named: the list is not whole


def test_accelerate_default_config_is_kept_key_by_key() -> None:
    parsed = parse((HF / "accelerate_0_17.txt").read_text("utf-8"))
    assert parsed.fields["accelerate config: distributed_type"] == "NO"
    assert parsed.fields["accelerate config: num_processes"] == "1"
    assert parsed.fields["accelerate config: dynamo_config"] == "{}"
    assert parse((HF / "accelerate_0_34.txt").read_text("utf-8")).fields["accelerate config"] == "Not found"


def test_one_gpu_type_names_the_first_gpu_but_not_how_many_and_a_full_list_is_complete() -> None:
    one = parse((HF / "accelerate_0_34.txt").read_text("utf-8"))
    assert "gpu_count" not in one.probes["gpu"] and one.complete == []
    listed = parse((HF / "diffusers_0_32.txt").read_text("utf-8"))
    assert listed.probes["gpu"]["gpus"]["GPU0"]["memory"] == {"total_mib": 40960}
    assert listed.complete == ["probes.gpu.data.gpus"]


def test_a_value_of_the_wrong_shape_is_kept_as_text_never_read_as_a_fact() -> None:
    text = (HF / "llamafactory_0_9_2.txt").read_text("utf-8").replace("- Python version: 3.10.14",
                                                                     "- Python version: (see above)")
    parsed = parse(text)
    assert "python" not in parsed.probes
    assert parsed.fields["Python version"] == "(see above)" and parsed.fields["unread values"] == "Python version"


def test_a_first_line_without_a_version_is_refused() -> None:
    text = "- `transformers` version: <fill in>\n- Platform: Linux\n- Python version: 3.10.12\n"
    with pytest.raises(ValueError, match="no version"):
        parse(text)


def test_the_dump_of_another_tool_is_not_claimed() -> None:
    assert detect("- OS: Ubuntu\n- Python: 3.10\n- Transformers: 4.40\n") is None


def test_importer_names_the_tool_and_keeps_the_fields() -> None:
    imported = parse_text((HF / "llamafactory_0_9_4.txt").read_text("utf-8"), "llamafactory_0_9_4.txt")
    assert imported.format.name == "hf-env" and imported.parsed.variant == "llamafactory-cli env"
    assert imported.parsed.fields["Git commit"] == "259eb977facbebfa158e62850ec089526237a249"


def test_two_dumps_of_different_tools_diff_by_version(cli: Callable[..., CliResult]) -> None:
    done = cli("diff", str(HF / "transformers_4_38.txt"), str(HF / "diffusers_0_32.txt"), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    changed = {c["path"]: (c["before"], c["after"]) for c in report["changes"] if c["kind"] == "changed"}
    assert changed["probes.packages.data.packages.transformers.version"] == ("4.38.2", "4.47.1")
    assert changed["probes.torch.data.version"] == ("2.2.1+cu121", "2.5.1+cu121")
    assert changed["probes.python.data.platform.release"] == ("6.5.0-26-generic", "6.1.85+")


def test_a_transformers_dump_and_a_collect_env_diff_by_version_and_say_what_was_not_compared(
        cli: Callable[..., CliResult]) -> None:
    done = cli("diff", str(HF / "transformers_5_13.txt"), str(DATA / "reports" / "torch_26.txt"), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    changed = {c["path"]: (c["before"], c["after"]) for c in report["changes"] if c["kind"] == "changed"}
    assert changed["probes.torch.data.version"] == ("2.12.1+cu130", "2.7.0+cu128")
    assert changed["probes.gpu.data.gpus.GPU0.name"] == ("Tesla T4", "NVIDIA A100-SXM4-40GB")
    # What only the collect_env holds (its CPU, OS, driver...) is listed as not compared, not as a change.
    assert report["not_compared"]["only_in_b"] > 0
    text = cli("diff", str(HF / "transformers_5_13.txt"), str(DATA / "reports" / "torch_26.txt")).stdout
    assert "not in the report, not compared" in text and "2.12.1+cu130 -> 2.7.0+cu128" in text


def test_show_of_a_dump_that_names_no_gpu_count_never_says_it_sees_zero(cli: Callable[..., CliResult]) -> None:
    text = cli("show", str(HF / "transformers_4_38.txt")).stdout
    torch = next(line for line in text.splitlines() if line.strip().startswith("torch "))
    assert "2.2.1+cu121" in torch and "CUDA available" in torch and "sees 0" not in torch
