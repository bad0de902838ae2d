"""`schedcheck check-trace FILE`: check a recorded protocol-1 answer offline, with no implementation to run."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "check a recorded trace (a protocol-1 result and its scenario) offline"
DESCRIPTION = (
    "Check what an implementation recorded, without running it. FILE (JSON or YAML) is either a bundle "
    "{\"scenario\": SCENARIO_DOCUMENT_OR_PATH, \"result\": RESULT} (what `schedcheck conform` writes as "
    "answer.json), or a protocol-1 result carrying \"scenarioFile\": PATH (relative to FILE). Checked: the "
    "result schema, pods and nodes that do not exist, trace/result consistency, the invariants judged from "
    "outside on its binds, evictions and pipelines (cycle by cycle when a trace is present), and any ledgers "
    "it reports; with --reference also the tie-tolerant differential against the reference. "
    "Exit 0 clean, 1 violation, 2 unreadable."
)
EPILOG = """examples:
  schedcheck check-trace reports/20261122T010203Z-conform-check.gang.commit-ready/answer.json
  schedcheck run tests/scenarios/gang-commit.yaml --json --trace > r.json   # then add "scenarioFile"
  schedcheck check-trace answer.yaml --reference --seed 0 --json
"""

EXIT_CLEAN, EXIT_VIOLATION, EXIT_UNREADABLE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a bundle {scenario, result} or a result naming its scenarioFile")
    parser.add_argument("--reference", action="store_true",
                        help="also compare with the reference (tie-tolerant differential)")
    parser.add_argument("--seed", type=int, default=None, help="tie-break seed for --reference (default: the "
                                                               "result's seed, else 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


class Unreadable(Exception):
    pass


def load_bundle(path: str):
    """(scenario, scenario document, result) from a check-trace FILE; Unreadable with a one-line reason."""
    from pathlib import Path

    import yaml

    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_scenario, scenario_from_document

    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)  # JSON is YAML
    except (OSError, UnicodeDecodeError) as exc:
        raise Unreadable(f"{path}: cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        raise Unreadable(f"{path}: not JSON or YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise Unreadable(f"{path}: expected an object, got {type(data).__name__}")
    base = Path(path).parent
    try:
        if "result" in data:
            result, source = data["result"], data.get("scenario")
            if isinstance(source, str):
                scenario = load_scenario(base / source)
                doc = scenario.document
            elif isinstance(source, dict):
                scenario, doc = scenario_from_document(source, f"{path}: scenario"), source
            else:
                raise Unreadable(f"{path}: field scenario: expected a scenario document or a path")
        elif isinstance(data.get("scenarioFile"), str):
            result = data
            scenario = load_scenario(base / data["scenarioFile"])
            doc = scenario.document
        else:
            raise Unreadable(f"{path}: neither a bundle {{scenario, result}} nor a result with scenarioFile")
    except ScenarioError as exc:
        raise Unreadable(str(exc)) from None
    except OSError as exc:
        raise Unreadable(f"{path}: scenarioFile: {exc.strerror or exc}") from None
    if not isinstance(result, dict):
        raise Unreadable(f"{path}: field result: expected an object")
    return scenario, doc, result


def main(args: argparse.Namespace) -> int:
    from schedcheck.conform.check import check_answer

    try:
        scenario, _, result = load_bundle(args.file)
    except Unreadable as exc:
        print(f"schedcheck: check-trace: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    seed = args.seed if args.seed is not None else result.get("seed", 0) if isinstance(result.get("seed"), int) else 0
    findings = check_answer(scenario, result, seed, differential=args.reference)
    traced = isinstance(result.get("trace"), list)
    if args.json:
        json.dump({"file": args.file, "scenario": scenario.name, "clean": not findings, "traced": traced,
                   "reference": args.reference, "findings": [f.to_json() for f in findings]},
                  sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif findings:
        sys.stdout.write(f"{args.file}: {len(findings)} finding(s) on scenario {scenario.name}:\n")
        sys.stdout.write("".join(f"  {f.line()}\n" for f in findings) + "Exit 1.\n")
    else:
        note = "" if traced else " (no trace: decisions judged per cycle only for a one-cycle scenario)"
        sys.stdout.write(f"{args.file}: clean on scenario {scenario.name}{note}. Exit 0.\n")
    return EXIT_VIOLATION if findings else EXIT_CLEAN
