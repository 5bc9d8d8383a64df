"""Reading the `collect_env` family: PyTorch's `python -m torch.utils.collect_env` and vLLM's fork of it.

Every generation prints `Key: value` lines (vLLM's 2025 form pads them, `Key   : value`, and groups
them under `=====` section banners), some keys followed by a block: the GPU list, cuDNN's candidate
libraries, the lscpu output after `CPU:`, the `[pip3]`/`[conda]` lists after "Versions of relevant
libraries", the `nvidia-smi topo -m` matrix after `GPU Topology:`, and `NAME=value` environment lines.
The scanner reads them all by shape, not by position, so an unknown key becomes a raw field and an
unknown line stays unclaimed; neither stops the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from driftcheck.reports import facts
from driftcheck.reports.formats import lscpu_locale
from driftcheck.reports.formats.base import Parsed
from driftcheck.reports.paste import Paste
from driftcheck.snapshot.jsontypes import JSONObject

# Keys that start a new line even when a terminal fused them onto the previous one.
ANCHORS = ("PyTorch version:", "Is debug build:", "Collecting environment information...")
_KEY_VALUE = re.compile(r"^([A-Za-z][A-Za-z0-9 _()./#+,'-]{0,60}?)\s*:(?:\s+(.*)|)$")
_SECTION_RULE = re.compile(r"^\s*={5,}\s*$")
_LIST_ROW = re.compile(r"^\s*\[(pip\d?|conda)\]\s+(.*)$")
_ENV_ROW = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")
_GPU_ROW = re.compile(r"^\s*GPU (\d+): (.+)$")
# A MIG device nvidia-smi -L lists under its GPU (`MIG 3g.40gb Device 0:`): part of the GPU list, no GPU itself.
_MIG_ROW = re.compile(r"^\s*MIG \S+\s+Device\s+\d+:.*$")
# The start of a GPU row a paste cut off (`GPU`, `GPU 3: NVI`): the list went on past the paste's end.
_GPU_ROW_START = re.compile(r"^\s*G(P(U( \d*(:.*)?)?)?)?\s*$")
_LEVEL = r"(X|SYS|NODE|PHB|PXB|PIX|PSB|SOC|NV\d+|NVB|N/A|CNS|C2C)"
_TOPO_ROW = re.compile(rf"^\S+\s+{_LEVEL}(\s|$)")
# A matrix header whose leading whitespace the paste lost.
_TOPO_HEADER = re.compile(r"^(?:(?:\x1b|\ufffd)\[[0-9;]*m)?GPU0\s+(GPU1|NIC0|CPU Affinity|mlx\S+)(\s|$)")
_TOPOLOGY_KEYS = ("GPU Topology", "GPU topology", "NVIDIA Topology", "AMD Topology", "MTHREADS Topology")
_CPU_KEYS = ("CPU", "CPU Info")


@dataclass
class Scan:
    """What the scanner read, by kind; `fields` holds every `Key: value` (first value line)."""

    paste: Paste
    fields: dict[str, str] = field(default_factory=dict)
    blocks: dict[str, list[str]] = field(default_factory=dict)
    pip: list[tuple[str, str]] = field(default_factory=list)
    conda: list[dict[str, str | None]] | None = None
    lscpu: dict[str, str] = field(default_factory=dict)
    numa_cpus: dict[str, str] = field(default_factory=dict)
    topology: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)
    cpu_block: bool = False
    # The GPU list ran to the end of the paste: it may have been cut there, so its length is no GPU count.
    gpu_list_cut: bool = False


def scan(text: str) -> Scan:
    """Scan a collect_env-style text into its fields, blocks, lists, lscpu, topology and environment."""
    paste = Paste.of(text, ANCHORS)
    result = Scan(paste)
    lines = paste.lines
    i = 0
    while i < len(lines):
        if i in paste.claimed or not lines[i].strip():
            i += 1
            continue
        i = _read_line(result, i)
    return result


def _read_line(result: Scan, i: int) -> int:
    """Read the item starting at line i; returns the index of the next unread line."""
    paste, line = result.paste, result.paste.lines[i]
    if _SECTION_RULE.match(line):
        return _read_section_banner(result, i)
    row = _LIST_ROW.match(line)
    if row:
        _read_list_row(result, row.group(1), row.group(2).strip())
        paste.claim(i)
        return i + 1
    env = _ENV_ROW.match(line)
    if env:
        result.env[env.group(1)] = env.group(2)
        paste.claim(i)
        return i + 1
    kv = _KEY_VALUE.match(line)
    if not kv:
        return i + 1
    key, value = kv.group(1).strip(), (kv.group(2) or "").strip()
    paste.claim(i)
    if key.endswith("Legend") and key != "Legend":
        return i + 1
    if key in _TOPOLOGY_KEYS or (result.sections and result.sections[-1] == "topology" and key == "Topology"):
        return _read_topology(result, key, value, i + 1)
    if key in _CPU_KEYS and not value:
        result.cpu_block = True
        return _read_lscpu(result, i + 1)
    if key == "Versions of relevant libraries":
        return i + 1
    result.fields.setdefault(key, value)
    return _read_continuation(result, key, value, i + 1)


def _read_section_banner(result: Scan, i: int) -> int:
    """`=====` / title / `=====`: a section of vLLM's 2025 form; the CPU section holds lscpu."""
    paste, lines = result.paste, result.paste.lines
    paste.claim(i)
    if i + 2 < len(lines) and _SECTION_RULE.match(lines[i + 2]) and lines[i + 1].strip():
        title = lines[i + 1].strip()
        paste.claim(i + 1, i + 2)
        result.sections.append(title)
        if title == "CPU Info":
            result.cpu_block = True
            return _read_lscpu(result, i + 3)
        return i + 3
    return i + 1


