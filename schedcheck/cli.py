"""The `schedcheck` command line (../shared/spec/cli.md).

Exit statuses are contracts: 0 ran and everything held, 1 an expectation or
invariant failed, 2 the input could not be read (one line naming the file, the
object and the field; never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
from collections.abc import Sequence

from schedcheck import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# Commands that live in a module of their own. Each module defines HELP, DESCRIPTION, EPILOG,
# configure(parser) and main(args) -> exit status, and imports anything heavy (z3) inside main.
COMMAND_MODULES = {
    "prove": "schedcheck.prove",
    "explain": "schedcheck.explain",
    "conform": "schedcheck.conform.command",
    "check-trace": "schedcheck.conform.check_trace_command",
    "selftest": "schedcheck.selftest",
    "compare-persistence": "schedcheck.persistence_compare",
    "differential": "schedcheck.adapters.differential",
    "overhead": "schedcheck.conform.overhead",
}

RUN_EXAMPLE = """examples:
  schedcheck run examples/gpu-training-gang.yaml
  schedcheck run tests/scenarios/gang-commit.yaml --json --seed 7
  schedcheck run cluster-dump.yaml --conf volcano-scheduler.conf
"""
CHECK_EXAMPLE = """examples:
  schedcheck check tests/scenarios/gang-commit.yaml
  schedcheck check cluster-dump.yaml --only node.ledger,gang.session-atomic --json
"""
INVARIANTS_EXAMPLE = """examples:
  schedcheck invariants
  schedcheck invariants --json
  schedcheck invariants --markdown > docs/invariants.md
"""
GATE_EXAMPLE = """examples:
  schedcheck gate                         # the CI gate: 60 s, one worker, seed from the clock (printed)
  schedcheck gate --budget 600 --workers 2 --seed 42 --junit gate.xml
  schedcheck gate --profile nightly --database /shared/schedcheck-db
  schedcheck gate --mutant discard-not-reversing --budget 60   # self-test: the gate must find this bug
"""
REPLAY_EXAMPLE = """examples:
  schedcheck replay reports/20261122T010203Z-gang.commit-ready/counterexample.yaml
