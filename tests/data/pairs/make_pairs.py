"""Regenerate the snapshot pairs of tests/data/pairs from base.json (see README.md).

Run from the repository root: `python tests/data/pairs/make_pairs.py`. Every case is base.json as
a.json and an edit of it as b.json with exactly the change its rule is about; expected.json names
the rule(s) expected on top (or as notes, for the traps) and their category, and the rules whose
changes the top cause took in (`merged`).
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
Doc = dict[str, Any]

G0 = "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa"
G1 = "GPU-47daa2ad-a218-6286-252b-af45f0dfaf00"


def data(doc: Doc, probe: str) -> Doc:
    return doc["probes"][probe]["data"]


def gpu(doc: Doc, key: str = G0) -> Doc:
    return data(doc, "gpu")["gpus"][key]


def link(doc: Doc, key: str = G0) -> Doc:
    return data(doc, "pcie")["gpus"][key]["link"]


def env(doc: Doc) -> Doc:
    return data(doc, "env")["vars"]


def pkgs(doc: Doc) -> Doc:
    return data(doc, "packages")["packages"]


def system(doc: Doc) -> Doc:
    return data(doc, "system")


def busy(doc: Doc) -> None:
    """Both GPUs read under load (the base is idle, as the nvidia-smi capture it comes from)."""
    for key in (G0, G1):
        gpu(doc, key)["clock_event_reasons"] = [r for r in gpu(doc, key)["clock_event_reasons"] if r != "idle"]
        gpu(doc, key)["utilization"]["gpu_pct"] = 97
        gpu(doc, key)["clocks"]["sm_mhz"] = 1980
        gpu(doc, key)["clocks"]["graphics_mhz"] = 1980


def both_gpus(fn: Callable[[Doc], None]) -> Callable[[Doc, Doc], None]:
    return lambda a, b: fn(b)


Edit = Callable[[Doc, Doc], None]  # (a, b): a may be prepared (e.g. set busy), b gets the change


def only_b(fn: Callable[[Doc], None]) -> Edit:
    return lambda a, b: fn(b)


def set_at(path: str, value: Any) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        node = b
        parts = [part.replace("~2F", "/") for part in path.split("/")]
        for part in parts[:-1]:
            node = node[part]
        node[parts[-1]] = value
    return edit


def delete_at(path: str) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        node = b
        parts = [part.replace("~2F", "/") for part in path.split("/")]
        for part in parts[:-1]:
            node = node[part]
        del node[parts[-1]]
    return edit


def prepared(prepare: Callable[[Doc], None], edit: Edit) -> Edit:
    def both(a: Doc, b: Doc) -> None:
        prepare(a)
        prepare(b)
        edit(a, b)
    return both


def do(*edits: Edit) -> Edit:
    def all_edits(a: Doc, b: Doc) -> None:
        for edit in edits:
            edit(a, b)
    return all_edits


P = "probes"
GP = f"{P}/gpu/data/gpus/{G0}"
PC = f"{P}/pcie/data/gpus/{G0}/link"
SY = f"{P}/system/data"
EV = f"{P}/env/data/vars"
PK = f"{P}/packages/data/packages"
KF = f"{P}/kernels/data/files"
TORCH_C = "torch:torch/_C.cpython-311-x86_64-linux-gnu.so"


def _failed(probe: str) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        b["probes"][probe] = {"status": "error", "data": None, "duration_s": 0.2,
                              "error": {"type": "RuntimeError", "message": "nvidia-smi failed"}}
    return edit


def _kernel_rebuilt(a: Doc, b: Doc) -> None:
    entry = b["probes"]["kernels"]["data"]["files"][TORCH_C]
    entry["sha256"] = "0" * 8 + entry["sha256"][8:]


def _gpu_process(a: Doc, b: Doc) -> None:
    gpu(b)["processes"]["48213"] = {"pid": 48213, "name": "python3", "type": "C", "used_memory_mib": 30412}


def _gpu_removed(a: Doc, b: Doc) -> None:
    del data(b, "gpu")["gpus"][G1]


def _nvlink_counted(doc: Doc) -> None:
    """NVLink 0 of GPU 0 to GPU 1, with the error counters NVML reads, none counted yet."""
    gpu(doc)["nvlink"] = {"0": {"state": "Active", "version": 4, "remote_pci_bus_id": gpu(doc, G1)["pci_bus_id"],
                                "errors": {"replay": 0, "recovery": 0, "crc_flit": 0, "crc_data": 0}}}


def _board_swapped(a: Doc, b: Doc) -> None:
    """Another H100 board in GPU 0's slot: the UUID and serial of GPU 0 of a recorded 8x H100 SXM `nvidia-smi -a`
    (thamada/gls H100SXMx8_smi.py, tests/data/nvidia-real), the bus id and everything else kept."""
    other = "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1"
    for probe in ("gpu", "pcie"):
        gpus = data(b, probe)["gpus"]
        gpus[other] = gpus.pop(G0)
    gpu(b, other).update(uuid=other, serial="1654423001593")


def _reboot(a: Doc, b: Doc) -> None:
    system(b)["boot_id"] = "3f1d6a0e-7c55-4b7e-9d8e-5a2f0c9b1e44"


CASES: dict[str, tuple[Edit, list[str], str]] = {
    # name: (edit, expected top rule ids (all must be present in this order at the top), category)
    "probe-outcome-changed": (_failed("gpu"), ["probe-outcome-changed"], "other"),
    "probe-missing": (delete_at(f"{P}/torch"), ["note:probe-missing"], "other"),
    "gpu-persistence-off": (set_at(f"{GP}/persistence_mode", False), ["gpu-persistence-off"], "mig_ecc_persistence"),
    "gpu-persistence-off-after-reboot": (do(set_at(f"{GP}/persistence_mode", False), _reboot),
                                         ["gpu-persistence-off", "note:rebooted"], "mig_ecc_persistence"),
    "gpu-persistence-on": (prepared(lambda d: gpu(d).update(persistence_mode=False),
                                   set_at(f"{GP}/persistence_mode", True)), ["gpu-persistence-on"], "mig_ecc_persistence"),
    "gpu-ecc-mode": (set_at(f"{GP}/ecc/mode_current", "Disabled"), ["gpu-ecc-mode"], "mig_ecc_persistence"),
    "gpu-ecc-pending": (set_at(f"{GP}/ecc/mode_pending", "Disabled"), ["gpu-ecc-pending"], "mig_ecc_persistence"),
    "gpu-mig-mode": (set_at(f"{GP}/mig/mode_current", "Enabled"), ["gpu-mig-mode"], "mig_ecc_persistence"),
    "gpu-mig-instances": (set_at(f"{GP}/mig/instances", {"1": {"profile": "MIG 3g.40gb"}}),
                          ["gpu-mig-instances"], "mig_ecc_persistence"),
    # A request lowered moves the enforced limit with it: one cause, the request's.
    "gpu-power-limit-lowered": (do(set_at(f"{GP}/power/limit_w", 500.0), set_at(f"{GP}/power/enforced_limit_w", 500.0)),
                                ["gpu-power-limit-lowered", "merged:gpu-enforced-power-limit-lowered"],
                                "gpu_clock_power"),
    # The enforced limit alone: a cap set elsewhere than by -pl (module or system limit, BMC).
    "gpu-enforced-power-limit-lowered": (set_at(f"{GP}/power/enforced_limit_w", 500.0),
                                         ["gpu-enforced-power-limit-lowered"], "gpu_clock_power"),
    "gpu-enforced-power-limit-raised": (prepared(lambda d: gpu(d)["power"].update(enforced_limit_w=500.0),
                                                 set_at(f"{GP}/power/enforced_limit_w", 700.0)),
                                        ["gpu-enforced-power-limit-raised"], "gpu_clock_power"),
    "gpu-power-limit-raised": (prepared(lambda d: gpu(d)["power"].update(limit_w=500.0),
                                       set_at(f"{GP}/power/limit_w", 700.0)), ["gpu-power-limit-raised"], "gpu_clock_power"),
    "gpu-default-power-limit": (set_at(f"{GP}/power/default_limit_w", 350.0), ["gpu-default-power-limit"],
                                "hardware_change"),
    # A lock shows only as a clock event reason (no source reads the locked range).
    "gpu-locked-clocks": (prepared(busy, lambda a, b: gpu(b)["clock_event_reasons"].append("applications_clocks_setting")),
                          ["gpu-locked-clocks"], "gpu_clock_power"),
    "gpu-clocks-unlocked": (prepared(lambda d: (busy(d), gpu(d)["clock_event_reasons"].append("applications_clocks_setting")),
                                     lambda a, b: gpu(b)["clock_event_reasons"].remove("applications_clocks_setting")),
                            ["gpu-clocks-unlocked"], "gpu_clock_power"),
    "gpu-application-clocks": (set_at(f"{GP}/application_clocks/graphics_mhz", 1755),
                               ["gpu-application-clocks"], "gpu_clock_power"),
    "gpu-application-clocks-small": (set_at(f"{GP}/application_clocks/graphics_mhz", 1965),
                                     ["note:gpu-application-clocks-small"], "gpu_clock_power"),
    "gpu-max-clocks": (set_at(f"{GP}/max_clocks/sm_mhz", 1755), ["gpu-max-clocks"], "hardware_change"),
    "gpu-power-cap-throttle": (prepared(busy, lambda a, b: gpu(b)["clock_event_reasons"].append("sw_power_cap")),
                               ["note:gpu-power-cap-throttle"], "gpu_clock_power"),  # same limit on A and B
    "gpu-power-brake": (prepared(lambda d: gpu(d)["clock_event_reasons"].remove("hw_power_brake_slowdown"),
                                 lambda a, b: gpu(b)["clock_event_reasons"].append("hw_power_brake_slowdown")),
                        ["gpu-power-brake"], "gpu_clock_power"),
    "gpu-sm-clock-at-idle": (lambda a, b: (busy(b), gpu(b, G1).update(gpu(a, G1))),
                             ["note:gpu-sm-clock-at-idle"], "gpu_clock_power"),
    "gpu-clock-under-load": (prepared(busy, set_at(f"{GP}/clocks/sm_mhz", 1410)), ["note:gpu-clock-under-load"],
                             "gpu_clock_power"),
    "gpu-pstate-at-idle": (set_at(f"{GP}/performance_state", "P8"), ["note:gpu-pstate-at-idle"], "gpu_clock_power"),
    "gpu-pstate-under-load": (prepared(busy, set_at(f"{GP}/performance_state", "P2")), ["note:gpu-pstate-under-load"],
                              "gpu_clock_power"),
    "gpu-hw-thermal-slowdown": (prepared(busy, lambda a, b: gpu(b)["clock_event_reasons"].append("hw_thermal_slowdown")),
                                ["gpu-hw-thermal-slowdown"], "thermal"),
    "gpu-sw-thermal-slowdown": (prepared(busy, lambda a, b: gpu(b)["clock_event_reasons"].append("sw_thermal_slowdown")),
                                ["gpu-sw-thermal-slowdown"], "thermal"),
    "gpu-temperature-at-idle": (set_at(f"{GP}/temperature/gpu_c", 71), ["note:gpu-temperature-at-idle"], "thermal"),
    "gpu-temperature-rise": (prepared(busy, set_at(f"{GP}/temperature/gpu_c", 83)), ["note:gpu-temperature-rise"],
                             "thermal"),
    "gpu-temperature-small-is-ignored": (prepared(busy, set_at(f"{GP}/temperature/gpu_c", 33)), [], "thermal"),
    "gpu-thermal-thresholds": (set_at(f"{GP}/temperature/slowdown_c", 87), ["gpu-thermal-thresholds"], "thermal"),
    "gpu-fan-speed": (set_at(f"{GP}/fan_speed_pct", 100), ["note:gpu-fan-speed"], "thermal"),
    "pcie-width-narrower": (set_at(f"{PC}/width_current", 8), ["pcie-width-narrower"], "pcie_link"),
    "pcie-gen-drop-at-idle": (set_at(f"{PC}/gen_current", 1), ["note:pcie-gen-drop-at-idle"], "pcie_link"),
    "pcie-gen-drop-under-load": (prepared(busy, set_at(f"{PC}/gen_current", 3)), ["note:pcie-gen-drop-under-load"],
                                 "pcie_link"),
    "pcie-link-max-changed": (set_at(f"{PC}/gen_max", 4), ["pcie-link-max-changed"], "hardware_change"),
    "pcie-replay-errors": (set_at(f"{P}/pcie/data/gpus/{G0}/replay_counter", 4512), ["pcie-replay-errors"],
                           "pcie_link"),
    "pcie-sysfs-width": (set_at(f"{P}/pcie/data/sysfs/0000:19:00.0/current_link_width", 8), ["pcie-sysfs-width"],
                         "pcie_link"),
    "pcie-acs-changed": (set_at(f"{P}/pcie/data/sysfs/0000:19:00.0/acs_ctl", "SrcValid+ ReqRedir+ CmpltRedir+"),
                         ["pcie-acs-changed"], "p2p_topology"),
    "topology-pair-level": (set_at(f"{P}/pcie/data/topology/pairs/GPU0~GPU1", "SYS"), ["topology-pair-level"],
                            "p2p_topology"),
    "p2p-capability": (set_at(f"{P}/pcie/data/p2p/GPU0~GPU1/read", "CNS"), ["p2p-capability"], "p2p_topology"),
    "nvlink-state": (set_at(f"{GP}/nvlink/0/state", "Inactive"), ["nvlink-state"], "p2p_topology"),
    "fabric-state": (set_at(f"{GP}/fabric/state", "In Progress"), ["fabric-state"], "p2p_topology"),
    "gpu-numa-affinity": (set_at(f"{P}/pcie/data/gpus/{G0}/numa_node", 1), ["gpu-numa-affinity"], "numa"),
    "numa-balancing": (set_at(f"{SY}/numa/balancing", 1), ["numa-balancing"], "numa"),
    "numa-nodes": (delete_at(f"{SY}/numa/nodes/3"), ["numa-nodes"], "numa"),
    "cpu-governor": (set_at(f"{SY}/cpufreq/governors", None), ["cpu-governor"], "cpu_governor"),
    "cpu-governor-count": (lambda a, b: system(b)["cpufreq"]["governors"].update(performance=0, powersave=224),
                           ["cpu-governor-count"], "cpu_governor"),
    "cpu-frequency-range": (set_at(f"{SY}/cpufreq/max_mhz", 2100), ["cpu-frequency-range"], "cpu_governor"),
    "cpu-smt": (set_at(f"{SY}/cpu/smt_active", False), ["cpu-smt"], "cpu_governor"),
    "cpu-isolation": (set_at(f"{SY}/isolcpus", "2-27"), ["cpu-isolation"], "cpu_governor"),
    "thp-enabled": (set_at(f"{SY}/thp/enabled", "never"), ["thp-enabled"], "thp_memory"),
    "hugepages": (set_at(f"{SY}/hugepages/total", 1024), ["hugepages"], "thp_memory"),
    "swappiness": (set_at(f"{SY}/swappiness", 10), ["swappiness"], "thp_memory"),
    "memory-total": (set_at(f"{SY}/memory/total_kib", 1056694272), ["memory-total"], "hardware_change"),
    "cgroup-cpu-quota": (prepared(lambda d: system(d)["cgroup"].update(cpu_quota_cores="max"),
                                  set_at(f"{SY}/cgroup/cpu_quota_cores", 8.0)), ["cgroup-cpu-quota"], "container_limits"),
    "cgroup-memory-limit": (set_at(f"{SY}/cgroup/memory_limit_bytes", 68719476736), ["cgroup-memory-limit"],
                            "container_limits"),
    # In the shapes the system probe writes (docs/data-shapes.md), not base.json's older ones.
    "cpu-affinity": (prepared(lambda d: system(d).update(affinity={"cpus": "0-223", "mems": "0"}),
                              set_at(f"{SY}/affinity/cpus", "0-7")), ["cpu-affinity"], "container_limits"),
    # NVLink turned off by a module option (NVreg_NvLinkDisable; the names as nv-procfs.c prints them).
    "nvidia-module-option": (prepared(lambda d: system(d).update(nvidia_params={"NvLinkDisable": 0,
                                                                                "EnableStreamMemOPs": 0}),
                                      lambda a, b: system(b)["nvidia_params"].update(NvLinkDisable=1)),
                             ["nvidia-module-option"], "driver_version"),
    "memlock-limit": (prepared(lambda d: system(d).update(memlock_limit_bytes="unlimited"),
                               set_at(f"{SY}/memlock_limit_bytes", 65536)), ["memlock-limit"], "container_limits"),
    "container-kind": (set_at(f"{SY}/container/kind", "podman"), ["container-kind"], "container_limits"),
    "gpu-other-process": (_gpu_process, ["gpu-other-process"], "gpu_contention"),
    "gpu-process-gone": (lambda a, b: (_gpu_process(b, a)), ["gpu-process-gone"], "gpu_contention"),
    "gpu-compute-mode": (set_at(f"{GP}/compute_mode", "Exclusive_Process"), ["gpu-compute-mode"], "gpu_contention"),
    "host-process-added": (set_at(f"{P}/process/data/processes/sglang.launch_server", {"pid": 7311, "threads": 212}),
                           ["host-process-added"], "gpu_contention"),
    "driver-version": (set_at(f"{P}/gpu/data/driver_version", "535.183.01"), ["driver-version"], "driver_version"),
    "driver-module-version": (set_at(f"{SY}/modules/nvidia/version", "535.183.01"), ["driver-module-version"],
                              "driver_version"),
    "cuda-driver-version": (set_at(f"{P}/gpu/data/cuda_driver_version", "12.4"), ["cuda-driver-version"],
                            "cuda_version"),
    "torch-cuda-version": (set_at(f"{P}/torch/data/cuda_version", "12.6"), ["torch-cuda-version"], "cuda_version"),
    "torch-nccl-version": (set_at(f"{P}/torch/data/nccl_version", "2.21.5"), ["torch-nccl-version"], "nccl_env"),
    "torch-cudnn-version": (prepared(lambda d: data(d, "torch").update(cudnn_version="9.8.0"),
                                     set_at(f"{P}/torch/data/cudnn_version", "9.1.0")),
                            ["torch-cudnn-version"], "cuda_version"),
    "torch-git-version": (prepared(lambda d: data(d, "torch").update(git_version="e2d141dbde55c2a4370fac5165b0561b6af4798b"),
                                   set_at(f"{P}/torch/data/git_version", "0982a4eee31c5c58e1c3a6ef1b7c7cd7f5a3ac04")),
                          ["torch-git-version"], "package_binary"),
    "nccl-library-path": (set_at(f"{P}/nccl/data/library/path", "/usr/lib/x86_64-linux-gnu/libnccl.so.2"),
                          ["nccl-library-path"], "nccl_env"),
    "kernel-rebuilt-same-version": (_kernel_rebuilt, ["kernel-rebuilt-same-version"], "package_binary"),
    "kernel-file-added": (set_at(f"{KF}/torch:torch~2Flib~2Flibextra_kernels.so",
                                 {"path": "torch/lib/libextra_kernels.so", "size_bytes": 1024, "sha256": "ab" * 32,
                                  "record_match": None}), ["kernel-file-added"], "package_binary"),
    "system-library-changed": (set_at(f"{KF}/system:~2Fusr~2Flib~2Fx86_64-linux-gnu~2Flibcuda.so.1/sha256", "cd" * 32),
                               ["system-library-changed"], "package_binary"),
    "modified-in-place": (set_at(f"{P}/kernels/data/modified_in_place/torch", ["torch/_C.cpython-311-x86_64-linux-gnu.so"]),
                          ["modified-in-place"], "package_binary"),
    "package-build-changed": (set_at(f"{PK}/pyyaml/wheel_tags", ["cp311-cp311-linux_x86_64"]),
                              ["package-build-changed"], "package_binary"),
    "jit-cache-changed": (set_at(f"{P}/kernels/data/jit_caches/triton/listing_digest", "ef" * 32),
                          ["jit-cache-changed"], "package_binary"),
    "package-downgraded": (set_at(f"{PK}/deepdiff/version", "8.6.1"), ["package-downgraded"], "package_version"),
    "package-upgraded": (set_at(f"{PK}/deepdiff/version", "9.2.0"), ["package-upgraded"], "package_version"),
    # A new version comes as a new build: one cause, told by the version change.
    "package-build-follows-version": (do(set_at(f"{PK}/pyyaml/version", "6.0.5"),
                                         set_at(f"{PK}/pyyaml/wheel_tags", ["cp311-cp311-manylinux_2_28_x86_64"])),
                                      ["package-upgraded", "merged:package-build-follows-version"],
                                      "package_version"),
    "package-local-build": (set_at(f"{PK}/torch/version", "2.13.0+cu128"), ["package-local-build"], "package_binary"),
    "package-version-changed": (prepared(lambda d: pkgs(d)["deepdiff"].update(version="main-a491d6f"),
                                         set_at(f"{PK}/deepdiff/version", "main-b1c1fe3")),
                                ["package-version-changed"], "package_version"),
    "package-added": (set_at(f"{PK}/flashinfer-python", {"name": "flashinfer-python", "version": "0.6.4",
                                                         "location": "/opt/venv/lib/python3.11/site-packages",
                                                         "installer": "pip", "editable": False, "direct_url": None,
                                                         "wheel_tags": ["py3-none-any"], "build_id": None,
                                                         "compiled_files": 0}),
                      ["package-added"], "package_version"),
    "package-removed": (delete_at(f"{PK}/deepdiff"), ["package-removed"], "package_version"),
    "package-duplicates": (set_at(f"{P}/packages/data/duplicates/torch",
                                  [{"version": "2.13.0+cpu", "location": "/opt/venv/lib/python3.11/site-packages"},
                                   {"version": "2.7.0", "location": "/usr/local/lib/python3.11/dist-packages"}]),
                           ["package-duplicates"], "package_version"),
    "torch-version": (set_at(f"{P}/torch/data/version", "2.13.1+cpu"), ["torch-version"], "package_version"),
    "torch-build-config": (set_at(f"{P}/torch/data/arch_list", ["sm_90"]), ["torch-build-config"], "package_version"),
    "python-version": (set_at(f"{P}/python/data/version", "3.11.9"), ["python-version"], "package_version"),
    "python-interpreter": (set_at(f"{P}/python/data/executable", "/usr/bin/python3"), ["python-interpreter"], "other"),
    "nccl-env-added": (set_at(f"{EV}/NCCL_P2P_DISABLE", "1"), ["nccl-env-added"], "nccl_env"),
    "nccl-env-removed": (delete_at(f"{EV}/NCCL_CUMEM_ENABLE"), ["nccl-env-removed"], "nccl_env"),
    "nccl-env-changed": (set_at(f"{EV}/NCCL_CUMEM_ENABLE", "1"), ["nccl-env-changed"], "nccl_env"),
    "nccl-conf-file": (set_at(f"{P}/nccl/data/conf_files/~2Fetc~2Fnccl.conf", {"NCCL_IB_DISABLE": "1"}),
                       ["nccl-conf-file"], "nccl_env"),
    "infiniband-port": (set_at(f"{P}/nccl/data/infiniband/mlx5_0/ports/1/state", "DOWN"), ["infiniband-port"],
                        "hardware_change"),
    "network-interface": (set_at(f"{P}/nccl/data/net/eth0/mtu", 1500), ["network-interface"], "other"),
    "env-visible-devices": (set_at(f"{EV}/CUDA_VISIBLE_DEVICES", "1"), ["env-visible-devices"], "env_var_other"),
    "env-thread-count": (set_at(f"{EV}/OMP_NUM_THREADS", "1"), ["env-thread-count"], "env_var_other"),
    "env-loader": (set_at(f"{EV}/LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64"), ["env-loader"], "env_var_other"),
    "env-performance-family": (set_at(f"{EV}/CUDA_MODULE_LOADING", "EAGER"), ["env-performance-family"],
                               "env_var_other"),
    "env-other": (set_at(f"{EV}/LANG", "en_US.UTF-8"), ["env-other"], "env_var_other"),
    "rebooted": (_reboot, ["note:rebooted"], "kernel_os"),
    "kernel-release": (set_at(f"{SY}/kernel/release", "6.8.0-45-generic"), ["kernel-release"], "kernel_os"),
    "os-release": (set_at(f"{SY}/os/version_id", "24.04"), ["os-release"], "kernel_os"),
    "iommu": (set_at(f"{SY}/iommu/mode", "translated"), ["iommu"], "kernel_os"),
    "kernel-module": (set_at(f"{SY}/modules/mlx5_core/version", "24.10-1.1.4"), ["kernel-module"], "kernel_os"),
    "gpudirect-rdma-module": (prepared(lambda d: system(d)["modules"].update(nv_peer_mem={"version": "1.3-0"}),
                                       do(delete_at(f"{SY}/modules/nv_peer_mem"),
                                          set_at(f"{SY}/modules/nvidia_peermem", {"version": "535.161.08"}))),
                              ["gpudirect-rdma-module"], "p2p_topology"),
    "platform-libc": (set_at(f"{P}/python/data/platform/libc", "glibc 2.39"), ["platform-libc"], "kernel_os"),
    "gpu-added-or-removed": (_gpu_removed, ["gpu-added-or-removed"], "hardware_change"),
    "gpu-count": (set_at(f"{P}/gpu/data/gpu_count", 1), ["gpu-count"], "hardware_change"),
    "gpu-identity": (set_at(f"{GP}/vbios_version", "96.00.89.00.01"), ["gpu-identity"], "hardware_change"),
    # Five Xid 119 (GSP RPC timeout) lines for one GPU: what the recorded H100 kernel log of
    # tests/data/nvidia-real/kernel-log holds.
    "gpu-xid-logged": (prepared(lambda d: gpu(d).update(xid_since_boot={}),
                                lambda a, b: gpu(b)["xid_since_boot"].update({"119": 5})),
                       ["gpu-xid-logged"], "hardware_change"),
    "nvlink-errors": (prepared(_nvlink_counted, lambda a, b: gpu(b)["nvlink"]["0"]["errors"].update(replay=12)),
                      ["note:nvlink-errors"], "p2p_topology"),
    "gpu-board-replaced": (_board_swapped, ["gpu-board-replaced", "merged:gpu-identity"], "hardware_change"),
    "gpu-memory-errors": (set_at(f"{GP}/remapped_rows/pending", True), ["gpu-memory-errors"], "hardware_change"),
    "gpu-memory-total": (set_at(f"{GP}/memory/total_mib", 40960), ["gpu-memory-total"], "hardware_change"),
    "cpu-model": (set_at(f"{SY}/cpu/model", "INTEL(R) XEON(R) PLATINUM 8480+"), ["cpu-model"], "hardware_change"),
    "other-change": (set_at(f"{P}/gpu/data/gpus/{G0}/compute_capability_note", "x"), ["other-change"], "other"),
    "ignored-instant-readings": (set_at(f"{GP}/power/draw_w", 412.3), [], "gpu_clock_power"),
}

# conda's probe data is null on a pip venv, so a conda mapping appearing is a whole-value change
# that only the catch-all claims; the conda-package rule fires on changes inside an existing mapping.
CASES["conda-package-changed"] = (
    prepared(lambda d: data(d, "packages").update(conda={"mkl": {"version": "2023.1", "build": "h213fc3f_46",
                                                                 "channel": "defaults"}}),
             set_at(f"{P}/packages/data/conda/mkl/version", "2024.0")),
    ["conda-package"], "package_version")


# ---- server probe: the engine's own report, from recorded SGLang / vLLM answers (tests/data/servers) -----
SERVERS = HERE.parent / "servers"
SV = f"{P}/server/data"
SA = f"{SV}/server_args"
RANK = f"{SV}/internal_states/0"
VC = f"{SV}/vllm_config/cache_config_info/0"


def _server(scenario: str) -> Callable[[Doc], None]:
    """Both sides carry the server probe as `describe` reads the recorded answers of `scenario`."""
    from driftcheck.serving.engine import describe

    replies = {path: {"status": 200, "body": (SERVERS / scenario / name).read_text("utf-8"), "server": "uvicorn"}
               for name, path in (("get_server_info.json", "/get_server_info"), ("get_model_info.json",
                                  "/get_model_info"), ("version.json", "/version"), ("metrics.txt", "/metrics"))
               if (SERVERS / scenario / name).exists()}
    described = describe({"url": "http://127.0.0.1:30000", "replies": replies})

    def add(doc: Doc) -> None:
        doc["probes"]["server"] = {"status": "ok", "data": copy.deepcopy(described), "error": None,
                                   "duration_s": 0.1}
    return add


def _sglang(edit: Edit, *prepare: Callable[[Doc], None]) -> Edit:
    def both(doc: Doc) -> None:
        _server("sglang-docs-native-api")(doc)
        for step in prepare:
            step(doc)
    return prepared(both, edit)


def _vllm(edit: Edit, *prepare: Callable[[Doc], None]) -> Edit:
    def both(doc: Doc) -> None:
        _server("vllm-pr3100")(doc)
        for step in prepare:
            step(doc)
    return prepared(both, edit)


def _args(**values: Any) -> Callable[[Doc], None]:
    return lambda doc: data(doc, "server")["server_args"].update(values)


def _release(version: str, **values: Any) -> Callable[[Doc], None]:
    """Both sides run SGLang `version` with these arguments."""
    def prepare(doc: Doc) -> None:
        data(doc, "server")["version"] = version
        data(doc, "server")["server_args"].update(copy.deepcopy(values))
    return prepare


def _vllm_args(**values: Any) -> Callable[[Doc], None]:
    """Both sides are vLLM 0.34.0 answering dev-mode /server_info, read as engine arguments."""
    def prepare(doc: Doc) -> None:
        data(doc, "server")["version"] = "0.34.0"
        data(doc, "server")["server_args"] = copy.deepcopy(values)
    return prepare


CASES.update({
    "server-engine-changed": (_sglang(set_at(f"{SV}/engine", "vllm")), ["server-engine-changed"], "other"),
    "server-model-served": (_sglang(set_at(f"{SV}/models/Qwen~2FQwen3-8B", {"owned_by": "sglang"})),
                            ["server-model-served"], "other"),
    "server-model-max-len": (_sglang(set_at(f"{SV}/models/m/max_model_len", 8192),
                                     lambda d: data(d, "server")["models"].update(m={"max_model_len": 32768})),
                             ["server-model-max-len"], "other"),
    "server-version": (_sglang(set_at(f"{SV}/version", "0.5.6")), ["server-version"], "package_version"),
    "server-speculative-off-on-a": (_sglang(set_at(f"{SA}/speculative_algorithm", "EAGLE")),
                                    ["server-speculative-off-on-a"], "other"),
    "server-speculative-algorithm": (_sglang(set_at(f"{SA}/speculative_algorithm", "EAGLE3"),
                                             _args(speculative_algorithm="EAGLE")),
                                     ["server-speculative-algorithm"], "other"),
    "server-speculative-num-steps": (_sglang(set_at(f"{SA}/speculative_num_steps", 5), _args(speculative_num_steps=3)),
                                     ["server-speculative-num-steps"], "other"),
    "server-speculative-eagle-topk": (_sglang(set_at(f"{SA}/speculative_eagle_topk", 4),
                                              _args(speculative_eagle_topk=1)),
                                      ["server-speculative-eagle-topk"], "other"),
    "server-speculative-draft-tokens": (_sglang(set_at(f"{SA}/speculative_num_draft_tokens", 8),
                                                _args(speculative_num_draft_tokens=4)),
                                        ["server-speculative-draft-tokens"], "other"),
    "server-cuda-graph-disabled": (_sglang(set_at(f"{SA}/disable_cuda_graph", True)),
                                   ["server-cuda-graph-disabled"], "other"),
    "server-cuda-graph-enabled": (_sglang(set_at(f"{SA}/disable_cuda_graph", False), _args(disable_cuda_graph=True)),
                                  ["server-cuda-graph-enabled"], "other"),
    "server-cuda-graph-max-bs": (_sglang(set_at(f"{SA}/cuda_graph_max_bs", 160)), ["server-cuda-graph-max-bs"], "other"),
    "server-cuda-graph-max-bs-lowered": (_sglang(set_at(f"{SA}/cuda_graph_max_bs", 4), _args(cuda_graph_max_bs=160)),
                                         ["server-cuda-graph-max-bs-lowered"], "other"),
    "server-cuda-graph-bs": (_sglang(set_at(f"{SA}/cuda_graph_bs", [1, 2, 4, 8])), ["server-cuda-graph-bs"], "other"),
    "server-torch-compile-on": (_sglang(set_at(f"{SA}/enable_torch_compile", True)),
                                ["server-torch-compile-on"], "other"),
    "server-torch-compile-off": (_sglang(set_at(f"{SA}/enable_torch_compile", False),
                                         _args(enable_torch_compile=True)), ["server-torch-compile-off"], "other"),
    "server-torch-compile-max-bs": (_sglang(set_at(f"{SA}/torch_compile_max_bs", 16)),
                                    ["server-torch-compile-max-bs"], "other"),
    "server-attention-backend-default-on-a": (_sglang(set_at(f"{SA}/attention_backend", "triton"),
                                                      _args(attention_backend=None)),
                                              ["server-attention-backend-default-on-a"], "other"),
    "server-attention-backend": (_sglang(set_at(f"{SA}/attention_backend", "triton")),
                                 ["server-attention-backend"], "other"),
    "server-decode-prefill-attention-backend": (_sglang(set_at(f"{RANK}/resolved/decode_attention_backend",
                                                               "flashinfer")),
                                                ["server-decode-prefill-attention-backend"], "other"),
    "server-sampling-backend": (_sglang(set_at(f"{SA}/sampling_backend", "pytorch")),
                                ["server-sampling-backend"], "other"),
    "server-mem-fraction": (_sglang(set_at(f"{SA}/mem_fraction_static", 0.9)), ["server-mem-fraction"], "other"),
    "server-mem-fraction-lowered": (_sglang(set_at(f"{SA}/mem_fraction_static", 0.7)),
                                    ["server-mem-fraction-lowered"], "other"),
    "server-chunked-prefill": (_sglang(set_at(f"{SA}/chunked_prefill_size", 16384)), ["server-chunked-prefill"],
                               "other"),
    "server-chunked-prefill-lowered": (_sglang(set_at(f"{SA}/chunked_prefill_size", 4096)),
                                       ["server-chunked-prefill-lowered"], "other"),
    # -1 turns chunked prefill off: no smaller chunk, no direction
    "server-chunked-prefill-off": (_sglang(set_at(f"{SA}/chunked_prefill_size", -1)), ["server-chunked-prefill"],
                                   "other"),
    "server-max-running-requests": (_sglang(set_at(f"{SA}/max_running_requests", 256)),
                                    ["server-max-running-requests"], "other"),
    "server-max-running-requests-lowered": (_sglang(set_at(f"{SA}/max_running_requests", 64)),
                                            ["server-max-running-requests-lowered"], "other"),
    "server-max-total-tokens-lowered": (_sglang(set_at(f"{SA}/max_total_tokens", 10240)),
                                        ["server-max-total-tokens-lowered"], "other"),
    "server-schedule-policy": (_sglang(set_at(f"{SA}/schedule_policy", "lpm")), ["server-schedule-policy"], "other"),
    "server-radix-cache": (_sglang(set_at(f"{SA}/disable_radix_cache", False), _args(disable_radix_cache=True)),
                           ["server-radix-cache"], "other"),
    "server-prefix-cache-off": (_sglang(set_at(f"{SA}/disable_radix_cache", True)), ["server-prefix-cache-off"],
                                "other"),
    "server-tp-size": (_sglang(set_at(f"{SA}/tp_size", 2)), ["server-tp-size"], "other"),
    "server-dp-size": (_sglang(set_at(f"{SA}/dp_size", 2)), ["server-dp-size"], "other"),
    "server-ep-size": (_sglang(set_at(f"{SA}/ep_size", 8)), ["server-ep-size"], "other"),
    "server-pp-size": (_sglang(set_at(f"{SA}/pp_size", 2)), ["server-pp-size"], "other"),
    "server-quantization-none-on-a": (_sglang(set_at(f"{SA}/quantization", "fp8")),
                                      ["server-quantization-none-on-a"], "other"),
    "server-quantization": (_sglang(set_at(f"{SA}/quantization", "awq"), _args(quantization="fp8")),
                            ["server-quantization"], "other"),
    "server-kv-cache-dtype": (_sglang(set_at(f"{SA}/kv_cache_dtype", "fp8_e5m2")), ["server-kv-cache-dtype"], "other"),
    "server-dtype": (_sglang(set_at(f"{SA}/dtype", "bfloat16")), ["server-dtype"], "other"),
    "server-rank-resolved": (_sglang(set_at(f"{RANK}/resolved/pp_max_micro_batch_size", 64)),
                             ["server-rank-resolved"], "other"),
    "server-rank-memory": (_sglang(set_at(f"{RANK}/state/memory_usage/kvcache", 0.5)), ["server-rank-memory"], "other"),
    "server-rank-state": (_sglang(set_at(f"{RANK}/state/use_mla_backend", True)), ["server-rank-state"], "other"),
    "server-argument-other-release": (_sglang(set_at(f"{SA}/enable_new_scheduler", False)),
                                      ["note:server-argument-other-release"], "other"),
    "server-argument": (_sglang(set_at(f"{SA}/served_model_name", "qwen-small")), ["server-argument"], "other"),
    "server-vllm-gpu-memory-utilization": (_vllm(set_at(f"{VC}/gpu_memory_utilization", 0.95)),
                                           ["server-vllm-gpu-memory-utilization"], "other"),
    "server-vllm-gauge-memory-lowered": (_vllm(set_at(f"{VC}/gpu_memory_utilization", 0.8)),
                                         ["server-vllm-gauge-memory-lowered"], "other"),
    "server-vllm-kv-cache-dtype": (_vllm(set_at(f"{VC}/cache_dtype", "fp8")), ["server-vllm-kv-cache-dtype"], "other"),
    "server-vllm-block-size": (_vllm(set_at(f"{VC}/block_size", 32)), ["server-vllm-block-size"], "other"),
    "server-vllm-prefix-caching": (_vllm(set_at(f"{VC}/enable_prefix_caching", True),
                                         lambda d: data(d, "server")["vllm_config"]["cache_config_info"]["0"].update(
                                             enable_prefix_caching=False)),
                                   ["server-vllm-prefix-caching"], "other"),
    "server-vllm-gauge-prefix-cache-off": (_vllm(set_at(f"{VC}/enable_prefix_caching", False),
                                                 lambda d: data(d, "server")["vllm_config"]["cache_config_info"][
                                                     "0"].update(enable_prefix_caching=True)),
                                           ["server-vllm-gauge-prefix-cache-off"], "other"),
    "server-vllm-prefix-cache-off": (_vllm(set_at(f"{SA}/enable_prefix_caching", False),
                                           _vllm_args(enable_prefix_caching=True)),
                                     ["server-vllm-prefix-cache-off"], "other"),
    "server-vllm-async-scheduling-off": (_vllm(set_at(f"{SA}/async_scheduling", False),
                                               _vllm_args(async_scheduling=True)),
                                         ["server-vllm-async-scheduling-off"], "other"),
    "server-vllm-gpu-blocks": (_vllm(set_at(f"{VC}/num_gpu_blocks", 19000)), ["server-vllm-gpu-blocks"], "other"),
    # SGLang 0.5.23's fields (its parser's names, driftcheck/serving/engine_flags/sglang-0.5.23.json)
    "server-phase-cuda-graph-disabled": (_sglang(set_at(f"{SA}/disable_decode_cuda_graph", True),
                                                 _release("0.5.23", disable_decode_cuda_graph=False)),
                                         ["server-phase-cuda-graph-disabled"], "other"),
    "server-phase-cuda-graph-enabled": (_sglang(set_at(f"{SA}/disable_prefill_cuda_graph", False),
                                                _release("0.5.23", disable_prefill_cuda_graph=True)),
                                        ["server-phase-cuda-graph-enabled"], "other"),
    "server-phase-cuda-graph-backend-disabled": (_sglang(set_at(f"{SA}/cuda_graph_backend_decode", "disabled"),
                                                         _release("0.5.23", cuda_graph_backend_decode="full")),
                                                 ["server-phase-cuda-graph-backend-disabled"], "other"),
    # The flag's field and the resolved cuda_graph_config move together: one cause.
    "server-phase-cuda-graph-setting": (_sglang(do(set_at(f"{SA}/cuda_graph_max_bs_decode", 160),
                                                   set_at(f"{SA}/cuda_graph_config/decode/max_bs", 160)),
                                                _release("0.5.23", cuda_graph_max_bs_decode=4,
                                                         cuda_graph_config={"decode": {"max_bs": 4}})),
                                        ["server-phase-cuda-graph-setting"], "other"),
    "server-phase-cuda-graph-max-bs-lowered": (_sglang(do(set_at(f"{SA}/cuda_graph_max_bs_decode", 4),
                                                          set_at(f"{SA}/cuda_graph_config/decode/max_bs", 4)),
                                                       _release("0.5.23", cuda_graph_max_bs_decode=160,
                                                                cuda_graph_config={"decode": {"max_bs": 160}})),
                                               ["server-cuda-graph-max-bs-lowered"], "other"),
    "server-speculative-shape": (_sglang(set_at(f"{SA}/speculative_attention_mode", "decode"),
                                         _release("0.5.23", speculative_attention_mode="prefill")),
                                 ["server-speculative-shape"], "other"),
    "server-overlap-off": (_sglang(set_at(f"{SA}/disable_overlap_schedule", True), _release("0.5.23")),
                           ["server-overlap-off"], "other"),
    "server-custom-all-reduce-off": (_sglang(set_at(f"{SA}/disable_custom_all_reduce", True), _release("0.5.23")),
                                     ["server-custom-all-reduce-off"], "other"),
    "server-kernel-backend": (_sglang(set_at(f"{SA}/moe_runner_backend", "triton"), _release("0.5.23")),
                              ["server-kernel-backend"], "other"),
    "server-communication-setting": (_sglang(set_at(f"{SA}/enable_symm_mem", True),
                                             _release("0.5.23", enable_symm_mem=False)),
                                     ["server-communication-setting"], "other"),
    "server-symm-mem-off": (_sglang(set_at(f"{SA}/enable_symm_mem", False), _release("0.5.23", enable_symm_mem=True)),
                            ["server-symm-mem-off"], "other"),
    "server-capacity-setting": (_sglang(set_at(f"{SA}/page_size", 16), _release("0.5.23")),
                                ["server-capacity-setting"], "other"),
    # vLLM 0.34.0 in dev mode: its configuration as engine arguments
    "server-vllm-memory-lowered": (_vllm(set_at(f"{SA}/gpu_memory_utilization", 0.6),
                                         _vllm_args(gpu_memory_utilization=0.9)),
                                   ["server-vllm-memory-lowered"], "other"),
    "server-vllm-optimization-lowered": (_vllm(set_at(f"{SA}/optimization_level", 0), _vllm_args(optimization_level=2)),
                                         ["server-vllm-optimization-lowered"], "other"),
    "server-vllm-chunked-prefill-off": (_vllm(set_at(f"{SA}/enable_chunked_prefill", False),
                                              _vllm_args(enable_chunked_prefill=True)),
                                        ["server-vllm-chunked-prefill-off"], "other"),
    "server-vllm-eager": (_vllm(set_at(f"{SA}/enforce_eager", True), _vllm_args(enforce_eager=False)),
                          ["server-vllm-eager"], "other"),
    "server-vllm-setting": (_vllm(set_at(f"{SA}/tensor_parallel_size", 8), _vllm_args(tensor_parallel_size=4)),
                            ["server-vllm-setting"], "other"),
})


# ---- cpu idle, daemons (MPS, irqbalance), cgroup throttling, GPU clock-event time, vGPU licence -------
# base.json predates the cpu and daemons probes: both sides get what tests/data/hosts/debian12-vm-idle-irq
# recorded (the cpu probe's idle states use the shape of a host with a deep C-state, C6).
def _with_cpu_daemons(doc: Doc) -> None:
    doc["probes"]["cpu"] = {"status": "ok", "error": None, "duration_s": 0.01, "data": {
        "idle": {"driver": "intel_idle", "governor": "menu", "states": {
            "POLL": {"index": 0, "latency_us": 0, "cpus": 64, "disabled_cpus": 0},
            "C6": {"index": 3, "latency_us": 170, "cpus": 64, "disabled_cpus": 0}}},
        "max_cstate": {"intel_idle": 9, "processor": 8}, "pcie_aspm_policy": "default",
        "irq_affinity": {"0000:00:03.0": {"kind": "nic", "irqs": 3, "cpus": {"0-1": 3}}}}}
    doc["probes"]["daemons"] = {"status": "ok", "error": None, "duration_s": 0.01, "data": {
        "running": {}, "mps": {"pipe_directory": "/tmp/nvidia-mps", "control_pipe": False,
                               "active_thread_percentage": None, "daemon_environ": None}}}
    system(doc)["cgroup"]["cpu_stat"] = {"nr_periods": 7, "nr_throttled": 0, "throttled_usec": 0, "throttled_pct": 0.0}
    gpu(doc)["clock_event_time_us"] = {"sw_power_cap": 9840338777, "sync_boost": 0, "sw_thermal_slowdown": 0,
                                       "hw_thermal_slowdown": 0, "hw_power_brake_slowdown": 0}
    gpu(doc)["vgpu"] = {"licensed_product": "NVIDIA Virtual Compute Server",
                        "license_status": "Licensed (Expiry: 2022-9-22 6:57:30 GMT)", "licensed": True}


def _services(persistenced_b: str, fabricmanager_b: str) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        a["probes"]["daemons"]["data"]["services"] = {"nvidia-persistenced": "active", "nvidia-fabricmanager": "active"}
        b["probes"]["daemons"]["data"]["services"] = {"nvidia-persistenced": persistenced_b,
                                                      "nvidia-fabricmanager": fabricmanager_b}
    return edit


def _devfreq(governor_b: str) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        a["probes"]["cpu"]["data"]["devfreq"] = {"17000000.gv11b": {"governor": "nvhost_podgov"}}
        b["probes"]["cpu"]["data"]["devfreq"] = {"17000000.gv11b": {"governor": governor_b}}
    return edit


def _violations(board_limit_growth_us: int) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        for doc, grown in ((a, 0), (b, board_limit_growth_us)):
            gpu(doc)["violation_time_us"] = {"power": 9840338777, "thermal": 0, "sync_boost": 0,
                                             "board_limit": 431_000_000 + grown, "low_utilization": 0,
                                             "reliability": 0, "total_app_clocks": None, "total_base_clocks": None}
    return edit


def _host_facts(*edits: Edit) -> Edit:
    return prepared(_with_cpu_daemons, do(*edits))


CPU = f"{P}/cpu/data"
DM = f"{P}/daemons/data"
CASES.update({
    "cpu-idle-state-disabled": (_host_facts(set_at(f"{CPU}/idle/states/C6/disabled_cpus", 12)),
                                ["cpu-idle-state-disabled"], "cpu_governor"),
    "cpu-idle-state-enabled": (_host_facts(lambda a, b: a["probes"]["cpu"]["data"]["idle"]["states"]["C6"].update(
        disabled_cpus=64)), ["cpu-idle-state-enabled"], "cpu_governor"),
    "cpu-idle-driver": (_host_facts(set_at(f"{CPU}/idle/driver", "acpi_idle")), ["cpu-idle-driver"], "cpu_governor"),
    "cpu-max-cstate": (_host_facts(set_at(f"{CPU}/max_cstate/intel_idle", 1)), ["cpu-max-cstate"], "cpu_governor"),
    "pcie-aspm-policy": (_host_facts(set_at(f"{CPU}/pcie_aspm_policy", "powersupersave")), ["pcie-aspm-policy"],
                         "pcie_link"),
    "irqbalance-started": (_host_facts(set_at(f"{DM}/running/irqbalance", 1)), ["irqbalance-started"], "cpu_governor"),
    "irqbalance-stopped": (_host_facts(lambda a, b: a["probes"]["daemons"]["data"]["running"].update(irqbalance=1)),
                           ["irqbalance-stopped"], "cpu_governor"),
    "mps-daemon-started": (_host_facts(set_at(f"{DM}/running/nvidia-cuda-mps-control", 1)), ["mps-daemon-started"],
                           "gpu_contention"),
    "mps-daemon-stopped": (_host_facts(lambda a, b: a["probes"]["daemons"]["data"]["running"].update(
        {"nvidia-cuda-mps-control": 1})), ["mps-daemon-stopped"], "gpu_contention"),
    "mps-thread-percentage": (_host_facts(set_at(f"{DM}/mps/active_thread_percentage", "25")),
                              ["mps-thread-percentage"], "gpu_contention"),
    "mps-pipe-directory": (_host_facts(set_at(f"{DM}/mps/control_pipe", True)), ["mps-pipe-directory"],
                           "gpu_contention"),
    "cgroup-cpu-throttled": (_host_facts(set_at(f"{SY}/cgroup/cpu_stat", {
        "nr_periods": 73, "nr_throttled": 24, "throttled_usec": 494952, "throttled_pct": 32.88})),
                             ["note:cgroup-cpu-throttled"], "container_limits"),
    "gpu-clock-event-time": (_host_facts(set_at(f"{GP}/clock_event_time_us/sw_power_cap", 9881338777)),
                             ["note:gpu-clock-event-time"], "gpu_clock_power"),
    # NVML's board-limit policy counter grew by 12 s between the snapshots (no nvidia-smi counter for it).
    "gpu-violation-time": (_host_facts(_violations(12_000_000)), ["note:gpu-clock-event-time"], "gpu_clock_power"),
    "vgpu-unlicensed": (_host_facts(set_at(f"{GP}/vgpu/licensed", False), set_at(f"{GP}/vgpu/license_status",
                                                                                "Unlicensed")),
                        ["vgpu-unlicensed"], "gpu_clock_power"),
    "persistenced-stopped": (_host_facts(lambda a, b: a["probes"]["daemons"]["data"]["running"].update(
        {"nvidia-persistenced": 1})), ["persistenced-stopped"], "mig_ecc_persistence"),
    "fabricmanager-stopped": (_host_facts(lambda a, b: a["probes"]["daemons"]["data"]["running"].update(
        {"nv-fabricmanager": 1})), ["fabricmanager-stopped"], "p2p_topology"),
    "persistenced-service": (_host_facts(_services("failed", "active")), ["persistenced-service"],
                             "mig_ecc_persistence"),
    "fabricmanager-service": (_host_facts(_services("active", "inactive")), ["fabricmanager-service"],
                              "p2p_topology"),
    "devfreq-governor": (_host_facts(_devfreq("powersave")), ["devfreq-governor"], "cpu_governor"),
    "vgpu-licensed-product": (_host_facts(set_at(f"{GP}/vgpu/licensed_product", "NVIDIA RTX Virtual Workstation")),
                              ["vgpu-licensed-product"], "gpu_clock_power"),
})


# ---- kernel clocksource ---------------------------------------------------------------------------------
# base.json predates the clocksource probe: both sides get its facts, in the shape of
# tests/data/hosts/kvm-vm-clocksource, on a machine that offers the three x86 clocksources.
def _clocksource(before: str, after: str) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        for doc, current in ((a, before), (b, after)):
            doc["probes"]["clocksource"] = {"status": "ok", "error": None, "duration_s": 0.01, "data": {
                "current": current, "available": ["acpi_pm", "hpet", "tsc"]}}
    return edit


CASES.update({
    "clocksource-left-tsc": (_clocksource("tsc", "hpet"), ["clocksource-left-tsc"], "kernel_os"),
    "clocksource-to-tsc": (_clocksource("acpi_pm", "tsc"), ["clocksource-to-tsc"], "kernel_os"),
    "clocksource-changed": (_clocksource("hpet", "acpi_pm"), ["clocksource-changed"], "kernel_os"),
})

# ---- the benchmark's code (workdir probe, taken by `driftcheck run`) ----------------------------------------
# base.json predates the workdir probe: both sides get its facts, as tests/probes/test_workdir.py reads them
# from a real repository.
def _workdir(before: tuple[str, int], after: tuple[str, int]) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        for doc, (commit, modified) in ((a, before), (b, after)):
            doc["probes"]["workdir"] = {"status": "ok", "error": None, "duration_s": 0.01, "data": {
                "commit": commit, "modified_files": modified}}
    return edit


_COMMIT_A, _COMMIT_B = "3f9c2d1e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e", "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b"
CASES.update({
    "benchmark-commit-changed": (_workdir((_COMMIT_A, 0), (_COMMIT_B, 0)), ["benchmark-commit-changed"], "other"),
    "benchmark-tracked-files-modified": (_workdir((_COMMIT_A, 0), (_COMMIT_A, 3)),
                                         ["benchmark-tracked-files-modified"], "other"),
})

# ---- "same flags, new default": the launch command line read beside the server's answers ----------------
LAUNCH_ARGV = ["python3", "-m", "sglang.launch_server", "--model-path", "qwen/qwen2.5-0.5b-instruct",
               "--attention-backend", "fa3", "--port", "30000"]


def _launched(*extra: str) -> Callable[[Doc], None]:
    """The server's process was found listening on the URL's port, started with LAUNCH_ARGV (+ `extra`)."""
    from driftcheck.serving.launch import launch_flags

    def add(doc: Doc) -> None:
        argv = LAUNCH_ARGV + list(extra)
        data(doc, "server")["launch"] = {"found": True, "why": None, "cmdline": argv, "flags": launch_flags(argv)}
    return add


def _gpu_memory(total_mib: int) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        for key in (G0, G1):
            gpu(b, key)["memory"]["total_mib"] = total_mib
    return edit


CASES.update({
    # A new release halves the default (no flag sets it on either side).
    "server-default-changed-release": (_sglang(do(set_at(f"{SA}/chunked_prefill_size", 4096),
                                                  set_at(f"{SV}/version", "0.5.6")), _launched()),
                                       ["server-default-changed", "server-version"], "other"),
    # The same release on a GPU with more memory resolves a larger CUDA-graph batch.
    "server-default-changed-gpu": (_sglang(do(set_at(f"{SA}/cuda_graph_max_bs", 160), _gpu_memory(143771)),
                                           _launched()),
                                   ["server-default-changed", "gpu-memory-total"], "other"),
    # The user's own flag changed: the ordinary argument rule, its flag one cause with it.
    "server-flag-changed": (_sglang(do(set_at(f"{SA}/chunked_prefill_size", 16384),
                                       lambda a, b: _launched("--chunked-prefill-size", "16384")(b)),
                                    _launched("--chunked-prefill-size", "8192")),
                            ["server-chunked-prefill", "merged:server-launch-flag"], "other"),
})


# ---- InfiniBand error counters (readings) that grew: the values of a real ConnectX port (leptonai/gpud #943)
def _ib_counters(link_downed_b: int, symbol_error_b: int) -> Edit:
    def edit(a: Doc, b: Doc) -> None:
        for doc, downed, symbols in ((a, 255, 0), (b, link_downed_b, symbol_error_b)):
            data(doc, "nccl")["infiniband"]["mlx5_0"]["ports"]["1"]["counters"] = {
                "symbol_error": symbols, "link_error_recovery": 0, "link_downed": downed, "port_rcv_errors": 0,
                "port_rcv_remote_physical_errors": 0, "local_link_integrity_errors": 0,
                "excessive_buffer_overrun_errors": 15}
    return edit


CASES.update({
    "infiniband-port-errors": (_ib_counters(259, 1840), ["note:infiniband-port-errors"], "hardware_change"),
})


# ---- the NCCL network plugin a server process mapped (probes.process: nccl.net_plugins) ------------------
OFI_PLUGIN = "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-net-ofi.so"
NCCL_CORE = "/usr/local/lib/python3.8/dist-packages/nvidia/nccl/lib/libnccl.so.2"


def _server_process(plugin_on_a: bool, plugin_on_b: bool) -> Edit:
    """A TP worker of an SGLang server on both sides, NCCL mapped (tests/data/processes/gvisor-9827-nccl-maps),
    with or without the aws-ofi-nccl plugin mapped beside it."""
    def entry(plugin: bool) -> Doc:
        libraries = {NCCL_CORE: {"sha256": "5" * 64, "deleted": False}}
        if plugin:
            libraries[OFI_PLUGIN] = {"sha256": "7" * 64, "deleted": False}
        return {"pid": 7311, "name": "python3", "started_ticks": 1200, "cmdline": ["python3", "-m", "sglang.launch_server"],
                "environ": {}, "affinity": "0-63", "mems_allowed": "0", "threads": 212, "cgroup": None,
                "numa_policies": ["default"], "mapped_libraries": dict(sorted(libraries.items())), "gpus": [0],
                "nccl": {"loaded": True, "net_plugins": [OFI_PLUGIN] if plugin else []}}

    def edit(a: Doc, b: Doc) -> None:
        data(a, "process")["processes"] = {"sglang.launch_server": entry(plugin_on_a)}
        data(b, "process")["processes"] = {"sglang.launch_server": entry(plugin_on_b)}
    return edit


def _server_environ(before: dict[str, str], after: dict[str, str]) -> Edit:
    """The same SGLang server process on both sides, started with another environment on B."""
    def edit(a: Doc, b: Doc) -> None:
        for doc, environ in ((a, before), (b, after)):
            process = _server_process(False, False)
            process(doc, doc)
            data(doc, "process")["processes"]["sglang.launch_server"]["environ"] = dict(environ)
    return edit


CASES.update({
    "process-env-thread-count": (_server_environ({}, {"OMP_NUM_THREADS": "2"}), ["process-env-thread-count"],
                                 "env_var_other"),
    "process-env-visible-devices": (_server_environ({"CUDA_VISIBLE_DEVICES": "0,1"}, {"CUDA_VISIBLE_DEVICES": "0"}),
                                    ["process-env-visible-devices"], "env_var_other"),
    "process-env-performance-family": (_server_environ({}, {"LD_PRELOAD": "/usr/lib/libjemalloc.so.2"}),
                                       ["process-env-performance-family"], "env_var_other"),
})


CASES.update({
    "nccl-net-plugin-lost": (_server_process(True, False), ["nccl-net-plugin-lost", "merged:other-change"],
                             "nccl_env"),
    "nccl-net-plugin-gained": (_server_process(False, True), ["nccl-net-plugin-gained", "merged:other-change"],
                               "nccl_env"),
})


def _unescape(doc: Any) -> Any:
    """Keys written with ~2F in CASES stand for '/' (set_at splits its path on '/')."""
    if isinstance(doc, dict):
        return {k.replace("~2F", "/"): _unescape(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_unescape(v) for v in doc]
    return doc


def main() -> None:
    base = json.loads((HERE / "base.json").read_text("utf-8"))
    for old in HERE.iterdir():
        if old.is_dir() and (old / "expected.json").exists():
            shutil.rmtree(old)
    for name, (edit, top, category) in sorted(CASES.items()):
        a, b = copy.deepcopy(base), copy.deepcopy(base)
        a["label"], b["label"] = f"{name}: before", f"{name}: after"
        edit(a, b)
        a, b = _unescape(a), _unescape(b)
        folder = HERE / name
        folder.mkdir()
        for fname, doc in (("a.json", a), ("b.json", b)):
            # One line each: 100+ pairs stay small; `python -m json.tool` reads them.
            (folder / fname).write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False) + "\n", "utf-8")
        expected = {"top": [t for t in top if not t.startswith(("note:", "merged:"))],
                    "notes": [t[5:] for t in top if t.startswith("note:")], "category": category}
        if any(t.startswith("merged:") for t in top):
            # Rules whose changes the top cause speaks for (one cause per underlying change).
            expected["merged"] = [t[7:] for t in top if t.startswith("merged:")]
        (folder / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n", "utf-8")
    print(f"{len(CASES)} cases written")


if __name__ == "__main__":
    main()
