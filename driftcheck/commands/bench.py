"""`driftcheck bench`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from driftcheck import api
from driftcheck.api.bench import ServingPlan
from driftcheck.api.catalog import BENCH_DEVICES, BENCH_SUITES
from driftcheck.baselines.render import results_text
from driftcheck.commands.common import (
    EXIT_OK,
    add_budget,
    add_format,
    add_output,
    add_runs,
    check_output_path,
    flag_terms,
    run_progress,
    write_new_file,
)
from driftcheck.errors import UsageError


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Declare `driftcheck bench`, its handler and the check of its options."""
    p.description = ("Run a calibrated benchmark suite (warm-up until settled, repeat until the 95% CI of each "
                     "median is within ±1% or the budget is spent) and print median, n, CV and CI per benchmark. "
                     "With --runs N, N independent runs (each in its own process) measure the spread between runs "
                     "too; a run disturbed by other work is flagged and repeated once. With --server, measure a "
                     "running OpenAI-compatible server (SGLang, vLLM, transformers serve) instead: TTFT, "
                     "inter-token latency per token and per streamed chunk, output tokens/s, each request's output "
                     "length checked. Needs torch (suites) or sglang (--sglang-model).")
    p.add_argument("--suite", choices=BENCH_SUITES, default="quick", help="which suite (default quick)")
    p.add_argument("--device", choices=BENCH_DEVICES, default="auto", help="where to run (default auto)")
    add_format(p)
    add_budget(p, "total time budget of the suite instead of its default (small: a fast smoke run)")
    add_runs(p, 1, "independent runs, each in its own process (default 1; 3 or more measure the between-run "
                   "spread that verdicts need)")
    p.add_argument("--only", action="append", metavar="TEXT",
                   help="run only benchmarks whose name contains TEXT (repeatable)")
    serving = p.add_mutually_exclusive_group()
    serving.add_argument("--server", metavar="URL", help="measure the OpenAI-compatible server at URL")
    serving.add_argument("--sglang-model", metavar="PATH", help="measure sglang's offline engine on this model")
    p.add_argument("--model", help="model name to request from --server (default: its first listed model)")
    p.add_argument("--requests", type=int, default=ServingPlan.requests, help="requests per concurrency level")
    p.add_argument("--concurrency", type=int, default=ServingPlan.concurrency,
                   help="the fixed concurrency measured besides 1 (default %(default)s)")
    p.add_argument("--prompt-words", type=int, default=ServingPlan.prompt_words, help=argparse.SUPPRESS)
    p.add_argument("--output-tokens", type=int, default=ServingPlan.output_tokens,
                   help="tokens generated per request (default %(default)s)")
    add_output(p, "also write the JSON results to this file")
    p.set_defaults(handler=_cmd_bench, validate=_validate)


def _validate(args: argparse.Namespace) -> None:
    if args.output:
        check_output_path(args.output, args.force)
    if args.runs > 1 and (args.server or args.sglang_model):
        raise UsageError("--runs repeats the benchmark suites; a serving measurement takes --requests instead")


def _progress() -> Callable[[str], None]:
    def show(line: str) -> None:
        sys.stderr.write(f"\r\033[K{line}")
        sys.stderr.flush()

    return show


def _cmd_bench(args: argparse.Namespace) -> int:
    plan = ServingPlan(requests=args.requests, prompt_words=args.prompt_words, output_tokens=args.output_tokens,
                       concurrency=args.concurrency, model=args.model)
    progress = (_progress() if sys.stderr.isatty() else None) if args.server else run_progress()
    with flag_terms():
        result = api.bench(suite=args.suite, device=args.device, runs=args.runs, budget_s=args.budget_s,
                           only=args.only or (), server=args.server, sglang_model=args.sglang_model, plan=plan,
                           progress=progress)
    if args.server and sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    text = json.dumps(result.to_json(), indent=2, sort_keys=True, default=str)
    if args.output:
        write_new_file(args.output, text + "\n", args.force)
    sys.stdout.write(text + "\n" if args.format == "json" else results_text(result.data))
    return EXIT_OK