"""
BENCH_EXAMPLE = """examples:
  schedcheck bench
  schedcheck bench --sizes 100 --json
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedcheck",
        description="Invariant-checking test harness for Volcano-style batch schedulers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `schedcheck COMMAND --help` for each command's options and an example.",
    )
    parser.add_argument("--version", action="version", version=f"schedcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run", help="run the reference scheduler on one scenario",
        description="Run the reference scheduler on a scenario (scenario format v1) for its "
                    "`cycles` sessions, print what it decided, and judge the scenario's `expect` block.",
        epilog=RUN_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("scenario", help="scenario file (YAML or JSON), or - for standard input")
    run.add_argument("--json", action="store_true", help="print exactly one JSON result object on stdout")
    run.add_argument("--seed", type=int, default=0,
                     help="seed for tie-breaking among equally scored nodes (default 0)")
    run.add_argument("--conf", metavar="FILE",
                     help="volcano-scheduler.conf to use (overrides the scenario's schedulerConf)")
    run.add_argument("--fail-on-known", metavar="IDS", help="known upstream findings (invariants/known.py, docs/findings.md) that fail the run "
                             "like any violation: comma-separated ids such as F1, or all (default: reported only)")
    run.add_argument("--trace", action="store_true",
                     help="include every session operation (allocate, pipeline, evict, bind, ...) in the output")

    check = sub.add_parser(
        "check", help="run a scenario with every invariant on and write a report",
        description="Run the reference scheduler on a scenario with the invariant engine checking every "
                    "operation, statement, action and session close. Writes reports/<time>-<name>/report.json "
                    "and report.md. Exit 0 when no invariant is violated, 1 when one is, 2 on unreadable input.",
        epilog=CHECK_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("scenario", help="scenario file (YAML or JSON), or - for standard input")
    check.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    check.add_argument("--only", metavar="IDS", help="comma-separated invariant ids to check (default: all)")
    check.add_argument("--seed", type=int, default=0, help="tie-breaking seed (default 0)")
    check.add_argument("--conf", metavar="FILE", help="volcano-scheduler.conf overriding the scenario's")
    check.add_argument("--report", metavar="DIR", default="reports", help="where reports go (default reports/)")
    check.add_argument("--fail-on-known", metavar="IDS", help="known upstream findings (invariants/known.py, docs/findings.md) that fail the run "
                             "like any violation: comma-separated ids such as F1, or all (default: reported only)")

    invariants = sub.add_parser(
        "invariants", help="list the invariant catalog",
        description="Every invariant: id, class, the rule in one line, and where it comes from.",
        epilog=INVARIANTS_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    invariants.add_argument("--json", action="store_true", help="print one JSON object")
    invariants.add_argument("--markdown", action="store_true",
                            help="print the catalog as the Markdown page docs/invariants.md holds")

    gate = sub.add_parser(
        "gate", help="generate clusters and cycles, check every invariant, minimise the first failure",
        description="Generate scenarios and multi-session runs with Hypothesis, check every invariant on each, "
                    "and stop at the first violation: shrink it, minimise the scenario, and write a report folder "
                    "with a replayable counterexample.yaml. Exit 0 when nothing was found within the budget, "
                    "1 when a violation was, 2 on a usage error.",
        epilog=GATE_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gate.add_argument("--budget", type=float, metavar="SECONDS",
                      help="seconds of searching (default: 60 with --profile ci, 1800 with nightly)")
    gate.add_argument("--seed", type=int, help="seed of the search (default: from the clock; always printed)")
    gate.add_argument("--profile", choices=["ci", "nightly"], default="ci",
                      help="ci: small clusters, short budget; nightly: larger clusters, long budget")
    gate.add_argument("--workers", type=int, default=1, help="parallel worker processes (pytest-xdist)")
    gate.add_argument("--report", metavar="DIR", default="reports", help="where reports go (default reports/)")
    gate.add_argument("--junit", metavar="FILE", help="also write a JUnit XML result")
    gate.add_argument("--database", metavar="DIR", default=".schedcheck/hypothesis",
                      help="Hypothesis example database, shared by workers and later runs")
    gate.add_argument("--strict", action="store_true", help="quality findings fail the gate too")
    gate.add_argument("--fail-on-known", metavar="IDS", help="known upstream findings (invariants/known.py, docs/findings.md) that fail the run "
                             "like any violation: comma-separated ids such as F1, or all (default: reported only)")
    gate.add_argument("--only", metavar="IDS", help="comma-separated invariant ids to check (default: all)")
    gate.add_argument("--mutant", metavar="NAME", help="run against the reference with a deliberate bug "
                                                        "(the harness's self-test; see schedcheck/mutants.py)")
    gate.add_argument("--json", action="store_true", help="print one JSON object")

    replay = sub.add_parser(
        "replay", help="replay a saved counterexample",
        description="Run a counterexample.yaml written by the gate (its seed and any deliberate bug are recorded "
                    "in it). Exit 1 when the same invariant breaks again, 0 when it no longer does, 2 on "
                    "unreadable input.",
        epilog=REPLAY_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("file", help="a counterexample.yaml")
    replay.add_argument("--json", action="store_true", help="print one JSON object")
    replay.add_argument("--impl", metavar="CMD", help="replay against another implementation speaking protocol 1 (docs/protocol.md)")

    bench = sub.add_parser(
        "bench", help="print performance figures",
        description="Build synthetic clusters (N nodes, 10xN pods, half of them pending in gangs across "
                    "several queues) and time one allocate session at each size, with and without the invariants, "
                    "and through upstream Volcano's own scheduler (the Go adapter) for the ratio reference / "
                    "upstream. Prints figures; asserts nothing.",
        epilog=BENCH_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("--sizes", default="100,1000", help="comma-separated node counts (default 100,1000)")
    bench.add_argument("--seed", type=int, default=0, help="seed for the synthetic cluster (default 0)")
    bench.add_argument("--no-invariants", action="store_true", help="skip the run with every invariant checked")
    bench.add_argument("--no-upstream", action="store_true",
                       help="skip the same session through upstream Volcano (the Go adapter, built on first use)")

    for name, module_name in COMMAND_MODULES.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION, epilog=module.EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `schedcheck invariants | head` ends quietly
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "bench":
        return _cmd_bench(args)
    if args.command == "check":
        return _cmd_check(args)
    if args.command == "gate":
        return _cmd_gate(args)
    if args.command == "replay":
        from schedcheck.replay import cmd_replay

        return cmd_replay(args)
    if args.command == "invariants":
        return _cmd_invariants(args)
    if args.command in COMMAND_MODULES:
        return importlib.import_module(COMMAND_MODULES[args.command]).main(args)
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE


def _cmd_run(args: argparse.Namespace) -> int:
    from schedcheck.render import render_run
    from schedcheck.runner import run_scenario

    scenario = _load(args.scenario, args.conf)
    if scenario is None:
        return EXIT_USAGE
    from schedcheck.invariants.engine import InvariantEngine

    result = run_scenario(scenario, seed=args.seed, ledgers=args.trace,
                          engine=InvariantEngine(fail_on_known=_known_ids(args.fail_on_known)))
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


def _load(path: str, conf: str | None):
    """The scenario, or None after printing the one-line error."""
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


def _known_ids(raw: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip()) if raw else ()


def _cmd_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine, UnknownInvariant
    from schedcheck.render import render_check
    from schedcheck.report import write_report
    from schedcheck.runner import run_scenario

    only = [part.strip() for part in args.only.split(",") if part.strip()] if args.only else None
    try:
        engine = InvariantEngine(only=only, fail_on_known=_known_ids(args.fail_on_known))
    except UnknownInvariant as exc:
        print(f"schedcheck: check: --only: {exc} (see `schedcheck invariants`)", file=sys.stderr)
        return EXIT_USAGE
    scenario = _load(args.scenario, args.conf)
    if scenario is None:
        return EXIT_USAGE
    result = run_scenario(scenario, seed=args.seed, engine=engine, overkill=True)
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
        folder = write_report(Path(args.report), scenario.name, payload)
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


def _cmd_gate(args: argparse.Namespace) -> int:
    from schedcheck.gate import GateOptions, render_gate, run_gate
    from schedcheck.mutants import MUTANTS

    if args.workers < 1:
        print("schedcheck: gate: --workers: expected 1 or more", file=sys.stderr)
        return EXIT_USAGE
    if args.budget is not None and args.budget <= 0:
        print("schedcheck: gate: --budget: expected a positive number of seconds", file=sys.stderr)
        return EXIT_USAGE
    if args.mutant and args.mutant not in MUTANTS:
        print(f"schedcheck: gate: --mutant: unknown {args.mutant!r}; known: {', '.join(sorted(MUTANTS))}",
              file=sys.stderr)
        return EXIT_USAGE
    only = [part.strip() for part in args.only.split(",") if part.strip()] if args.only else None
    if only:
        from schedcheck.invariants.catalog import catalog

        unknown = sorted(set(only) - {inv.id for inv in catalog()})
        if unknown:
            print(f"schedcheck: gate: --only: unknown invariant id(s): {', '.join(unknown)}", file=sys.stderr)
            return EXIT_USAGE
    options = GateOptions(budget=args.budget, seed=args.seed, profile=args.profile, report_dir=args.report,
                          workers=args.workers, junit=args.junit, database=args.database, mutant=args.mutant,
                          strict=args.strict, only=only, json=args.json,
                          fail_on_known=_known_ids(args.fail_on_known))
    result = run_gate(options)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_gate(result))
    return EXIT_FAILED if result.failure is not None else EXIT_OK


def _cmd_invariants(args: argparse.Namespace) -> int:
    from schedcheck.invariants.catalog import catalog
    from schedcheck.render import table

    invariants = catalog()
    if args.markdown:
        from schedcheck.catalog_doc import render_catalog_markdown

        sys.stdout.write(render_catalog_markdown(invariants))
        return EXIT_OK
    if args.json:
        json.dump({"invariants": [inv.to_json() for inv in invariants]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    rows = [[inv.id, inv.cls, inv.severity, inv.statement, inv.source] for inv in invariants]
    sys.stdout.write(table(["id", "class", "severity", "rule", "source"], rows))
    sys.stdout.write(f"{len(invariants)} invariants\n")
    return EXIT_OK


def _cmd_bench(args: argparse.Namespace) -> int:
    from schedcheck.bench import render_bench, run_bench

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        if not sizes or any(s <= 0 for s in sizes):
            raise ValueError
    except ValueError:
        print(f"schedcheck: bench: --sizes: expected positive integers separated by commas, got {args.sizes!r}",
              file=sys.stderr)
        return EXIT_USAGE
    figures = run_bench(sizes, seed=args.seed, progress=None if args.json else sys.stderr,
                        with_invariants=not args.no_invariants, upstream=False if args.no_upstream else None)
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_bench(figures))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
