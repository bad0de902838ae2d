"""Figures: the per-scenario cost of the protocol round trip. Prints, asserts nothing.

    schedcheck overhead [--count 30] [--seed 0]

Times the same generated scenarios three ways: the reference called in-process (`reference.run`),
the same callable through `--impl python:...` (a forked child, JSON over a pipe), and
examples/impls/reference_cli.py as a command (a new Python process per scenario), plus the cost of
checking one answer (schema, outside checks and the guided differential).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path


HELP = "time the conformance protocol's round trip (figures only)"
DESCRIPTION = __doc__.split("\n\n")[0] if __doc__ else HELP
EPILOG = """example:
  schedcheck overhead --count 30 --seed 0"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", type=int, default=30, help="generated scenarios to time (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated scenarios (default 0)")


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    if not isinstance(args, argparse.Namespace):
        parser = argparse.ArgumentParser(prog="schedcheck overhead", description=DESCRIPTION)
        add_arguments(parser)
        args = parser.parse_args(args)

    if args.count < 1:
        print("schedcheck: overhead: --count: expected 1 or more scenarios", file=sys.stderr)
        return 2
    from schedcheck.generators.scenarios import profile_scenarios, sample_documents
    from schedcheck.conform.check import check_answer
    from schedcheck.conform.impl import parse_impl
    from schedcheck.conform.reference import run
    from schedcheck.scenario.loader import scenario_from_document

    docs = sample_documents(profile_scenarios("ci"), args.count, seed=args.seed)
    cli = Path(__file__).resolve().parents[2] / "examples" / "impls" / "reference_cli.py"
    ways = {
        "in-process reference.run": lambda doc: run(copy.deepcopy(doc)),
        "python: callable (fork + pipe)": parse_impl("python:schedcheck.conform.reference:run").call,
        "reference_cli.py subprocess": parse_impl(f"{sys.executable} {cli}").call,
    }
    print(f"{len(docs)} generated scenarios (ci profile, seed {args.seed}); ms per scenario:")
    for label, call in ways.items():
        started = time.perf_counter()
        for doc in docs:
            call(doc)
        print(f"  {label:34s} {1000 * (time.perf_counter() - started) / len(docs):8.1f}")
    started = time.perf_counter()
    for doc in docs:
        check_answer(scenario_from_document(doc, "g"), run(copy.deepcopy(doc)), 0)
    print(f"  {'checking one answer (+ its run)':34s} {1000 * (time.perf_counter() - started) / len(docs):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
