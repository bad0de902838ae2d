"""Differential run: every scenario through the reference and through upstream Volcano (the adapter).

    schedcheck differential tests/scenarios examples [--json]

Compares binds, evictions (as a multiset), pipelined tasks, PodGroup phases, task
status counts, and the PodGroup annotations and conditions the scheduler writes
(those two where upstream's answer has them). A scenario agrees when all match.
When they do not, conform's tie-tolerant
differential (schedcheck/conform/differential.py, the one comparison of two
answers) decides: a *tie* when the reference, guided by upstream's choices at its
equally scored nodes and victims, makes upstream's decisions; otherwise a
*divergence*, printed in full for a human to classify (reference bug, upstream
bug, or adapter limitation).
Exit status: 0 when every scenario agrees or ties, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from schedcheck.adapters.volcano import AdapterError, adapter_command
from schedcheck.conform.differential import COMPARED, differs, normalised

FIELDS = ("binds", "evicted", "pipelined", "podGroupPhases", "taskStatusCounts", "podGroupAnnotations",
          "podGroupConditions")
SUFFIXES = (".yaml", ".yml", ".json")


ANSWER_FILES = ("answer.json", ".answers.json")  # saved answers beside scenarios (check-trace input, rediscovery)


def scenario_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES and f.is_file()
                            and not f.name.endswith(ANSWER_FILES))
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    return files


def run_reference(path: Path, seed: int = 0) -> dict[str, Any]:
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    return run_scenario(load_scenario(path), seed=seed).to_json(with_trace=True)


def run_upstream(command: list[str], path: Path, seed: int = 0) -> dict[str, Any]:
    from schedcheck.scenario.loader import load_scenario

    server = load_scenario(path).extender_server
    if server is None:
        return _run_adapter(command, path, seed)
    # The scenario names the extender's process: upstream's scheduler gets its own, started from the same
    # command, and reads the scenario with the served URL in place (scenario/extender.py).
    import tempfile

    import yaml

    from schedcheck.scenario.conf_loader import load_yaml_documents
    from schedcheck.scenario.extender import resolve_document, serving

    with serving(server) as url, tempfile.TemporaryDirectory() as tmp:
        doc = load_yaml_documents(path.read_text(encoding="utf-8"), str(path))[0]
        resolved = Path(tmp) / path.name
        resolved.write_text(yaml.safe_dump(resolve_document(doc, url), sort_keys=False), encoding="utf-8")
        return _run_adapter(command, resolved, seed)


class UpstreamPanic(RuntimeError):
    """Upstream's scheduler panicked (the Go runtime's "panic: ..." line is the message)."""


def _run_adapter(command: list[str], path: Path, seed: int) -> dict[str, Any]:
    env = {**os.environ, "SCHEDCHECK_PROTOCOL": "1", "SCHEDCHECK_SEED": str(seed)}
    done = subprocess.run([*command, str(path)], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        panic = next((line for line in lines if line.startswith("panic: ")), None)
        if panic is not None:
            raise UpstreamPanic(panic[len("panic: "):].strip())
        raise RuntimeError(lines[-1])
    return json.loads(done.stdout)


def _asserted(ref: dict[str, Any]) -> dict[str, Any] | None:
    """The reference's record of an upstream assertion (where upstream panics), if its run raised one."""
    return next((f for f in [*ref.get("violations", []), *ref.get("findings", [])] if f.get("id") == "upstream.assert"),
                None)


def differences(ref: dict[str, Any], up: dict[str, Any]) -> dict[str, Any]:
    """Where two answers differ, field by field (evictions as a multiset), for a human to read."""
    diffs: dict[str, Any] = {}
    for field, _ in COMPARED:
        if not differs(field, up, ref):
            continue
        a, b = normalised(field, ref.get(field)), normalised(field, up.get(field))
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if keys:
            diffs[field] = {k: {"reference": a.get(k), "upstream": b.get(k)} for k in keys}
    if Counter(ref.get("evicted", [])) != Counter(up.get("evicted", [])):
        diffs["evicted"] = {"reference": sorted(ref.get("evicted", [])), "upstream": sorted(up.get("evicted", []))}
    return diffs