def _read_list_row(result: Scan, kind: str, body: str) -> None:
    if facts.known(body) is None:  # `Could not collect`: the list stays unknown, not empty
        return
    if kind == "conda":
        parts = body.split()
        row = {"name": parts[0], "version": parts[1] if len(parts) > 1 else None,
               "build": parts[2] if len(parts) > 2 else None, "channel": parts[3] if len(parts) > 3 else None}
        result.conda = [*(result.conda or []), row]
        return
    name, sep, version = body.partition("==")
    if not sep:
        parts = body.replace("(", " ").replace(")", " ").split()
        name, version = parts[0], parts[1] if len(parts) > 1 else ""
    result.pip.append((name.strip(), version.strip()))


def _read_continuation(result: Scan, key: str, value: str, i: int) -> int:
    """Lines that continue a key's value: the GPU list, cuDNN's candidates, the line after a bare key."""
    paste, lines = result.paste, result.paste.lines
    block: list[str] = []
    if key.startswith("GPU models"):
        while i < len(lines) and (_GPU_ROW.match(lines[i]) or (block and _MIG_ROW.match(lines[i]))):
            block.append(lines[i].strip())
            paste.claim(i)
            i += 1
        migs = [row for row in block if _MIG_ROW.match(row)]
        if migs:
            result.fields["MIG devices"] = "\n".join(migs)
        rest = [line for line in lines[i:] if line.strip()]
        result.gpu_list_cut = bool(block) and (not rest or (len(rest) == 1 and bool(_GPU_ROW_START.match(rest[0]))))
    elif value.lower().startswith("probably one of") or (key.startswith("cuDNN") and not value):
        while i < len(lines) and lines[i].strip() and (lines[i].lstrip().startswith(("/", "\\")) or
                                                      re.match(r"^[A-Za-z]:\\", lines[i].strip())):
            block.append(lines[i].strip())
            paste.claim(i)
            i += 1
    elif not value and i < len(lines) and lines[i].startswith((" ", "\t")) and lines[i].strip():
        # `vLLM Build Flags:` and similar: the value sits, indented, on the next line.
        block.append(lines[i].strip())
        result.fields[key] = lines[i].strip()
        paste.claim(i)
        i += 1
    elif not value and i < len(lines) and key == "vLLM Build Flags" and lines[i].strip():
        result.fields[key] = lines[i].strip()
        paste.claim(i)
        i += 1
    if block:
        result.blocks[key] = block
    return i


def _read_lscpu(result: Scan, i: int) -> int:
    """lscpu's `Key: value` lines, until a blank line, a section banner or the library list."""
    paste, lines = result.paste, result.paste.lines
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            # The sectioned form has no blank line inside; the classic form ends its block with one.
            if result.sections and result.sections[-1] == "CPU Info":
                i += 1
                continue
            break
        if _SECTION_RULE.match(line) or _LIST_ROW.match(line) or line.startswith("Versions of relevant"):
            break
        kv = lscpu_locale.label_and_value(line)
        if not kv and not result.lscpu and facts.known(line.strip()):
            # macOS prints the CPU's brand string alone (`Apple M1 Pro`).
            result.lscpu["Model name"] = line.strip()
            paste.claim(i)
            i += 1
            continue
        if not kv:
            break
        # A translated lscpu (`型号名称：`, `Modellname:`) says the same under its English label.
        key, value = lscpu_locale.english(kv[0]), kv[1]
        numa = re.match(r"^NUMA node(\d+) CPU\(s\)$", key)
        if numa:
            result.numa_cpus[numa.group(1)] = value
        else:
            result.lscpu[key] = value
        paste.claim(i)
        i += 1
    return i


def _read_topology(result: Scan, key: str, value: str, i: int) -> int:
    """The `nvidia-smi topo -m` block after a topology key: matrix, legend and NIC legend."""
    paste, lines = result.paste, result.paste.lines
    block = [value] if value else []
    seen_legend = False
    start = i
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if i in paste.claimed and stripped and not _TOPO_ROW.match(line):
            break
        if not stripped or line.startswith((" ", "\t")):
            pass
        elif stripped in ("Legend:", "NIC Legend:"):
            seen_legend = True
        elif not seen_legend and (_TOPO_ROW.match(line) or _TOPO_HEADER.match(line)):
            pass
        elif i == start and facts.known(stripped) is None:
            paste.claim(i)
            i += 1
            break
        else:
            break
        block.append(line)
        paste.claim(i)
        i += 1
    text = "\n".join(block).strip("\n")
    if text.strip():
        result.topology = text
    result.fields.setdefault(key, "" if text.strip() else value)
    return i


