"""`schedcheck run SCENARIO`: run the reference for the scenario's cycles and print what it decided."""

from __future__ import annotations

import argparse
import json
import sys

from schedcheck.commands import EXIT_FAILED, EXIT_OK, EXIT_USAGE, KNOWN_HELP, known_ids, unknown_known_ids, scheduler_stopped

DESCRIPTION = ("Run the reference scheduler on a scenario (scenario format v1) for its "
               "`cycles` sessions, print what it decided, and judge the scenario's `expect` block.")
EPILOG = """examples:
  schedcheck run examples/gpu-training-gang.yaml
  schedcheck run tests/scenarios/gang-commit.yaml --json --seed 7
  schedcheck run cluster-dump.yaml --conf volcano-scheduler.conf
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", nargs="?", help="scenario file (YAML or JSON), or - for standard input")
    add_dump_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print exactly one JSON result object on stdout")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for tie-breaking among equally scored nodes (default 0)")
    parser.add_argument("--conf", metavar="FILE",
                        help="volcano-scheduler.conf to use (overrides the scenario's schedulerConf)")
    parser.add_argument("--fail-on-known", metavar="IDS", help=KNOWN_HELP)
    parser.add_argument("--trace", action="store_true",
                        help="include every session operation (allocate, pipeline, evict, bind, ...) in the output")


def main(args: argparse.Namespace) -> int:
    from schedcheck.render import render_run
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.errors import ScenarioError

    problem = unknown_known_ids(args.fail_on_known)
    if problem:
        print(f"schedcheck: run: --fail-on-known: {problem}", file=sys.stderr)
        return EXIT_USAGE
    scenario = load_input(args, "run")
    if scenario is None:
        return EXIT_USAGE
    from schedcheck.invariants.engine import InvariantEngine

    try:
        result = run_scenario(scenario, seed=args.seed, ledgers=args.trace,
                              engine=InvariantEngine(fail_on_known=known_ids(args.fail_on_known)))
    except ScenarioError as exc:  # the scenario's extender process did not come up
        print(f"schedcheck: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the scheduler under test raised: one line, exit 1
        print(scheduler_stopped(scenario.source, exc), file=sys.stderr)
        return EXIT_FAILED
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for name in result.skipped_plugins:
        print(f"warning: plugin {name} is not implemented in the reference yet; skipped "
              f"(upstream skips unknown plugins the same way)", file=sys.stderr)
    for name in result.skipped_actions:
        print(f"warning: action {name} is not implemented in the reference yet; skipped", file=sys.stderr)
    if args.json:
        json.dump(result.to_json(with_trace=args.trace), sys.stdout, indent=2, sort_keys=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_run(scenario, result, with_trace=args.trace))
    return EXIT_OK if result.ok else EXIT_FAILED


def add_dump_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from-dump", metavar="FILE",
                        help="instead of a scenario: a Volcano scheduler cache dump (snapshot-*.json, written on "
                             "SIGUSR2)")
    parser.add_argument("--objects", metavar="FILE",
                        help="with --from-dump: more objects (Queues, which the dump lacks; any kubectl YAML)")


def load_input(args: argparse.Namespace, command: str):
    """The scenario file, or the cache dump with its objects; None after a one-line error."""
    if args.from_dump is None:
        if args.objects is not None:
            print(f"schedcheck: {command}: --objects goes with --from-dump", file=sys.stderr)
            return None
        if args.scenario is None:
            print(f"schedcheck: {command}: give a scenario file or --from-dump FILE", file=sys.stderr)
            return None
        return load(args.scenario, args.conf)
    if args.scenario is not None:
        print(f"schedcheck: {command}: give a scenario file or --from-dump FILE, not both", file=sys.stderr)
        return None
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_from_dump

    try:
        scenario = load_from_dump(args.from_dump, args.objects, args.conf)
    except ScenarioError as exc:
        print(f"schedcheck: {exc}", file=sys.stderr)
        return None
    for warning in scenario.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return scenario


def load(path: str, conf: str | None):
    """The scenario, or None after printing the one-line error (and its warnings)."""
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_scenario

    try:
        scenario = load_scenario(path, conf_path=conf)
    except ScenarioError as exc:
        print(f"schedcheck: {exc}", file=sys.stderr)
        return None
    for warning in scenario.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return scenario
