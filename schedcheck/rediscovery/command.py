"""`schedcheck rediscover`: the rediscovery benchmark (schedcheck.rediscovery), one row per catalog bug."""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import yaml

HELP = "find fixed upstream Volcano bugs again in upstream's own code (buggy and fixed builds)"
DESCRIPTION = (
    "For each bug of the catalog (schedcheck/rediscovery/bugs.yaml: upstream fix commits and their parents), "
    "export both commits from a Volcano git repository, build the Go adapter against each, and run generated "
    "scenarios through the buggy build until the harness flags one that the fixed build passes. That scenario "
    "is minimised (both builds re-run on every candidate), replayed red on the buggy build and green on the "
    "fixed one, and written to the report folder; --keep DIR keeps it as a regression scenario with both "
    "builds' answers, and --table FILE rewrites the results table in FILE. Exit 0 when every bug was found, "
    "1 when one was not (or its build failed), 2 on a usage error.")
EPILOG = """examples:
  schedcheck rediscover --list
  schedcheck rediscover --bug reclaim-ignores-free-room-and-over-evicts --budget 120 --seed 1
  schedcheck rediscover --budget 600 --seed 1 --keep schedcheck/corpus/rediscovery --table docs/rediscovery.md
  schedcheck rediscover --bug releasing-pods-drop-the-podgroup-phase \\
      --replay schedcheck/corpus/rediscovery/releasing-pods-drop-the-podgroup-phase.yaml
"""
TABLE_BEGIN, TABLE_END = "<!-- rediscovery-table: begin -->", "<!-- rediscovery-table: end -->"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bug", action="append", metavar="ID", help="only this bug (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the catalog and exit")
    parser.add_argument("--git", metavar="DIR", help="a Volcano git repository with the commits "
                        "(default: $SCHEDCHECK_VOLCANO_GIT, else the fetched mirror)")
    parser.add_argument("--budget", type=float, default=600.0, metavar="SECONDS",
                        help="search time per bug (default 600)")
    parser.add_argument("--minimise-budget", type=float, default=90.0, metavar="S",
                        help="time to minimise each found scenario (default 90)")
    parser.add_argument("--seed", type=int, help="generation and tie-break seed (default: random)")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="S", help="per-call timeout (default 30)")
    parser.add_argument("--workers", type=int, default=2, metavar="N", help="buggy-build calls at once (default 2)")
    parser.add_argument("--report", default="reports", metavar="DIR", help="report folder parent (default reports)")
    parser.add_argument("--keep", metavar="DIR", help="keep each found counterexample here as a regression "
                        "scenario (<bug>.yaml) with both builds' answers (<bug>.answers.json)")
    parser.add_argument("--table", metavar="FILE", help=f"rewrite the table between {TABLE_BEGIN} and "
                        f"{TABLE_END} in FILE (the markers are added at the end when missing)")
    parser.add_argument("--replay", metavar="FILE", help="no search: run this scenario (a kept counterexample) on "
                        "the bug's buggy and fixed builds, three times each, and say whether it is red on the first "
                        "and clear on the second (exit 0 when it is)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace) -> int:
    from schedcheck.rediscovery.catalog import CatalogError, load_catalog, select

    try:
        bugs = select(load_catalog(), args.bug)
    except CatalogError as exc:
        print(f"schedcheck: rediscover: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for bug in bugs:
            print(f"{bug.id:44} {bug.parent[:12]} -> {bug.fix[:12]}  {bug.upstream}: {bug.title}")
        return 0
    if args.budget <= 0 or args.timeout <= 0 or args.minimise_budget < 0:
        print("schedcheck: rediscover: --budget and --timeout must be positive", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("schedcheck: rediscover: --workers: expected 1 or more", file=sys.stderr)
        return 2
    from schedcheck.report_folder import unusable_parent

    problem = None if args.replay else unusable_parent(Path(args.report))
    if problem:
        print(f"schedcheck: rediscover: --report {args.report}: {problem}", file=sys.stderr)
        return 2
    from schedcheck.rediscovery.sources import MIRROR_HINT, default_git_dir

    git_dir = Path(args.git).expanduser() if args.git else default_git_dir()
    if git_dir is None or not git_dir.is_dir():
        print(f"schedcheck: rediscover: --git: not a directory; give {MIRROR_HINT}", file=sys.stderr)
        return 2
    if args.replay:
        return _replay_file(bugs, git_dir, args)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"schedcheck rediscover: seed {seed}, {len(bugs)} bug(s), {args.budget:g} s each", file=sys.stderr)
    from schedcheck.report_folder import write_report_folder

    rows = [_one(bug, git_dir, seed, args) for bug in bugs]
    files: dict[str, Any] = {"report.json": json.dumps({"seed": seed, "bugs": rows}, indent=2) + "\n",
                             "report.md": render_table(rows) + "\n"}
    for row in rows:
        files.update(row.pop("_files", {}))
    report_dir = write_report_folder(Path(args.report), "rediscovery", files)
    if args.table:
        update_table(Path(args.table), rows, seed, args.budget)
    if args.json:
        print(json.dumps({"seed": seed, "report": str(report_dir), "bugs": rows}, indent=2))
    else:
        print(render_table(rows))
        print(f"\nreport: {report_dir}")
    return 0 if all(row["found"] for row in rows) else 1


def _builds(bug: Any, git_dir: Path, timeout: float) -> dict[str, Any]:
    """The buggy ("parent") and fixed ("fix") builds of a bug, as implementations (SourceError, AdapterError)."""
    from schedcheck.adapters.volcano import adapter_command
    from schedcheck.conform.impl import Implementation
    from schedcheck.rediscovery.sources import export_commit

    impls = {}
    for role in ("parent", "fix"):
        commit = getattr(bug, role)
        impls[role] = Implementation(f"volcano@{commit[:12]}", argv=adapter_command(export_commit(git_dir, commit)),
                                     timeout=timeout)
    return impls


def _replay_file(bugs: list[Any], git_dir: Path, args: argparse.Namespace) -> int:
    from schedcheck.adapters.volcano import AdapterError
    from schedcheck.rediscovery.hunt import replay
    from schedcheck.rediscovery.sources import SourceError
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import load_scenario

    if len(bugs) != 1:
        print("schedcheck: rediscover: --replay needs exactly one --bug", file=sys.stderr)
        return 2
    try:
        doc = load_scenario(Path(args.replay)).document
        impls = _builds(bugs[0], git_dir, args.timeout)
    except ScenarioError as exc:
        print(f"schedcheck: {exc}", file=sys.stderr)
        return 2
    except (OSError, SourceError, AdapterError) as exc:
        print(f"schedcheck: rediscover: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int(((doc.get("metadata") or {}).get("annotations") or {})
                                                       .get("schedcheck.io/seed", 0))
    runs = replay(impls["parent"], impls["fix"], doc, seed, 3)
    red, still = sum(runs["parent"]), sum(runs["fix"])
    print(f"{bugs[0].id}: red on the buggy build {bugs[0].parent[:12]} in {red}/3 runs; the fixed build "
          f"{bugs[0].fix[:12]} shows the finding in {still}/3")
    return 0 if red == 3 and still == 0 else 1


def _one(bug: Any, git_dir: Path, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    from schedcheck.adapters.volcano import AdapterError
    from schedcheck.conform.search import generated_scenarios
    from schedcheck.progress import Progress
    from schedcheck.rediscovery.hunt import hunt
    from schedcheck.rediscovery.sources import SourceError

    row: dict[str, Any] = {"id": bug.id, "upstream": bug.upstream, "area": bug.area, "parent": bug.parent[:12],
                           "fix": bug.fix[:12], "release": bug.release, "title": bug.title, "found": False}
    started = time.monotonic()
    try:
        impls = _builds(bug, git_dir, args.timeout)
    except (SourceError, AdapterError) as exc:
        row["error"] = str(exc)
        print(f"  {bug.id}: {exc}", file=sys.stderr)
        return row
    row["buildSeconds"] = round(time.monotonic() - started, 1)
    progress = None if args.json else Progress(sys.stderr, f"rediscover {bug.id}", args.budget)
    found = hunt(impls["parent"], impls["fix"], generated_scenarios(seed), seed, args.budget, args.minimise_budget,
                 args.workers, progress=progress)
    if progress is not None:
        progress.close()
    row.update({"scenarios": found.scenarios, "sharedFlags": found.shared, "sharedKinds": found.shared_kinds,
                "seconds": round(found.seconds, 1)})
    if not found.found:
        return row
    verdict = found.minimised_verdict or found.failing
    assert verdict is not None and found.minimised is not None
    from schedcheck.minimize import scenario_counts

    row.update({"found": found.confirmed, "unconfirmed": not found.confirmed,
                "foundAfterSeconds": round(found.found_after or 0.0, 1), "kind": verdict.kind,
                "fixFlaggedOtherwise": any(found.replays.get("fixFlagged", [])),
                "decisionsStable": all(found.replays.get("stable", [False])),
                "finding": verdict.findings[0].message, "size": scenario_counts(found.minimised),
                "replaysRedOnParent": f"{sum(found.replays['parent'])}/{len(found.replays['parent'])}",
                "replaysClearOnFix": f"{len(found.replays['fix']) - sum(found.replays['fix'])}/"
                                     f"{len(found.replays['fix'])}"})
    scenario = _regression_scenario(bug, found.minimised, verdict.kind or "", seed)
    answers = _answers(impls, found.minimised, seed)
    row["_files"] = {f"{bug.id}.yaml": scenario, f"{bug.id}.answers.json": answers,
                     f"{bug.id}.original.yaml": yaml.safe_dump(found.original, sort_keys=False, width=120)}
    if args.keep and found.confirmed:  # a flaky difference is no regression scenario
        keep = Path(args.keep)
        keep.mkdir(parents=True, exist_ok=True)
        for name in (f"{bug.id}.yaml", f"{bug.id}.answers.json"):
            (keep / name).write_text(row["_files"][name], encoding="utf-8")
        row["kept"] = str(keep / f"{bug.id}.yaml")
    return row


def _regression_scenario(bug: Any, doc: dict[str, Any], kind: str, seed: int) -> str:
    out = dict(doc)
    metadata = dict(out.get("metadata") or {})
    metadata["name"] = f"rediscovered-{bug.id}"
    metadata["annotations"] = {**(metadata.get("annotations") or {}), "schedcheck.io/upstream-bug": bug.upstream,
                               "schedcheck.io/conform-finding": kind, "schedcheck.io/seed": str(seed)}
    out["metadata"] = metadata
    header = [f"# Rediscovered upstream bug: {bug.upstream} ({bug.title}).",
              f"# Found by `schedcheck rediscover --bug {bug.id} --seed {seed}`: the harness flags upstream at "
              f"{bug.parent[:12]} ({kind}) and not at the fix {bug.fix[:12]}.",
              f"# Bug: {bug.bug}",
              f"# Replay on both builds: schedcheck rediscover --bug {bug.id} --replay THIS_FILE",
              f"# {bug.id}.answers.json beside it holds both builds' answers; `schedcheck check-trace` judges them."]
    wrapped = []
    for line in header:
        while len(line) > 118:
            cut = line.rfind(" ", 0, 118)
            wrapped.append(line[:cut])
            line = "#   " + line[cut + 1:]
        wrapped.append(line)
    return "\n".join(wrapped) + "\n" + yaml.safe_dump(out, sort_keys=False, width=120)


def _answers(impls: dict[str, Any], doc: dict[str, Any], seed: int) -> str:
    from schedcheck.rediscovery.hunt import _verdict

    answers = {}
    for role, impl in impls.items():
        verdict = _verdict(impl, doc, seed)
        answers[role] = {"implementation": impl.label, "result": verdict.result if verdict else None,
                         "findings": [f.to_json() for f in verdict.findings] if verdict else []}
    return json.dumps({"scenario": doc, "seed": seed, **answers}, indent=1) + "\n"


def render_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| bug | upstream | area | buggy -> fixed | found | after | scenarios | flagged on both | finding "
             "| red on buggy | clear on fixed |", "|" + " --- |" * 11]
    for row in rows:
        if row.get("error"):
            result = f"build failed: {row['error']}"
            lines.append(f"| `{row['id']}` | {row['upstream']} | {row['area']} | {row['parent']} -> {row['fix']} "
                         f"| {result} | | | | | | |")
            continue
        lines.append(
            f"| `{row['id']}` | {row['upstream']} | {row['area']} | {row['parent']} -> {row['fix']} "
            f"| {_verdict_cell(row)} | {str(row['foundAfterSeconds']) + ' s' if 'foundAfterSeconds' in row else ''} "
            f"| {row.get('scenarios', '')} | {row.get('sharedFlags', '')} | {('`' + row['kind'] + '`') if row.get('kind') else ''} "
            f"| {row.get('replaysRedOnParent', '')} | {row.get('replaysClearOnFix', '')}"
            f"{' (flagged otherwise)' if row.get('fixFlaggedOtherwise') else ''} |")
    return "\n".join(lines)


def _verdict_cell(row: dict[str, Any]) -> str:
    if row["found"]:
        return "**yes**"
    return "flaky (not every replay agrees)" if row.get("unconfirmed") else "no"


def update_table(path: Path, rows: list[dict[str, Any]], seed: int, budget: float) -> None:
    """Replace the rows of the bugs just run in FILE's table (others are kept), between the markers."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    old_rows: dict[str, str] = {}
    if TABLE_BEGIN in text and TABLE_END in text:
        head, rest = text.split(TABLE_BEGIN, 1)
        body, tail = rest.split(TABLE_END, 1)
        for line in body.splitlines():
            if line.startswith("| `"):
                old_rows[line.split("`")[1]] = line
    else:
        head, tail = text.rstrip() + ("\n\n" if text.strip() else ""), "\n"
    new = render_table(rows).splitlines()
    for line in new[2:]:
        old_rows[line.split("`")[1]] = line + f" <!-- seed {seed}, {budget:g} s -->"
    table = "\n".join(new[:2] + [old_rows[key] for key in old_rows])
    path.write_text(f"{head}{TABLE_BEGIN}\n{table}\n{TABLE_END}{tail}", encoding="utf-8")
