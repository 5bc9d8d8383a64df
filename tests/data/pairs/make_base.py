"""Build tests/data/pairs/base.json (see README.md). Run once; its output is committed.

usage: make_base.py REAL_SNAPSHOT.json NVIDIA_SMI_Q.txt TOPO_M.txt SITE_PACKAGES

REAL_SNAPSHOT: `driftcheck snapshot --probe python --probe env -o` of the build machine.
NVIDIA_SMI_Q: a recorded `nvidia-smi -q` of an 8x H100 (GPU 0 and 1 are taken).
TOPO_M: the recorded `nvidia-smi topo -m` of an 8x H100 (pair and affinity columns of GPU0/GPU1).
SITE_PACKAGES: the build machine's venv, whose real dist-info and .so files give packages/kernels.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

KEEP_ENV = ("HOME", "LANG", "SHELL", "TERM", "PYTHONUNBUFFERED", "DEBIAN_FRONTEND")
# From the env section of a recorded vLLM collect_env (8x B200 docker image), same family of machine.
ML_ENV = {"NVIDIA_VISIBLE_DEVICES": "all", "NCCL_VERSION": "2.25.1-1", "CUDA_VERSION": "12.8.1",
          "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "NCCL_CUMEM_ENABLE": "0",
          "PYTORCH_NVML_BASED_CUDA_CHECK": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1",
          "CUDA_MODULE_LOADING": "LAZY", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}
# A dozen of the build machine's real packages keep each pair small; the large case is benchmarks/.
KEEP_PACKAGES = ("torch-", "pyyaml-", "deepdiff-", "psutil-", "cryptography-", "paramiko-", "nvidia_ml_py-",
                 "packaging-", "typing_extensions-", "jinja2-", "sympy-", "networkx-", "filelock-", "fsspec-")
REASONS = {"Idle": "idle", "Applications Clocks Setting": "applications_clocks_setting",
           "SW Power Cap": "sw_power_cap", "HW Slowdown": "hw_slowdown", "HW Thermal Slowdown": "hw_thermal_slowdown",
           "HW Power Brake Slowdown": "hw_power_brake_slowdown", "Sync Boost": "sync_boost",
           "SW Thermal Slowdown": "sw_thermal_slowdown", "Display Clock Setting": "display_clock_setting"}


def num(text: str) -> float | int | None:
    m = re.match(r"^(-?[\d.]+)", text.strip())
    if not m:
        return None
    v = float(m.group(1))
    return int(v) if v.is_integer() and "." not in m.group(1) else v


def gpu_blocks(text: str) -> list[list[str]]:
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("GPU 0000"):
            cur = []
            blocks.append(cur)
        elif cur is not None:
            cur.append(line)
    return blocks


def field(block: list[str], section: str | None, name: str) -> str:
    inside = section is None
    for line in block:
        label = line.split(":")[0].strip()
        if section is not None and label == section and ":" not in line:
            inside = True
            continue
        if inside and label == name and ":" in line:
            return line.split(":", 1)[1].strip()
    raise KeyError(f"{section}/{name}")


def gpu_record(block: list[str], index: int) -> dict:
    f = lambda s, n: field(block, s, n)  # noqa: E731
    reasons = [key for label, key in REASONS.items() if f("Clocks Event Reasons", label) == "Active"]
    uuid = f(None, "GPU UUID")
    return {
        "index": index, "uuid": uuid, "pci_bus_id": f("PCI", "Bus Id"), "name": f(None, "Product Name"),
        "serial": f(None, "Serial Number"), "vbios_version": f(None, "VBIOS Version"),
        "persistence_mode": f(None, "Persistence Mode") == "Enabled", "compute_mode": f(None, "Compute Mode"),
        "performance_state": f(None, "Performance State"), "fan_speed_pct": num(f(None, "Fan Speed")),
        "clocks": {"sm_mhz": num(f("Clocks", "SM")), "memory_mhz": num(f("Clocks", "Memory")),
                   "graphics_mhz": num(f("Clocks", "Graphics")), "video_mhz": num(f("Clocks", "Video"))},
        "max_clocks": {"sm_mhz": num(f("Max Clocks", "SM")), "memory_mhz": num(f("Max Clocks", "Memory")),
                       "graphics_mhz": num(f("Max Clocks", "Graphics"))},
        "application_clocks": {"graphics_mhz": num(f("Applications Clocks", "Graphics")),
                               "memory_mhz": num(f("Applications Clocks", "Memory"))},
        "default_application_clocks": {"graphics_mhz": num(f("Default Applications Clocks", "Graphics")),
                                       "memory_mhz": num(f("Default Applications Clocks", "Memory"))},
        "locked_clocks": None,
        "clock_event_reasons": reasons,
        "power": {"draw_w": num(f("GPU Power Readings", "Power Draw")),
                  "limit_w": num(f("GPU Power Readings", "Current Power Limit")),
                  "default_limit_w": num(f("GPU Power Readings", "Default Power Limit")),
                  "enforced_limit_w": num(f("GPU Power Readings", "Current Power Limit")),
                  "min_limit_w": num(f("GPU Power Readings", "Min Power Limit")),
                  "max_limit_w": num(f("GPU Power Readings", "Max Power Limit"))},
        "temperature": {"gpu_c": num(f("Temperature", "GPU Current Temp")),
                        "memory_c": num(f("Temperature", "Memory Current Temp")),
                        "slowdown_c": num(f("Temperature", "GPU Slowdown T.Limit Temp")),
                        "shutdown_c": num(f("Temperature", "GPU Shutdown T.Limit Temp")),
                        "max_operating_c": num(f("Temperature", "GPU Max Operating T.Limit Temp"))},
        "memory": {"total_mib": num(f("FB Memory Usage", "Total")), "used_mib": num(f("FB Memory Usage", "Used")),
                   "free_mib": num(f("FB Memory Usage", "Free"))},
        "bar1_memory": {"total_mib": num(f("BAR1 Memory Usage", "Total")),
                        "used_mib": num(f("BAR1 Memory Usage", "Used"))},
        "ecc": {"mode_current": f("ECC Mode", "Current"), "mode_pending": f("ECC Mode", "Pending"),
                "volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 0, "uncorrected": 0}},
        "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "remapped_rows": {"correctable": num(f("Remapped Rows", "Correctable Error")),
                          "uncorrectable": num(f("Remapped Rows", "Uncorrectable Error")),
                          "pending": f("Remapped Rows", "Pending") == "Yes",
                          "failure": f("Remapped Rows", "Remapping Failure Occurred") == "Yes"},
        "mig": {"mode_current": f("MIG Mode", "Current"), "mode_pending": f("MIG Mode", "Pending"), "instances": {}},
        "utilization": {"gpu_pct": num(f("Utilization", "Gpu")), "memory_pct": num(f("Utilization", "Memory"))},
        "processes": {},
        "nvlink": {"0": {"state": "Active", "version": 4, "remote_pci_bus_id": None}},
        "fabric": {"state": "Completed", "status": "Success"},
    }, {"gen_current": num(f("PCIe Generation", "Current")), "gen_max": num(f("PCIe Generation", "Max")),
        "width_current": num(f("Link Width", "Current")), "width_max": num(f("Link Width", "Max"))}, \
        num(f("PCI", "Replays Since Reset"))


def main() -> None:
    real, smi, topo, site = (Path(p) for p in sys.argv[1:5])
    snap = json.loads(real.read_text())
    venv = str(site.parents[2])
    scrub = lambda s: s.replace(venv, "/opt/venv") if isinstance(s, str) else s  # noqa: E731
    py = snap["probes"]["python"]["data"]
    py = {k: scrub(v) for k, v in py.items()}
    py["sys_path"] = [scrub(p) for p in py["sys_path"]]
    py["platform"]["release"] = re.sub(r"-.*", "", py["platform"]["release"])
    envvars = {k: scrub(v) for k, v in snap["probes"]["env"]["data"]["vars"].items() if k in KEEP_ENV}
    envvars["PATH"] = "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin"
    envvars.update(ML_ENV)
    gpus, pcie = {}, {}
    topo_rows = {line.split()[0]: line.split() for line in topo.read_text().splitlines() if line.startswith("GPU")}
    for index, block in enumerate(gpu_blocks(smi.read_text())[:2]):
        record, lnk, replays = gpu_record(block, index)
        gpus[record["uuid"]] = record
        row = topo_rows[f"GPU{index}"]
        pcie[record["uuid"]] = {"index": index, "pci_bus_id": record["pci_bus_id"], "link": lnk,
                                "replay_counter": replays, "cpu_affinity": row[-3], "numa_node": int(row[-2])}
    driver = re.search(r"Driver Version\s*:\s*(\S+)", smi.read_text()).group(1)
    cuda = re.search(r"CUDA Version\s*:\s*(\S+)", smi.read_text()).group(1)
    packages, files = {}, {}
    for info in sorted(site.glob("*.dist-info")):
        if not info.name.lower().startswith(KEEP_PACKAGES):
            continue
        meta = (info / "METADATA").read_text(errors="replace")
        name = re.search(r"^Name: (.+)$", meta, re.M).group(1).strip()
        version = re.search(r"^Version: (.+)$", meta, re.M).group(1).strip()
        norm = re.sub(r"[-_.]+", "-", name).lower()
        wheel = (info / "WHEEL").read_text() if (info / "WHEEL").exists() else ""
        packages[norm] = {"name": name, "version": version, "location": "/opt/venv/lib/python3.11/site-packages",
                          "installer": ((info / "INSTALLER").read_text().strip() if (info / "INSTALLER").exists()
                                        else None), "editable": False, "direct_url": None,
                          "wheel_tags": re.findall(r"^Tag: (.+)$", wheel, re.M), "build_id": None,
                          "compiled_files": 0}
    for dist, rel in (("torch", "torch/_C.cpython-311-x86_64-linux-gnu.so"),
                      ("pyyaml", "yaml/_yaml.cpython-311-x86_64-linux-gnu.so")):
        blob = (site / rel).read_bytes()
        files[f"{dist}:{rel}"] = {"path": rel, "size_bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest(),
                                  "record_match": True}
        packages[dist]["compiled_files"] += 1
    libcuda = b"stand-in for libcuda.so.1 (no GPU driver on the build machine)"
    files["system:/usr/lib/x86_64-linux-gnu/libcuda.so.1"] = {
        "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "size_bytes": len(libcuda),
        "sha256": hashlib.sha256(libcuda).hexdigest(), "record_match": None}

    def ok(d: dict) -> dict:
        return {"status": "ok", "data": d, "error": None, "duration_s": 0.1}

    probes = {
        "python": ok(py),
        "env": ok({"vars": dict(sorted(envvars.items()))}),
        "gpu": ok({"source": "nvidia-smi-text", "driver_version": driver, "cuda_driver_version": cuda,
                   "gpu_count": 2, "gpus": gpus}),
        "pcie": ok({"source": "nvidia-smi", "gpus": pcie,
                    "topology": {"devices": ["GPU0", "GPU1"], "pairs": {"GPU0~GPU1": topo_rows["GPU0"][2]},
                                 "cpu_affinity": {"GPU0": topo_rows["GPU0"][-3], "GPU1": topo_rows["GPU1"][-3]},
                                 "numa_affinity": {"GPU0": topo_rows["GPU0"][-2], "GPU1": topo_rows["GPU1"][-2]},
                                 "nics": {}},
                    "p2p": {"GPU0~GPU1": {"read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK"}},
                    "sysfs": {"0000:19:00.0": {"current_link_speed": "32.0 GT/s PCIe", "current_link_width": 16,
                                               "max_link_speed": "32.0 GT/s PCIe", "max_link_width": 16,
                                               "acs_ctl": "SrcValid- ReqRedir- CmpltRedir-"}}}),
        "packages": ok({"interpreter": "/opt/venv/bin/python", "packages": packages, "duplicates": {}, "conda": None}),
        "kernels": ok({"files": files, "modified_in_place": {}, "jit_caches": {
            "triton": {"path": "/root/.triton/cache", "files": 0, "bytes": 0,
                       "listing_digest": hashlib.sha256(b"").hexdigest()}}}),
        # torch build facts of the recorded vLLM B200 report (torch 2.7.0+cu128, NCCL 2.26.2).
        "torch": ok({"version": "2.7.0+cu128", "git_version": None, "cuda_version": "12.8", "hip_version": None,
                     "cudnn_version": None, "nccl_version": "2.26.2", "deep": True, "cuda_available": True,
                     "device_count": 2, "devices": {}, "arch_list": ["sm_90", "sm_100"], "backends": {}, "config": {}}),
        "nccl": ok({"env": {"NCCL_CUMEM_ENABLE": "0"}, "conf_files": {},
                    "library": {"path": "/opt/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
                                "version": "2.26.2"},
                    "infiniband": {"mlx5_0": {"ports": {"1": {"state": "ACTIVE", "rate": "400 Gb/sec (4X NDR)",
                                                              "link_layer": "InfiniBand"}}}},
                    "net": {"eth0": {"mtu": 9000, "speed_mbps": 100000, "operstate": "up"}}}),
        # CPU and NUMA of the recorded vLLM B200 report; THP and swappiness read on the build machine. The boot
        # id is made up: the build machine's own identifies it.
        "system": ok({"os": {"id": "ubuntu", "version_id": "22.04", "pretty_name": "Ubuntu 22.04.5 LTS"},
                      "kernel": {"release": py["platform"]["release"], "version": None},
                      "boot_id": "5d0c6a1e-7f3b-4c2a-9e84-0b6f2d9a1c37", "uptime_s": 86400,
                      "cpu": {"model": "INTEL(R) XEON(R) PLATINUM 8570", "sockets": 2, "cores": 112, "threads": 224,
                              "smt_active": True},
                      "cpufreq": {"driver": "intel_pstate", "governors": {"performance": 224}, "min_mhz": 800,
                                  "max_mhz": 4000},
                      "isolcpus": None, "nohz_full": None,
                      "numa": {"nodes": {"0": {"cpus": "0-27,112-139"}, "1": {"cpus": "28-55,140-167"},
                                         "2": {"cpus": "56-83,168-195"}, "3": {"cpus": "84-111,196-223"}},
                               "balancing": int(Path("/proc/sys/kernel/numa_balancing").read_text())},
                      "thp": {"enabled": re.search(r"\[(\w+)\]", Path("/sys/kernel/mm/transparent_hugepage/enabled")
                                                   .read_text()).group(1),
                              "defrag": re.search(r"\[([\w+]+)\]", Path("/sys/kernel/mm/transparent_hugepage/defrag")
                                                  .read_text()).group(1)},
                      "hugepages": {"total": 0, "size_kib": 2048},
                      "memory": {"total_kib": 2113388544, "available_kib": 2000000000}, "swap": {"total_kib": 0},
                      "swappiness": int(Path("/proc/sys/vm/swappiness").read_text()), "affinity": "0-223",
                      "cgroup": {"version": 2, "cpu_quota": "max 100000", "memory_limit_bytes": None},
                      "container": {"kind": "docker"}, "memlock_limit": "unlimited",
                      "iommu": {"mode": "passthrough"},
                      "modules": {"nvidia": {"version": driver}, "mlx5_core": {"version": "24.07-0.6.1"}}}),
        "process": ok({"processes": {}}),
    }
    doc = {"schema": 1, "created_at": "2026-11-30T02:14:44.197960Z", "tool": {"name": "driftcheck", "version": "0.1.0"},
           "origin": "probed", "host": {"kind": "local", "name": "gpu-node", "python": "/opt/venv/bin/python"},
           "label": None, "probes": probes}
    out = Path(__file__).resolve().parent / "base.json"
    out.write_text(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
