"""`schedcheck selftest`: does the harness catch the bugs it exists to catch?

Every mutant of schedcheck/mutants.py (a deliberate bug in the reference: a re-created upstream bug or a
systematic rule mutant) has a scenario in schedcheck/mutant_scenarios/ on which the clean reference runs
without a violation or finding. Here each mutant is run on its scenario: it is caught when a safety
invariant fails, or when a quality rule reports a finding the clean reference does not. With `--budget S`,
the blind gate (no scenario given, fresh example database) also searches for it for up to S seconds: it
replays the packaged corpus first, with the mutant's own scenario withheld (`--no-corpus`: generation only).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HELP = "run every deliberate bug and show which rule catches it"
DESCRIPTION = ("For each mutant (a deliberate bug in the reference), run its scenario with and without the bug: "
               "which invariant flags it (a safety violation, or a finding the clean reference does not "
               "produce), and, with --budget, how long the blind gate needs to find it without that scenario "
               "(the packaged corpus, the mutant's own scenario withheld, then generated scenarios).")
EPILOG = """examples:
  schedcheck selftest                       # every mutant on its own scenario (seconds)
  schedcheck selftest --budget 60 --json    # and the blind gate, up to 60 s per mutant
  schedcheck selftest --only reclaim-own-queue,overcommit-inqueue-not-added
  schedcheck selftest --budget 30 --report reports   # and reports/<time>-selftest/report.html

exit status: 0 every mutant caught on its scenario, 1 some mutant missed, 2 usage"""

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
SCENARIOS = Path(__file__).resolve().with_name("mutant_scenarios")


@dataclass
class MutantResult:
    name: str
    description: str
    source: str = ""
    caught_by: list[str] = field(default_factory=list)  # invariant ids that flagged it on its scenario
    clean_problems: list[str] = field(default_factory=list)  # safety violations of the clean reference itself
    gate_seconds: float | None = None  # blind gate: seconds until found (None: not found or not run)
    gate_invariant: str = ""
    gate_corpus: str | None = None  # the corpus scenario that found it (None: a generated one, or not found)

    @property
    def caught(self) -> bool:
        return bool(self.caught_by) and not self.clean_problems

    def to_json(self) -> dict[str, Any]:
        return {"mutant": self.name, "description": self.description, "source": self.source, "caught": self.caught,
                "caughtBy": self.caught_by, "cleanProblems": self.clean_problems,
                "gateSeconds": None if self.gate_seconds is None else round(self.gate_seconds, 1),
                "gateInvariant": self.gate_invariant, "gateCorpusScenario": self.gate_corpus}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budget", type=float, default=0.0, metavar="SECONDS",
                        help="also run the blind gate for up to this many seconds per mutant (default: 0, off)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the blind gate (default: 1)")
    parser.add_argument("--only", help="comma-separated mutant names (default: all)")
    parser.add_argument("--no-corpus", action="store_true",
                        help="the blind gate generates only (default: it replays the packaged corpus first, "
                             "without the mutant's own scenario)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--report", metavar="DIR", help="also write DIR/<time>-selftest/ with report.json, report.md "
                                                       "and report.html (a table and a chart of the blind gate)")


def scenario_path(name: str) -> Path:
    return SCENARIOS / f"{name}.yaml"


def judge(name: str) -> MutantResult:
    """Run the mutant's scenario clean and with the bug; what flagged the bug."""
    from schedcheck.mutants import MUTANTS, mutant
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    chosen = MUTANTS[name]
    result = MutantResult(name, chosen.description, chosen.source)
    clean = run_scenario(load_scenario(scenario_path(name)), seed=0)
    result.clean_problems = sorted({v["id"] for v in clean.violations})
    clean_findings = {f["id"] for f in clean.findings}
    with mutant(name):
        buggy = run_scenario(load_scenario(scenario_path(name)), seed=0)
    flagged = {v["id"] for v in buggy.violations} | ({f["id"] for f in buggy.findings} - clean_findings)
    result.caught_by = sorted(flagged)
    return result


def blind_gate(name: str, budget: float, seed: int, corpus: bool = True) -> tuple[float | None, str, str | None]:
    """Seconds until the gate's worker, knowing nothing of the mutant's scenario, finds it (safety rules and
    the corpus's expectations), the rule or expectation that did, and the corpus scenario if one did. The
    mutant's own scenario is withheld from the corpus."""
    from schedcheck.gate_properties import WorkerConfig, run_worker

    with tempfile.TemporaryDirectory(prefix="schedcheck-selftest-") as scratch:
        config = WorkerConfig(budget=budget, seed=seed, database=f"{scratch}/db", mutant=name, stats_dir=scratch,
                              corpus=corpus, corpus_exclude=[name])
        _, failure = run_worker(config)
    if failure is None:
        return None, "", None
    return failure.found_after, failure.invariant, failure.corpus


