"""`schedcheck gate`: the command line of the CI gate (schedcheck.gate runs it)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from schedcheck.commands import EXIT_FAILED, EXIT_OK, EXIT_USAGE, KNOWN_HELP, known_ids, unknown_known_ids

DESCRIPTION = ("Replay the packaged scenario corpus (upstream's decisions as expect blocks, every invariant on), "
               "then generate scenarios and multi-session runs with Hypothesis, check every invariant on each, "
               "and stop at the first violation: shrink it, minimise the scenario, and write a report folder "
               "with a replayable counterexample.yaml. Exit 0 when nothing was found within the budget, "
               "1 when a violation was, 2 on a usage error.")
EPILOG = """examples:
  schedcheck gate                         # the CI gate: 60 s, one worker, seed from the clock (printed)
  schedcheck gate --budget 600 --workers 2 --seed 42 --junit gate.xml
  schedcheck gate --profile nightly --database /shared/schedcheck-db
  schedcheck gate --mutant discard-not-reversing --budget 60   # self-test: the gate must find this bug
  schedcheck gate --cluster tcp://10.0.0.5:8786 --workers 16 --database redis://10.0.0.5:6379/0
  schedcheck gate --cluster local --workers 2    # a local Dask cluster instead of pytest-xdist
  schedcheck gate --bench 300 --seed 0           # where a worker's time goes, on 300 fixed documents
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=float, metavar="SECONDS",
                        help="seconds of searching (default: 60 with --profile ci, 1800 with nightly)")
    parser.add_argument("--seed", type=int, help="seed of the search (default: from the clock; always printed)")
    parser.add_argument("--profile", choices=["ci", "nightly"], default="ci",
                        help="ci: small clusters, short budget; nightly: larger clusters, long budget")
    parser.add_argument("--workers", type=int, default=1, help="parallel worker processes (pytest-xdist)")
    parser.add_argument("--report", metavar="DIR", default="reports", help="where reports go (default reports/)")
    parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML result")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the workers as tasks on a Dask distributed cluster (tcp://HOST:8786), or on a "
                             "local one ('local'); every worker searches with its own seed")
    parser.add_argument("--database", metavar="DIR|URL", default=".schedcheck/hypothesis",
                        help="Hypothesis example database shared by workers and later runs: a folder, or "
                             "redis://HOST:6379/0 for workers on several machines")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (on a terminal) or periodic progress lines (otherwise)")
    parser.add_argument("--strict", action="store_true", help="quality findings fail the gate too")
    parser.add_argument("--no-corpus", action="store_true",
                        help="generate only: skip the packaged scenarios replayed first (schedcheck/corpus, "
                             "judged by their expect blocks, and the self-test scenarios)")
    parser.add_argument("--fail-on-known", metavar="IDS", help=KNOWN_HELP)
    parser.add_argument("--only", metavar="IDS", help="comma-separated invariant ids to check (default: all)")
    parser.add_argument("--mutant", metavar="NAME", help="run against the reference with a deliberate bug "
                                                         "(the harness's self-test; see schedcheck/mutants.py)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--bench", type=int, metavar="N",
                        help="search nothing: draw N documents for the seed and print the CPU time per document "
                             "of generating, loading, running and checking them, and the stateful machine's "
                             "cycles/s (schedcheck/gate_bench.py)")


def main(args: argparse.Namespace) -> int:
    from schedcheck.gate import GateOptions, render_gate, run_gate
    from schedcheck.mutants import MUTANTS

    if args.workers < 1:
        print("schedcheck: gate: --workers: expected 1 or more", file=sys.stderr)
        return EXIT_USAGE
    if args.budget is not None and args.budget <= 0:
        print("schedcheck: gate: --budget: expected a positive number of seconds", file=sys.stderr)
        return EXIT_USAGE
    problem = unknown_known_ids(args.fail_on_known)
    if problem:
        print(f"schedcheck: gate: --fail-on-known: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.mutant and args.mutant not in MUTANTS:
        print(f"schedcheck: gate: --mutant: unknown {args.mutant!r}; known: {', '.join(sorted(MUTANTS))}",
              file=sys.stderr)
        return EXIT_USAGE
    if args.bench is not None:
        return _bench(args)
    only = [part.strip() for part in args.only.split(",") if part.strip()] if args.only else None
    if only:
        from schedcheck.invariants.catalog import catalog

        unknown = sorted(set(only) - {inv.id for inv in catalog()})
        if unknown:
            print(f"schedcheck: gate: --only: unknown invariant id(s): {', '.join(unknown)}", file=sys.stderr)
            return EXIT_USAGE
    needs = ("pytest", "xdist") if args.workers > 1 else ("pytest",) if args.junit else ()
    if needs and not args.cluster and not _have(*needs):
        option = "--workers" if args.workers > 1 else "--junit"
        print(f"schedcheck: gate: {option}: runs through {'pytest-xdist' if args.workers > 1 else 'pytest'}, "
              f"which is not installed (pip install 'schedcheck[test]')", file=sys.stderr)
        return EXIT_USAGE
    if args.cluster and args.junit:
        print("schedcheck: gate: --junit: written by the pytest-xdist workers; not with --cluster", file=sys.stderr)
        return EXIT_USAGE
    from schedcheck.gate_database import DatabaseError, open_database

    from schedcheck.report_folder import unusable_parent

    for option, parent in (("--report", args.report), ("--junit", str(Path(args.junit).parent) if args.junit else None)):
        problem = unusable_parent(Path(parent)) if parent is not None else None
        if problem:
            print(f"schedcheck: gate: {option} {getattr(args, option[2:])}: {problem}", file=sys.stderr)
            return EXIT_USAGE
    try:  # a Redis server pinged, a folder created: a bad one is a clear error before any worker starts
        open_database(args.database, check=True)
    except DatabaseError as exc:
        print(f"schedcheck: gate: --database: {exc}", file=sys.stderr)
        return EXIT_USAGE
    options = GateOptions(budget=args.budget, seed=args.seed, profile=args.profile, report_dir=args.report,
                          workers=args.workers, junit=args.junit, database=args.database, mutant=args.mutant,
                          strict=args.strict, only=only, json=args.json,
                          fail_on_known=known_ids(args.fail_on_known), cluster=args.cluster,
                          progress=not args.no_progress, corpus=not args.no_corpus)
    from schedcheck.gate_cluster import ClusterError

    try:
        result = run_gate(options)
    except ClusterError as exc:
        print(f"schedcheck: gate: --cluster: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_gate(result))
    return EXIT_FAILED if result.failure is not None else EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    from schedcheck.gate_bench import bench_gate, render_gate_bench

    if args.bench < 1:
        print("schedcheck: gate: --bench: expected 1 or more documents", file=sys.stderr)
        return EXIT_USAGE
    seed = 0 if args.seed is None else args.seed
    bench = bench_gate(args.bench, seed=seed, profile=args.profile)
    if args.json:
        print(json.dumps({"seed": seed, "profile": args.profile, **bench.to_json()}))
    else:
        print(render_gate_bench(bench, seed, args.profile))
    return 0


def _have(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in modules)
