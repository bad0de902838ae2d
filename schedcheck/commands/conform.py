"""`schedcheck conform --impl CMD`: test another scheduler implementation for conformance."""

from __future__ import annotations

import argparse
import json
import random
import sys

HELP = "test another scheduler implementation for conformance (protocol 1)"
DESCRIPTION = (
    "Give an implementation scenarios (generated, or every file of --scenarios DIR) through protocol 1 "
    "(docs/protocol.md): it runs as `CMD... SCENARIO_FILE` and prints one result object. Each answer is "
    "checked: faults (crash, non-zero exit, hang, not JSON, schema break, unknown pods or nodes), the "
    "invariants that can be judged from outside on its own decisions, then a differential against the "
    "reference that accepts any legal tie-break. The first non-conformance is minimised (the implementation "
    "is re-run on every candidate) and written to a report folder with a replayable counterexample. "
    "Exit 0 conformant within the budget, 1 not conformant, 2 usage error."
)
EPILOG = """examples:
  schedcheck conform --impl 'python examples/impls/reference_cli.py' --budget 30 --seed 1
  schedcheck conform --impl 'python examples/impls/gang_ignorer.py' --budget 60 --report reports/
  schedcheck conform --impl python:schedcheck.conform.reference:run --scenarios tests/scenarios --json
  schedcheck conform --impl volcano --budget 300          # the Go adapter around upstream Volcano
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--impl", required=True, metavar="CMD",
                        help="the implementation: a command line (the scenario path is appended), "
                             "python:MODULE:CALLABLE, or volcano")
    parser.add_argument("--budget", type=float, default=60.0, metavar="SECONDS",
                        help="stop searching after this long (default 60)")
    parser.add_argument("--seed", type=int, default=None, help="generation and tie-break seed (default: random)")
    parser.add_argument("--timeout", type=float, default=20.0, metavar="S",
                        help="per-call timeout; a slower answer is a hang finding (default 20)")
    parser.add_argument("--minimise-budget", type=float, default=30.0, metavar="S",
                        help="time for minimising the first non-conformance (default 30)")
    parser.add_argument("--report", default="reports", metavar="DIR", help="report folder parent (default reports)")
    parser.add_argument("--scenarios", metavar="DIR", help="run every scenario file in DIR instead of generating")
    parser.add_argument("--stdin", action="store_true", help="give the scenario on standard input (`-`)")
    parser.add_argument("--workers", type=int, default=2, metavar="N",
                        help="implementation calls at once (default 2; python: implementations use 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from schedcheck.conform.impl import ImplSpecError, parse_impl
    from schedcheck.conform.search import folder_scenarios, generated_scenarios, search
    from schedcheck.progress import Progress
    from schedcheck.scenario.errors import ScenarioError

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"schedcheck conform: seed {seed}", file=sys.stderr)
    if args.budget <= 0 or args.timeout <= 0:
        print("schedcheck: conform: --budget and --timeout must be positive", file=sys.stderr)
        return 2
    try:
        impl = parse_impl(args.impl, timeout=args.timeout, stdin=args.stdin)
        source = folder_scenarios(args.scenarios) if args.scenarios else generated_scenarios(seed)
    except ImplSpecError as exc:
        print(f"schedcheck: conform: {exc}", file=sys.stderr)
        return 2
    except ScenarioError as exc:
        print(f"schedcheck: {exc}", file=sys.stderr)
        return 2
    from schedcheck.report_folder import unusable_parent

    problem = unusable_parent(Path(args.report))
    if problem:
        print(f"schedcheck: conform: --report {args.report}: {problem}", file=sys.stderr)
        return 2
    progress = None if args.json else Progress(sys.stderr, "conform", args.budget)
    workers = 1 if impl.target is not None else max(1, args.workers)  # no fork() from several threads
    found = search(impl, source, seed, args.budget, args.minimise_budget, progress, workers)
    if progress is not None:
        progress.close()
    report_dir = None
    if not found.conformant:
        from schedcheck.conform.report import write_conform_report

        report_dir = write_conform_report(Path(args.report), found, impl.label)
    summary = _summary(found, impl.label, report_dir)
    if args.json:
        json.dump(summary, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_text(summary) + "\n")
    return 0 if found.conformant else 1


def _summary(found, label: str, report_dir) -> dict:
    from schedcheck.conform.replay import rule_coverage

    out = {"implementation": label, "seed": found.seed, "conformant": found.conformant,
           "scenarios": found.scenarios, "seconds": round(found.seconds, 3), "rules": rule_coverage(),
           "msPerScenario": round(1000 * found.call_seconds / found.scenarios, 1) if found.scenarios else None}
    if not found.conformant:
        verdict = found.minimised_verdict or found.failing
        out.update({"finding": verdict.findings[0].to_json(), "foundAfterSeconds": round(found.found_after, 3),
                    "originalScenario": found.names[-1],
                    "minimisation": found.stats.to_json() if found.stats is not None else None,
                    "report": str(report_dir), "counterexample": str(report_dir / "counterexample.yaml")})
    return out


def _text(summary: dict) -> str:
    rules = summary["rules"]
    head = (f"{summary['implementation']}: {summary['scenarios']} scenario(s) in {summary['seconds']:.1f} s "
            f"(seed {summary['seed']}, {summary['msPerScenario']} ms per implementation call)\n"
            f"judged by {rules['judged']} catalog rules over its history; {rules['skipped']} need the reference's "
            f"internal state and are skipped (schedcheck invariants lists them)")
    if summary["conformant"]:
        return head + "\nconformant: no finding within the budget. Exit 0."
    finding = summary["finding"]
    stats = summary.get("minimisation") or {}
    size = stats.get("after") or {}
    return "\n".join([
        head,
        f"NOT conformant after {summary['foundAfterSeconds']:.1f} s on {summary['originalScenario']}: "
        f"{finding['kind']}" + (f" (cycle {finding['cycle']})" if finding.get("cycle") is not None else ""),
        f"  {finding['message']}",
        f"minimised to {size.get('nodes', '?')} node(s), {size.get('pods', '?')} pod(s), {size.get('jobs', '?')} "
        f"job(s), {size.get('cycles', '?')} cycle(s) in {stats.get('attempts', '?')} attempts",
        f"report: {summary['report']}",
        f"replay: schedcheck replay {summary['counterexample']} --impl '{summary['implementation']}'",
        "Exit 1."])
