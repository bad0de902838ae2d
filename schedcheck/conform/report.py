"""Conformance report folders: reports/<time>-conform-<kind>/, written by schedcheck.report_folder
(assembled under a temporary name and renamed into place: never half-written, never overwriting).

    counterexample.yaml  the minimised scenario, annotated; `schedcheck replay FILE --impl CMD`
    original.yaml        the scenario as the search found it
    answer.json          check-trace input: the minimised scenario and the implementation's answer
    report.json, report.md
    report.html          the same with pictures (schedcheck.report_html; self-contained, opens offline)
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from schedcheck.conform.search import SearchResult
from schedcheck.report_folder import Content, safe_name, write_report_folder
from schedcheck.report_html.conform import render_conform_html

PREFIX = "schedcheck.io/"
FINDING = PREFIX + "conform-finding"
SEED = PREFIX + "seed"
IMPL = PREFIX + "impl"


def annotate(doc: dict[str, Any], kind: str, seed: int, impl: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    if not isinstance(out.get("metadata"), dict):  # `metadata: null` is a valid scenario (the name comes from the file)
        out["metadata"] = {}
    metadata = out["metadata"]
    annotations = metadata.get("annotations")
    notes = {k: v for k, v in (annotations if isinstance(annotations, dict) else {}).items()
             if not str(k).startswith(PREFIX)}
    notes.update({FINDING: kind, SEED: str(seed), IMPL: impl})
    metadata["annotations"] = notes
    return out


def payload(found: SearchResult, impl: str) -> dict[str, Any]:
    verdict = found.minimised_verdict or found.failing
    assert verdict is not None
    from schedcheck.minimize import scenario_counts

    return {
        "command": "conform", "implementation": impl, "seed": found.seed, "conformant": False,
        "finding": verdict.findings[0].to_json(), "findings": [f.to_json() for f in verdict.findings],
        "originalFinding": found.failing.findings[0].to_json() if found.failing else None,
        "scenariosRun": found.scenarios, "foundAfterSeconds": round(found.found_after, 3),
        "minimisation": found.stats.to_json() if found.stats is not None else None,
        "scenario": scenario_counts(found.minimised or {}),
        "stderrTail": verdict.stderr[-2000:],
    }


def write_conform_report(parent: Path, found: SearchResult, impl: str) -> Path:
    verdict = found.minimised_verdict or found.failing
    assert verdict is not None and found.minimised is not None
    kind = verdict.kind or "finding"
    doc = annotate(found.minimised, kind, found.seed, impl)
    body = payload(found, impl)
    header = (f"# schedcheck conformance counterexample: {kind} ({impl}, seed {found.seed}).\n"
              f"# Replay: schedcheck replay THIS_FILE --impl '{impl}'   (exit 1: still fails, 0: conforms)\n")
    files: dict[str, Content] = {
        "counterexample.yaml": header + yaml.safe_dump(doc, sort_keys=False, width=120),
        "original.yaml": yaml.safe_dump(found.original, sort_keys=False, width=120),
    }
    if verdict.result is not None:
        files["answer.json"] = json.dumps({"scenario": doc, "result": verdict.result}, indent=1) + "\n"

    def placed(target: Path) -> dict[str, Any]:  # the report names its final place
        body["replay"] = f"schedcheck replay {target / 'counterexample.yaml'} --impl '{impl}'"
        return body

    files["report.json"] = lambda target: json.dumps(placed(target), indent=2, default=str) + "\n"
    files["report.md"] = lambda target: render(placed(target))
    files["report.html"] = lambda target: render_conform_html(placed(target), doc, verdict.result)
    return write_report_folder(parent, "conform-" + safe_name(kind), files)


def render(body: dict[str, Any]) -> str:
    finding = body["finding"]
    lines = [f"# Not conformant: `{finding['kind']}`", "", finding["message"], "",
             "| | |", "| --- | --- |", f"| implementation | `{body['implementation']}` |",
             f"| seed | {body['seed']} |", f"| scenarios run | {body['scenariosRun']} |",
             f"| found after | {body['foundAfterSeconds']} s |"]
    if finding.get("cycle") is not None:
        lines.append(f"| cycle | {finding['cycle']} |")
    if finding.get("objects"):
        lines.append(f"| objects | {', '.join(finding['objects'])} |")
    stats = body.get("minimisation") or {}
    if stats.get("before"):
        keys = ("nodes", "pods", "jobs", "queues", "cycles")
        lines += ["", "## Minimisation", "", "| | " + " | ".join(keys) + " |", "| --- |" + " --- |" * len(keys),
                  "| before | " + " | ".join(str(stats["before"].get(k, "")) for k in keys) + " |",
                  "| after | " + " | ".join(str(stats["after"].get(k, "")) for k in keys) + " |", "",
                  f"{stats.get('attempts')} candidates run through the implementation, {stats.get('seconds')} s"
                  + (" (stopped by the time budget)" if stats.get("budgetExhausted") else "") + "."]
    if len(body["findings"]) > 1:
        lines += ["", "## All findings on the minimised scenario", ""]
        lines += [f"- `{f['kind']}`: {f['message']}" for f in body["findings"]]
    if body.get("stderrTail"):
        lines += ["", "## Standard error (tail)", "", "```", body["stderrTail"].rstrip(), "```"]
    lines += ["", "## Replay", "", "```", body["replay"], "```", "",
              "`answer.json` holds the scenario and the implementation's answer: `schedcheck check-trace answer.json` "
              "checks it offline.", ""]
    return "\n".join(lines)
