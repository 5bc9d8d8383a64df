"""Run records: a command, the metrics it printed, the GPUs and CPUs while it ran, and the snapshots around it."""