def main(args: argparse.Namespace) -> int:
    from schedcheck.mutants import MUTANTS

    names = sorted(MUTANTS)
    if args.budget < 0:
        print("schedcheck: selftest: --budget: expected seconds per mutant, 0 (no blind gate) or more",
              file=sys.stderr)
        return EXIT_USAGE
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in MUTANTS]
        if unknown:
            print(f"schedcheck: selftest: --only: unknown mutant(s) {', '.join(unknown)} "
                  f"(known: {', '.join(names)})", file=sys.stderr)
            return EXIT_USAGE
        names = wanted
    missing = [n for n in names if not scenario_path(n).is_file()]
    if missing:
        print(f"schedcheck: selftest: no scenario for {', '.join(missing)} in {SCENARIOS}", file=sys.stderr)
        return EXIT_USAGE
    from schedcheck.progress import Progress

    started = time.monotonic()
    results = []
    progress = Progress(sys.stderr, "selftest", len(names), unit="mutants")
    for name in names:
        result = judge(name)
        if args.budget > 0:
            result.gate_seconds, result.gate_invariant, result.gate_corpus = blind_gate(
                name, args.budget, args.seed, corpus=not getattr(args, "no_corpus", False))
        results.append(result)
        figures = {"caught": sum(r.caught for r in results), "missed": sum(not r.caught for r in results)}
        if args.budget > 0:
            figures["found by the gate"] = sum(r.gate_seconds is not None for r in results)
        progress.update(len(results), **figures, last=name)
    progress.close()
    caught = sum(r.caught for r in results)
    found = sum(r.gate_seconds is not None for r in results)
    summary = {"mutants": len(results), "caught": caught, "gateBudget": args.budget, "gateSeed": args.seed,
               "foundByGate": found if args.budget > 0 else None, "seconds": round(time.monotonic() - started, 1),
               "results": [r.to_json() for r in results]}
    report = getattr(args, "report", None)
    if report:
        try:
            summary["report"] = str(write_report(Path(report), summary, render(results, args.budget)))
        except OSError as exc:
            print(f"schedcheck: selftest: --report {report}: cannot write the report: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        print()
    else:
        print(render(results, args.budget))
        if report:
            print(f"report: {summary['report']}/report.html")
    return EXIT_OK if caught == len(results) else EXIT_FAILED


def write_report(parent: Path, summary: dict[str, Any], table: str) -> Path:
    """<parent>/<time>-selftest/ with report.json (the totals and every result), report.md and report.html."""
    from schedcheck.report_folder import write_report_folder
    from schedcheck.report_html.selftest import render_selftest_html

    gate = (f"- blind gate: seed {summary['gateSeed']}, budget {summary['gateBudget']:g} s per mutant"
            if summary["gateBudget"] > 0 else "- blind gate: not run (--budget S runs it)")
    markdown = "\n".join(["# schedcheck selftest", "", gate, f"- seconds: {summary['seconds']}", "", table, ""])
    return write_report_folder(parent, "selftest", {"report.json": json.dumps(summary, indent=2) + "\n",
                                                    "report.md": markdown,
                                                    "report.html": render_selftest_html(summary)})


def render(results: list[MutantResult], budget: float) -> str:
    lines = ["| mutant | source | caught on its scenario by | blind gate |", "| --- | --- | --- | --- |"]
    for r in results:
        by = ", ".join(f"`{i}`" for i in r.caught_by) if r.caught else (
            "**missed**" + (f" (clean run reports {', '.join(r.clean_problems)})" if r.clean_problems else ""))
        if budget <= 0:
            gate = "-"
        elif r.gate_seconds is None:
            gate = f"not found in {budget:g} s"
        else:
            gate = f"{r.gate_seconds:.1f} s (`{r.gate_invariant}`" + (
                f" on corpus scenario `{r.gate_corpus}`)" if r.gate_corpus else ", generated)")
        lines.append(f"| `{r.name}` | {r.source} | {by} | {gate} |")
    caught = sum(r.caught for r in results)
    summary = f"{caught} of {len(results)} mutants caught on their scenario"
    if budget > 0:
        found = [r for r in results if r.gate_seconds is not None]
        summary += (f"; the blind gate found {len(found)} within {budget:g} s each "
                    f"({sum(r.gate_corpus is not None for r in found)} on a corpus scenario, "
                    f"{sum(r.gate_corpus is None for r in found)} on a generated one)")
    return "\n".join(lines + ["", summary])
