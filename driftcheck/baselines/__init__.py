"""Calibrated baseline benchmarks: the workloads, their runner and calibration, the control measured beside
them, repeated runs combined into one record, and the serving benchmark. They measure; whether two records
differ is judged above them (`driftcheck.analysis.bench_verdicts`, on the statistics of `driftcheck.stats`).

torch and sglang are optional: imported only when a benchmark runs (`driftcheck.baselines.deps`).
"""
