"""Calibrated baseline benchmarks: micro-benchmarks, a synthetic decode, a serving probe, and the
statistics that say whether two runs differ (`driftcheck.baselines.compare.compare_results`).

torch and sglang are optional: imported only when a benchmark runs (`driftcheck.baselines.deps`).
"""
