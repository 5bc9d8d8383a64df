"""The fixed vocabularies of DESIGN.md: change categories, what a change affects, probe outcome statuses.

A leaf module (it imports nothing of driftcheck), so the document model and the probes can both use
it without importing each other.
"""

CATEGORIES = (
    "gpu_clock_power", "thermal", "pcie_link", "p2p_topology", "nccl_env", "driver_version", "cuda_version",
    "package_version", "package_binary", "env_var_other", "cpu_governor", "numa", "thp_memory",
    "container_limits", "gpu_contention", "mig_ecc_persistence", "kernel_os", "hardware_change", "other",
)

# What a change is expected to move: which benchmarks (rules.yaml and catalog.yaml `affects`).
AFFECTS = ("compute", "memory", "communication", "host", "software")

STATUSES = ("ok", "unavailable", "denied", "timeout", "error", "skipped")