def common_probes(s: Scan, source: str) -> dict[str, JSONObject]:
    """The probes a collect_env-family report fills, from the fields both generations share."""
    f = s.fields
    names = [m.group(2).strip() for row in s.blocks.get("GPU models and configuration", [])
             if (m := _GPU_ROW.match(row))]
    inline = facts.known(f.get("GPU models and configuration"))
    # A list the paste may have cut names GPUs, but not how many there are.
    enumerated = bool(names) and not s.gpu_list_cut
    if inline and not names:
        first = _GPU_ROW.match(inline)
        names = [first.group(2).strip()] if first else [inline]
        enumerated = bool(first)
    wheels = {facts.package_key(n): v for n, v in s.pip}
    version = facts.known(f.get("PyTorch version"))
    cudnn = facts.cudnn_from_text(" ".join([f.get("cuDNN version", ""), *s.blocks.get("cuDNN version", [])]))
    platform = facts.platform_fields(f.get("Python platform"))
    probes: dict[str, JSONObject | None] = {
        "python": facts.python_data(f.get("Python version"), f.get("Python platform")),
        "env": facts.env_data(s.env),
        "packages": facts.packages_data(s.pip, s.conda) if s.pip or s.conda else None,
        "torch": facts.torch_data(version, debug=facts.truth(f.get("Is debug build")),
                                  cuda=facts.known(f.get("CUDA used to build PyTorch")),
                                  hip=facts.known(f.get("ROCM used to build PyTorch")), wheels=wheels, cudnn=cudnn,
                                  cuda_available=facts.truth(f.get("Is CUDA available")),
                                  # MIG instances are what CUDA enumerates: the GPU count is not torch's.
                                  device_count=len(names) if enumerated and "MIG devices" not in f else None),
        "gpu": facts.gpu_data(names, f.get("Nvidia driver version"), source, count_known=enumerated),
        # collect_env's `CUDA runtime version` is what `nvcc --version` printed: the toolkit, not torch's CUDA.
        "kernels": facts.cuda_toolkit_data(f.get("CUDA runtime version")),
        "pcie": facts.pcie_data(s.topology, source),
        "nccl": facts.nccl_data(s.env),
        "system": facts.system_data(f.get("OS"), (platform or {}).get("release") if (platform or {}).get("system")
                                    == "Linux" else None, s.lscpu, s.numa_cpus),
    }
    return {name: data for name, data in probes.items() if data}


def parsed(s: Scan, probes: dict[str, JSONObject], variant: str, mapped: tuple[str, ...]) -> Parsed:
    """The Parsed result of a scan: probes, the fields no probe took, and the unclaimed lines."""
    raw = {k: v for k, v in s.fields.items() if k not in mapped}
    if s.lscpu:
        raw.update({f"lscpu: {k}": v for k, v in s.lscpu.items() if k not in _LSCPU_MAPPED})
    if "cudnn_version" not in probes.get("torch", {}) and (s.blocks.get("cuDNN version") or _cudnn_line(s)):
        # Library candidates that disagree (or a line no version was read from): kept as text, not a fact.
        raw["cuDNN version"] = "\n".join([_cudnn_line(s), *s.blocks.get("cuDNN version", [])]).strip()
    if s.topology and "pcie" not in probes:
        # A matrix cut short by the paste: kept as text rather than dropped.
        raw["topology (unreadable matrix)"] = s.topology
    return Parsed(probes=probes, variant=variant, fields=raw, unclaimed=s.paste.unclaimed(),
                  noise=s.paste.noise_lines(), complete=_complete(probes),
                  cut=["probes.gpu.data.gpus"] if s.gpu_list_cut and "gpu" in probes else [])


def _cudnn_line(s: Scan) -> str:
    """The `cuDNN version` line's own value, when it is not merely "could not collect"."""
    return facts.known(s.fields.get("cuDNN version")) or ""


_LSCPU_MAPPED = ("Model name", "Vendor ID", "Socket(s)", "Core(s) per socket", "CPU(s)", "On-line CPU(s) list")
COMMON_MAPPED = ("PyTorch version", "Is debug build", "CUDA used to build PyTorch", "ROCM used to build PyTorch",
                 "OS", "Python version", "Python platform", "Is CUDA available", "GPU models and configuration",
                 "Nvidia driver version", "cuDNN version", "CUDA runtime version")


def _complete(probes: dict[str, JSONObject]) -> list[str]:
    """Maps a report lists in full: its GPU list (when enumerated) and its topology matrix."""
    complete = []
    if "gpu_count" in probes.get("gpu", {}):
        complete.append("probes.gpu.data.gpus")
    if "pcie" in probes:
        # A matrix names every device and every pair of them.
        complete.extend(["probes.pcie.data.gpus", "probes.pcie.data.topology.pairs", "probes.pcie.data.topology.nics",
                         "probes.pcie.data.topology.cpu_affinity", "probes.pcie.data.topology.numa_affinity",
                         "probes.pcie.data.topology.gpu_numa_id"])
    return complete