def classify(path: Path, ref: dict[str, Any], up: dict[str, Any], seed: int) -> dict[str, Any]:
    """agree, tie (a replay of the reference guided by upstream's choices at its ties, conform's
    differential, makes upstream's decisions), not-upstream (the scenario uses a schedcheck-only
    switch, pipelinePersistence: persistent) or divergence; with the differences."""
    from schedcheck.conform.differential import compare as guided_compare
    from schedcheck.scenario.loader import load_scenario

    diffs = differences(ref, up)
    if not diffs:
        return {"verdict": "agree", "differences": diffs}
    scenario = load_scenario(path)
    if scenario.conf.persistent_pipelines:
        verdict = "not-upstream"
    else:
        verdict = "tie" if not guided_compare(scenario, up, seed) else "divergence"
    return {"verdict": verdict, "differences": diffs}


def differential(files: list[Path], command: list[str], seed: int = 0) -> dict[str, Any]:
    rows = []
    for path in files:
        row: dict[str, Any] = {"scenario": str(path)}
        ref = None
        try:
            ref = run_reference(path, seed)
            up = run_upstream(command, path, seed)
        except UpstreamPanic as panic:
            asserted = _asserted(ref or {})
            if asserted is not None:  # both stop at the same place: the reference predicted the panic
                known = f" (known finding {asserted['known']})" if asserted.get("known") else ""
                row.update(verdict="agree", differences={},
                           detail=f"upstream panics ({panic}); the reference raises upstream.assert{known}")
            else:
                row.update(verdict="error", error=f"upstream panics: {panic}")
        except Exception as err:  # noqa: BLE001 - a scenario that cannot run is reported, not fatal
            row.update(verdict="error", error=f"{type(err).__name__}: {err}")
        else:
            row.update(classify(path, ref, up, seed))
        rows.append(row)
    counts = Counter(r["verdict"] for r in rows)
    total = len(rows) - counts["not-upstream"]  # rates over the scenarios upstream can run
    return {
        "scenarios": len(rows),
        "counts": dict(counts),
        "agreementRate": round(counts["agree"] / total, 3) if total else None,
        "agreementRateWithTies": round((counts["agree"] + counts["tie"]) / total, 3) if total else None,
        "notUpstream": counts["not-upstream"],
        "results": rows,
    }


def render(report: dict[str, Any]) -> str:
    lines = []
    for r in report["results"]:
        if r["verdict"] == "agree":
            continue
        lines.append(f"{r['verdict'].upper():10} {r['scenario']}")
        if "error" in r:
            lines.append(f"    {r['error']}")
        for field, d in r.get("differences", {}).items():
            lines.append(f"    {field}: {json.dumps(d, sort_keys=True)}")
    c = report["counts"]
    lines.append(
        f"{report['scenarios']} scenarios: {c.get('agree', 0)} agree, {c.get('tie', 0)} tie, "
        f"{c.get('divergence', 0)} diverge, {c.get('error', 0)} error, {c.get('not-upstream', 0)} not upstream's "
        f"(schedcheck-only switches); agreement {report['agreementRate']:.1%} "
        f"({report['agreementRateWithTies']:.1%} counting ties)")
    return "\n".join(lines)


HELP = "run scenarios through the reference and upstream Volcano; show where they decide differently"
DESCRIPTION = ("Run each scenario through the reference and through upstream Volcano (the Go adapter, "
               "SCHEDCHECK_VOLCANO_SRC or the pinned release); a guided replay classifies each difference "
               "as agreement, legal tie, divergence or error.")
EPILOG = """example:
  schedcheck differential tests/scenarios examples
  SCHEDCHECK_VOLCANO_SRC=~/src/volcano schedcheck differential tests/scenarios --json

exit status: 0 no divergence or error, 1 some, 2 unreadable input or no adapter"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", help="scenario files or directories")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seed", type=int, default=0, help="seed for both implementations (default 0)")


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    if not isinstance(args, argparse.Namespace):
        parser = argparse.ArgumentParser(prog="schedcheck differential", description=DESCRIPTION, epilog=EPILOG,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        add_arguments(parser)
        args = parser.parse_args(args)
    try:
        files = scenario_files(args.paths)
        command = adapter_command()
    except (FileNotFoundError, AdapterError) as err:
        print(f"schedcheck: differential: {err}", file=sys.stderr)
        return 2
    report = differential(files, command, args.seed)
    print(json.dumps(report, indent=2) if args.json else render(report))
    bad = report["counts"].get("divergence", 0) + report["counts"].get("error", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
