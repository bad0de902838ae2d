"""`schedcheck check SCENARIO`: the run with every invariant on, written to a report folder."""

from __future__ import annotations

import argparse
import json
import sys

from schedcheck.commands import EXIT_FAILED, EXIT_OK, EXIT_USAGE, KNOWN_HELP, known_ids, unknown_known_ids, scheduler_stopped
from schedcheck.commands.run import add_dump_arguments, load_input

DESCRIPTION = ("Run the reference scheduler on a scenario with the invariant engine checking every "
               "operation, statement, action and session close. Writes reports/<time>-<name>/report.json "
               "and report.md. Exit 0 when no invariant is violated, 1 when one is, 2 on unreadable input.")
EPILOG = """examples:
  schedcheck check tests/scenarios/gang-commit.yaml
  schedcheck check cluster-dump.yaml --only node.ledger,gang.session-atomic --json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", nargs="?", help="scenario file (YAML or JSON), or - for standard input")
    add_dump_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    parser.add_argument("--only", metavar="IDS", help="comma-separated invariant ids to check (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="tie-breaking seed (default 0)")
    parser.add_argument("--conf", metavar="FILE", help="volcano-scheduler.conf overriding the scenario's")
    parser.add_argument("--report", metavar="DIR", default="reports", help="where reports go (default reports/)")
    parser.add_argument("--fail-on-known", metavar="IDS", help=KNOWN_HELP)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine, UnknownInvariant
    from schedcheck.render import render_check
    from schedcheck.report import write_report
    from schedcheck.runner import run_scenario

    problem = unknown_known_ids(args.fail_on_known)
    if problem:
        print(f"schedcheck: check: --fail-on-known: {problem}", file=sys.stderr)
        return EXIT_USAGE
    only = [part.strip() for part in args.only.split(",") if part.strip()] if args.only else None
    try:
        engine = InvariantEngine(only=only, fail_on_known=known_ids(args.fail_on_known))
    except UnknownInvariant as exc:
        print(f"schedcheck: check: --only: {exc} (see `schedcheck invariants`)", file=sys.stderr)
        return EXIT_USAGE
    scenario = load_input(args, "check")
    if scenario is None:
        return EXIT_USAGE
    try:
        result = run_scenario(scenario, seed=args.seed, engine=engine, overkill=True)
    except Exception as exc:  # noqa: BLE001 - the scheduler under test raised: one line, exit 1
        print(scheduler_stopped(scenario.source, exc), file=sys.stderr)
        return EXIT_FAILED
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    payload = result.to_json()
    payload.update({
        "overkill": result.overkill,
        "source": scenario.source,
        "invariants": [inv.id for inv in engine.invariants],
        "invariantsChecked": engine.checks_run,
        "suppressed": dict(engine.suppressed),
        "checkSeconds": round(sum(engine.cost.values()), 4),
    })
    try:
        folder = write_report(Path(args.report), scenario.name, {**payload, "trace": result.trace})
    except OSError as exc:
        print(f"schedcheck: check: --report {args.report}: cannot write the report: {exc}", file=sys.stderr)
        return EXIT_USAGE
    payload["report"] = str(folder)
    if args.json:
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_check(scenario, result, engine, folder))
    return EXIT_FAILED if result.violations else EXIT_OK
