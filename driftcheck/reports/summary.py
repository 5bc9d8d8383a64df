"""The one-screen summary of a snapshot: what a reader checks first, about 40 lines on an 8-GPU server.

`summary_rows` picks the facts (host, OS, CPU, Python, torch build, the packages that decide speed,
GPUs with their clocks, power, PCIe links and topology, performance variables, system knobs, probe
outcomes) as (section, label, value) rows; `summary_text` prints them for a terminal and the Markdown
report turns the same rows into a table, so both say the same thing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from driftcheck.snapshot.catalog import name_catalog
from driftcheck.snapshot.jsontypes import JSONValue, list_or_empty, object_or_empty, value_at
from driftcheck.snapshot.model import Snapshot
from driftcheck.snapshot.printable import printable

_CLOSE_LEVELS = re.compile(r"^(NV\d+|PIX|PXB)$")
_WIDTH = 100


@dataclass(frozen=True)
class Row:
    """One line of the summary: its section, a short label and the value text."""

    section: str
    label: str
    value: str


def get(data: JSONValue, path: str) -> JSONValue:
    """The value at a dotted `path` inside nested dicts, or None where any step is missing."""
    return value_at(data, *path.split("."))


def _join(parts: Iterable[object], sep: str = ", ") -> str:
    return sep.join(str(p) for p in parts if p not in (None, ""))


def _count_values(values: list[object]) -> str:
    """`700 W` when all agree; `700 W ×6, 500 W ×2` when they do not."""
    counts = Counter(str(v) for v in values if v is not None)
    if not counts:
        return ""
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{value} ×{n}" for value, n in counts.most_common())


def short_build(build_id: object) -> str | None:
    """The first 8 hex digits of a `sha256:...` build id."""
    if isinstance(build_id, str) and ":" in build_id:
        return build_id.split(":", 1)[1][:8]
    return None


def _host_rows(s: Snapshot) -> list[Row]:
    doc = s.document
    system = s.probe_data("system") or {}
    python = s.probe_data("python") or {}
    rows = []
    host = doc.get("host") or {}
    where = host.get("name", "?")
    report = host.get("report")
    if host.get("kind") == "imported" or doc.get("origin") == "imported":
        sources = ", ".join(f"{src['file']} ({src['format']}" + (f", {src['variant']}" if src.get("variant") else "")
                            + ")" for src in host.get("sources") or [])
        rows.append(Row("host", "imported", sources or "from pasted text"))
    if report:
        rows.append(Row("host", "report", f"{len(report.get('fields') or {})} raw fields, "
                                          f"{report.get('unclaimed_count', 0)} unclaimed lines kept"))
    if host.get("kind") != "imported":
        rows.append(Row("host", "host", _join([where, host.get("kind")], "  ")))
    os_name = get(system, "os.pretty_name")
    kernel = get(system, "kernel.release") or get(python, "platform.release")
    container = get(system, "container.kind")
    rows.append(Row("host", "os", _join([os_name, f"kernel {kernel}" if kernel else None,
                                         f"container {container}" if container and container != "none" else None],
                                        ", ")))
    cpu = system.get("cpu") or {}
    if cpu:
        shape = _join([f"{cpu['sockets']} socket(s)" if cpu.get("sockets") else None,
                       f"{cpu['cores']} cores" if cpu.get("cores") else None,
                       f"{cpu['threads']} threads" if cpu.get("threads") else None])
        memory = get(system, "memory.total_kib")
        rows.append(Row("host", "cpu", _join([cpu.get("model"), shape,
                                              f"{memory / 2**20:.0f} GiB RAM" if isinstance(memory, int) else None],
                                             ", ")))
    if python:
        env = python.get("prefix") if python.get("virtualenv") or python.get("conda_env") else None
        rows.append(Row("host", "python", _join([python.get("version"), python.get("executable"),
                                                 f"venv {env}" if env else None], "  ")))
    return [r for r in rows if r.value]


def _torch_rows(s: Snapshot) -> list[Row]:
    torch = s.probe_data("torch")
    if not torch:
        return []
    build = _join([torch.get("version"),
                   f"CUDA {torch['cuda_version']}" if torch.get("cuda_version") else None,
                   f"HIP {torch['hip_version']}" if torch.get("hip_version") else None,
                   f"cuDNN {torch['cudnn_version']}" if torch.get("cudnn_version") else None,
                   f"NCCL {torch['nccl_version']}" if torch.get("nccl_version") else None,
                   "debug build" if torch.get("debug") else None])
    runtime = None
    if torch.get("cuda_available") is not None:
        seen = torch.get("device_count")  # absent from a report that names no count: not 0
        runtime = ("CUDA available" if seen is None else f"sees {seen} GPU(s)") if torch["cuda_available"] \
            else "no GPU visible"
    return [Row("software", "torch", _join([build, runtime], "; "))]


def _toolkit_rows(s: Snapshot) -> list[Row]:
    """The CUDA toolkit nvcc reported (an imported `nvcc --version`)."""
    toolkit = get(s.probe_data("kernels"), "cuda_toolkit")
    if not isinstance(toolkit, dict) or not toolkit.get("version"):
        return []
    return [Row("software", "cuda toolkit", _join([f"nvcc {toolkit['version']}", toolkit.get("build")]))]


def _package_rows(s: Snapshot) -> list[Row]:
    data = s.probe_data("packages")
    if not data:
        return []
    packages = data.get("packages") or {}
    shown = []
    # The packages whose version or build most often decides inference speed (catalog `summary`).
    for name in name_catalog().summary_packages():
        entry = packages.get(name)
        if isinstance(entry, dict):
            build = short_build(entry.get("build_id"))
            shown.append(f"{name} {entry.get('version')}" + (f" ({build})" if build else ""))
    head = f"{len(packages)} installed" if packages else "none listed"
    if data.get("duplicates"):
        head += f", {len(data['duplicates'])} installed twice"
    rows = [Row("software", "packages", head)]
    rows.extend(Row("software", "", line) for line in _wrap(shown))
    return rows + _modified_rows(s)


def _modified_rows(s: Snapshot) -> list[Row]:
    """Packages whose compiled files differ from their RECORD: the first thing a reader must see, since the
    version string then says nothing about the code that runs."""
    modified = get(s.probe_data("kernels"), "modified_in_place") or {}
    if not isinstance(modified, dict) or not modified:
        return []
    items = [f"{name} ({len(files)} file{'s' if len(files) != 1 else ''})" if isinstance(files, list) else str(name)
             for name, files in sorted(modified.items())]
    return [Row("software", "modified in place" if i == 0 else "", line) for i, line in enumerate(_wrap(items))]


def _wrap(items: list[str], width: int = _WIDTH) -> list[str]:
    lines: list[str] = []
    current = ""
    for item in items:
        candidate = f"{current}, {item}" if current else item
        if current and len(candidate) > width:
            lines.append(current + ",")
            current = item
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def _gpu_rows(s: Snapshot) -> list[Row]:
    gpu = s.probe_data("gpu")
    pcie = s.probe_data("pcie")
    rows: list[Row] = []
    if gpu:
        gpus = [g for g in (gpu.get("gpus") or {}).values() if isinstance(g, dict)]
        models = Counter(str(g.get("name")) for g in gpus)
        count = gpu.get("gpu_count")
        model_text = ", ".join(f"{n} × {name}" for name, n in models.most_common())
        if isinstance(count, int) and count != len(gpus):
            model_text += f" ({count} attached)"
        rows.append(Row("gpus", "gpus", _join([model_text, f"driver {gpu['driver_version']}"
                                               if gpu.get("driver_version") else None,
                                               f"CUDA {gpu['cuda_driver_version']}" if gpu.get("cuda_driver_version")
                                               else None], ", ")))
        rows.extend(_gpu_state_rows(gpus))
    if pcie:
        rows.extend(_pcie_rows(pcie))
    return [r for r in rows if r.value]


def _gpu_state_rows(gpus: Sequence[Mapping[str, JSONValue]]) -> list[Row]:
    if not gpus:
        return []
    rows = []
    max_sm = _count_values([f"{v} MHz" for g in gpus if (v := get(g, "max_clocks.sm_mhz")) is not None])
    app = _count_values([f"{a}/{b} MHz" for g in gpus if (a := get(g, "application_clocks.graphics_mhz")) is not None
                         and (b := get(g, "application_clocks.memory_mhz")) is not None])
    locked = _count_values([f"{v.get('gpu_min_mhz')}-{v.get('gpu_max_mhz')} MHz" for g in gpus
                            if isinstance(v := g.get("locked_clocks"), dict)])
    reasons = Counter(str(r) for g in gpus for r in list_or_empty(g.get("clock_event_reasons")) if r != "idle")
    clocks = _join([f"SM max {max_sm}" if max_sm else None, f"app {app}" if app else None,
                    f"locked {locked}" if locked else None,
                    "throttled: " + _join(f"{r} ×{n}" for r, n in reasons.most_common()) if reasons else None], "; ")
    if clocks:
        rows.append(Row("gpus", "clocks", clocks))
    limit = _power_limit_text(gpus)
    persistence = [g.get("persistence_mode") for g in gpus if g.get("persistence_mode") is not None]
    ecc = _count_values([get(g, "ecc.mode_current") for g in gpus])
    mig = _count_values([get(g, "mig.mode_current") for g in gpus])
    power = _join([limit or None,
                   f"persistence on {sum(1 for p in persistence if p)}/{len(persistence)}" if persistence else None,
                   f"ECC {ecc}" if ecc else None, f"MIG {mig}" if mig else None], "; ")
    if power:
        rows.append(Row("gpus", "power", power))
    busy = sum(len(object_or_empty(g.get("processes"))) for g in gpus)
    if busy:
        rows.append(Row("gpus", "processes", f"{busy} process(es) on the GPUs"))
    return rows


def _watts_counted(gpus: Sequence[Mapping[str, JSONValue]], path: str) -> str:
    return _count_values([f"{v:g} W" for g in gpus if isinstance(v := get(g, path), (int, float))])


def _power_limit_text(gpus: Sequence[Mapping[str, JSONValue]]) -> str:
    """`limit 700 W (requested 900 W, default 900 W)`: the limit the GPUs run under is the enforced one; the
    requested (`-pl`) one is named where it differs (a board or system cap below it) or where it is all that
    was read, the default where it differs from the limit shown."""
    enforced = _watts_counted(gpus, "power.enforced_limit_w")
    requested = _watts_counted(gpus, "power.limit_w")
    default = _watts_counted(gpus, "power.default_limit_w")
    shown = enforced or requested
    if not shown:
        return ""
    notes = [f"requested {requested}" if enforced and requested and requested != enforced else None,
             f"default {default}" if default and default != shown else None]
    written = [note for note in notes if note]
    head = f"limit {shown}" + ("" if enforced else " requested")
    return head + (f" ({', '.join(written)})" if written else "")


def _link_text(link: Mapping[str, object]) -> str:
    return (f"Gen{link.get('gen_current')} x{link.get('width_current')} "
            f"(max Gen{link.get('gen_max')} x{link.get('width_max')})")


def _pcie_rows(pcie: Mapping[str, JSONValue]) -> list[Row]:
    rows = []
    links = {}
    for key, entry in sorted(object_or_empty(pcie.get("gpus")).items(), key=lambda kv: str(value_at(kv[1], "index"))):
        if not isinstance(entry, dict):
            continue
        link = entry.get("link")
        if isinstance(link, dict) and link.get("width_current") is not None:
            links[f"GPU{entry.get('index', key)}"] = link
    if links:
        texts = Counter(_link_text(link) for link in links.values())
        if len(texts) == 1:
            rows.append(Row("gpus", "pcie", f"{next(iter(texts))} on all {len(links)}"))
        else:
            common = texts.most_common(1)[0][0]
            odd = [f"{name} {_link_text(link)}" for name, link in links.items() if _link_text(link) != common]
            rows.append(Row("gpus", "pcie", f"{common} on {texts[common]}; " + "; ".join(odd)))
        narrowed = [name for name, link in links.items() if isinstance(link.get("width_max"), int)
                    and isinstance(link.get("width_current"), int) and link["width_current"] < link["width_max"]]
        if narrowed:
            rows.append(Row("gpus", "", f"width below max on {', '.join(narrowed)}"))
    topology = pcie.get("topology")
    if isinstance(topology, dict):
        rows.append(Row("gpus", "topology", topology_line(topology)))
    return rows


def topology_line(topology: Mapping[str, JSONValue]) -> str:
    """The GPU-to-GPU topology in one line: `NV18 all pairs`, `PIX/SYS: 2 PCIe islands`, ..."""
    pairs = {k: str(v) for k, v in object_or_empty(topology.get("pairs")).items()
             if all(part.startswith("GPU") for part in k.split("~"))}
    gpus = [str(d) for d in list_or_empty(topology.get("devices")) if str(d).startswith("GPU")]
    if not pairs:
        return f"{len(gpus)} GPU, no pairs" if gpus else "no GPUs in the matrix"
    levels = Counter(pairs.values())
    nics = [d for d in list_or_empty(topology.get("devices")) if not str(d).startswith("GPU")]
    nic_text = f"; {len(nics)} NICs" if nics else ""
    if len(levels) == 1:
        return f"{next(iter(levels))} all pairs{nic_text}"
    islands = _islands(gpus, pairs)
    names = "/".join(level for level, _ in sorted(levels.items(), key=lambda kv: (-kv[1], kv[0])))
    if len(islands) > 1:
        sizes = sorted({len(i) for i in islands})
        size_text = f" of {sizes[0]}" if len(sizes) == 1 else ""
        return f"{names}: {len(islands)} PCIe islands{size_text}{nic_text}"
    return f"{names}: " + ", ".join(f"{level} ×{n}" for level, n in levels.most_common()) + nic_text


def _islands(gpus: list[str], pairs: dict[str, str]) -> list[set[str]]:
    """Groups of GPUs joined by NVLink or a PCIe switch (not through a host bridge or the CPU)."""
    parent = {g: g for g in gpus}

    def find(g: str) -> str:
        while parent[g] != g:
            g = parent[g]
        return g

    for key, level in pairs.items():
        a, b = key.split("~")
        if a in parent and b in parent and _CLOSE_LEVELS.match(str(level)):
            parent[find(a)] = find(b)
    groups: dict[str, set[str]] = {}
    for g in gpus:
        groups.setdefault(find(g), set()).add(g)
    return list(groups.values())


def _perf_vars(variables: object) -> dict[str, object]:
    """The variables of a performance family (the catalog's env families), of an environment."""
    if not isinstance(variables, dict):
        return {}
    catalog = name_catalog()
    return {k: v for k, v in variables.items() if catalog.env_family_of(str(k)) is not None}


def _var_rows(label: str, variables: Mapping[str, object]) -> list[Row]:
    if not variables:
        return [Row("environment", label, "none set")]
    items = [f"{k}={_short(str(v))}" for k, v in sorted(variables.items())]
    lines = _wrap(items)
    if len(lines) > 4:
        lines = [*lines[:3], f"... and {len(items) - sum(line.count('=') for line in lines[:3])} more"]
    return [Row("environment", label if i == 0 else "", line) for i, line in enumerate(lines)]


def _env_rows(s: Snapshot) -> list[Row]:
    env = get(s.probe_data("env"), "vars") or {}
    nccl = object_or_empty(get(s.probe_data("nccl"), "env"))
    processes = get(s.probe_data("process"), "processes") or {}
    # A described server runs with the environment it was started with, not driftcheck's: "none set" for
    # the shell says nothing about a server started with NCCL_P2P_DISABLE=1, so each one gets its own line.
    served: list[Row] = []
    for key, process in sorted(processes.items()) if isinstance(processes, dict) else ():
        if isinstance(process, dict) and isinstance(process.get("environ"), dict):
            served.extend(_var_rows(f"perf vars of {key}", _perf_vars(process["environ"])))
    own_label = "perf vars (driftcheck's shell)" if served else "perf vars"
    return (_var_rows(own_label, {**_perf_vars(env), **nccl}) if env or nccl else []) + served


def _short(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[:limit - 3] + "..."


def _nccl_rows(s: Snapshot) -> list[Row]:
    nccl = s.probe_data("nccl")
    if not nccl:
        return []
    found = nccl.get("library")
    library: dict[str, object] = found if isinstance(found, dict) else {}
    ib = nccl.get("infiniband")
    ports = [p for dev in (ib or {}).values() if isinstance(dev, dict)
             for p in (dev.get("ports") or {}).values() if isinstance(p, dict)]
    active = sum(1 for p in ports if "ACTIVE" in str(p.get("state")).upper())
    source = f" ({library['source']})" if library.get("source") else ""
    text = _join([f"libnccl {library.get('version')}{source}" if library.get("version") else None,
                  f"{len(ib)} InfiniBand device(s), {active}/{len(ports)} ports active" if ib else
                  "no InfiniBand" if ib is not None else None,
                  f"{len(nccl.get('conf_files') or {})} nccl.conf file(s)" if nccl.get("conf_files") else None], "; ")
    return [Row("environment", "nccl", text)] if text else []


def _knob_rows(s: Snapshot) -> list[Row]:
    system = s.probe_data("system")
    if not system:
        return []
    governors = get(system, "cpufreq.governors")
    governor = ", ".join(f"{g} ×{n}" if len(governors) > 1 else str(g) for g, n in governors.items()) \
        if isinstance(governors, dict) and governors else None
    thp = _join([get(system, "thp.enabled"), f"defrag {get(system, 'thp.defrag')}" if get(system, "thp.defrag")
                 else None], ", ")
    nodes = get(system, "numa.nodes")
    balancing = get(system, "numa.balancing")
    numa = _join([f"{len(nodes)} nodes" if isinstance(nodes, dict) and nodes else None,
                  f"balancing {'on' if balancing else 'off'}" if balancing is not None else None], ", ")
    cpu_limit = get(system, "cgroup.cpu_quota_cores")
    memory_limit = get(system, "cgroup.memory_limit_bytes")
    cgroup = _join([f"cpu {'no limit' if cpu_limit == 'max' else cpu_limit}" if cpu_limit is not None else None,
                    f"memory {'no limit' if memory_limit == 'max' else _bytes(memory_limit)}"
                    if memory_limit is not None else None], ", ")
    knobs = _join([f"governor {governor}" if governor else None, f"THP {thp}" if thp else None,
                   f"NUMA {numa}" if numa else None], "; ")
    rows = [Row("system", "knobs", knobs)] if knobs else []
    extra = _join([f"cgroup {cgroup}" if cgroup else None,
                   f"isolcpus {system['isolcpus']}" if system.get("isolcpus") else None,
                   f"swap {_bytes(swap * 1024)}"
                   if isinstance(swap := get(system, "swap.total_kib"), (int, float)) and swap else None,
                   f"memlock {system.get('memlock_limit_bytes')}" if system.get("memlock_limit_bytes") else None], "; ")
    if extra:
        rows.append(Row("system", "limits", extra))
    return rows


def _bytes(value: object) -> str:
    if not isinstance(value, (int, float)):
        return str(value)
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if value >= size:
            return f"{value / size:.0f} {unit}"
    return f"{value:.0f} B"


def _probe_rows(s: Snapshot) -> list[Row]:
    counts = s.status_counts()
    failed = [f"{name}: {outcome['status']}" + (f" ({_short(str((outcome.get('error') or {}).get('message')), 60)})"
                                                 if (outcome.get("error") or {}).get("message") else "")
              for name, outcome in sorted(s.probes.items()) if outcome.get("status") != "ok"]
    rows = [Row("probes", "probes", ", ".join(f"{status} {n}" for status, n in counts.items()))]
    rows.extend(Row("probes", "", text) for text in failed[:4])
    if len(failed) > 4:
        rows.append(Row("probes", "", f"... and {len(failed) - 4} more not ok"))
    return rows


def summary_rows(snapshot: Snapshot) -> list[Row]:
    """The summary's rows, in display order; sections without facts are left out."""
    sections = (_host_rows, _torch_rows, _toolkit_rows, _package_rows, _gpu_rows, _env_rows, _nccl_rows, _knob_rows,
                _probe_rows)
    return [row for section in sections for row in _section_rows(section, snapshot)]


def _section_rows(section: Callable[[Snapshot], list[Row]], snapshot: Snapshot) -> list[Row]:
    """The rows of one section; one row saying so when the snapshot's facts there are not of the shapes the
    probes write (a hand-edited or foreign document): one odd value never hides the rest of the summary."""
    try:
        return section(snapshot)
    except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        name = section.__name__.strip("_").removesuffix("_rows")
        return [Row(name, "", f"(facts of an unexpected shape: {type(exc).__name__})")]


def header_line(snapshot: Snapshot, signer: str | None) -> str:
    """`snapshot <id>  <time>  <origin>, signed by ... | unsigned  label '...'`."""
    doc = snapshot.document
    return (f"snapshot {snapshot.short_id}  {snapshot.created_at[:19].replace('T', ' ')} UTC  "
            f"{doc.get('origin', '?')}, " + (f"signed by {signer}" if signer else "unsigned")
            + (f"  label {snapshot.label!r}" if snapshot.label else ""))


def summary_text(snapshot: Snapshot, signer: str | None, colour: bool = False) -> str:
    """The summary as terminal text; section labels in colour when `colour`."""
    bold, dim, reset = ("\033[1m", "\033[2m", "\033[0m") if colour else ("", "", "")
    # Every fact may be a stranger's text (an imported or received snapshot): shown, never obeyed by the
    # terminal (a label's ESC sequence would retitle it, clear it, or forge a line such as "signed by you").
    lines = [f"{bold}{printable(header_line(snapshot, signer))}{reset}"]
    rows = [Row(row.section, printable(row.label), printable(row.value)) for row in summary_rows(snapshot)]
    width = max((len(r.label) for r in rows), default=0)
    for row in rows:
        label = row.label.ljust(width)
        lines.append(f"  {bold if row.label else ''}{label}{reset}  {row.value}")
    lines.append(f"{dim}(every fact: driftcheck show {snapshot.short_id} --full){reset}")
    return "\n".join(lines) + "\n"
