"""`schedcheck prove`: discharge the Z3 proof obligations of model/ (statement, result, time, counterexample)."""

from __future__ import annotations

import argparse
import json
import sys
import time

DESCRIPTION = ("Prove, for every input within the stated bounds, the laws the scheduler relies on (resource "
               "algebra, node ledger transitions, gang counts, DRF, proportion's deserved, eviction order), or "
               "print a concrete counterexample. Some laws are expected to fail (documented findings in "
               "docs/model.md); their counterexamples do not fail the run.")
EPILOG = """example:
  schedcheck prove
  schedcheck prove --only ledger            # one group
  schedcheck prove --only resource.le-transitive --json

exit status: 0 every obligation proved or refuted as documented, 1 an unexpected result, 2 usage"""

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--only", help="comma-separated obligation names or groups (resource, ledger, gang, "
                                       "drf, proportion, evictions)")


def main(args: argparse.Namespace) -> int:
    from schedcheck.model.catalog import select
    from schedcheck.model.obligation import discharge

    names = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    try:
        obligations = select(names)
    except KeyError as exc:
        print(f"schedcheck: prove: --only: unknown obligation or group {exc.args[0]!r} "
              f"(run `schedcheck prove --json` for the names)", file=sys.stderr)
        return EXIT_USAGE
    start = time.perf_counter()
    verdicts = []
    for obligation in obligations:
        verdict = discharge(obligation)
        verdicts.append(verdict)
        if not args.json and sys.stderr.isatty():
            print(f"  {obligation.name}: {verdict.outcome.result}", file=sys.stderr)
    total = time.perf_counter() - start
    ok = all(v.ok for v in verdicts)
    if args.json:
        json.dump({"ok": ok, "seconds": round(total, 3), "obligations": [v.to_json() for v in verdicts],
                   "summary": _summary(verdicts)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_render(verdicts, total))
    return EXIT_OK if ok else EXIT_FAILED


def _summary(verdicts) -> dict[str, int]:
    return {
        "obligations": len(verdicts),
        "proved": sum(v.outcome.result == "proved" for v in verdicts),
        "expectedCounterexamples": sum(v.outcome.result == "counterexample" and v.ok for v in verdicts),
        "unexpected": sum(not v.ok for v in verdicts),
    }


def _render(verdicts, total: float) -> str:
    from schedcheck.render import table

    rows = []
    for v in verdicts:
        result = v.outcome.result
        if result == "counterexample":
            result += " (expected)" if v.ok else " (UNEXPECTED)"
        elif not v.ok:
            result += " (UNEXPECTED)"
        rows.append([v.obligation.name, result, f"{v.seconds:.3f}s"])
    out = [table(["obligation", "result", "time"], rows)]
    for v in verdicts:
        if v.outcome.result == "proved":
            continue
        out.append(f"{v.obligation.name}: {v.obligation.statement}")
        if v.outcome.counterexample:
            out.append(f"  counterexample: {json.dumps(v.outcome.counterexample, sort_keys=False)}")
        if v.outcome.detail:
            out.append(f"  {v.outcome.detail}")
        if v.ok and v.obligation.finding:
            out.append(f"  finding: {v.obligation.finding}")
    s = _summary(verdicts)
    out.append(f"{s['obligations']} obligations: {s['proved']} proved, {s['expectedCounterexamples']} refuted as "
               f"documented, {s['unexpected']} unexpected; {total:.2f}s")
    return "\n".join(part.rstrip("\n") for part in out) + "\n"
