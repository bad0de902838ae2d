"""The counterexample report folder: <parent>/<time>-<invariant>/ with

    counterexample.yaml  the minimised scenario, annotated (`schedcheck replay` it)
    original.yaml        the scenario as the search found it, annotated the same way (when given)
    report.json, report.md
    report.html          the same facts with pictures: node ledgers before and after, timeline, queues,
                         HyperNode tree (schedcheck.report_html; self-contained, opens offline)

written by schedcheck.report_folder (atomically, never overwriting). The state
before and after the failing operation comes from replaying the minimised
scenario with an observer next to the invariant engine (`observe_failure`);
the cause (schedcheck.minimize.cause) of the failure on both scenarios is
recorded, so a reader sees that the minimised one fails for the same reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedcheck.counterexample.file import (FILE_NAME, ORIGINAL_FILE_NAME, PSEUDO_RULES, UPSTREAM_ASSERT, annotate,
                                            dump_counterexample)
from schedcheck.counterexample.markdown import render_counterexample_markdown
from schedcheck.counterexample.observe import first_violation, observe_failure
from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.invariants.violation import Violation
from schedcheck.report_folder import Content, safe_name, write_report_folder
from schedcheck.report_html.counterexample import render_counterexample_html
from schedcheck.report_html.replay import host_nodes, record_run


def write_counterexample_report(parent: Path, doc: dict[str, Any], violation: Violation | dict[str, Any] | str,
                                seed: int, mutant: str | None, stats: Any = None, found_after: Any = None,
                                original: dict[str, Any] | None = None) -> Path:
    """Write <parent>/<time>-<invariant>/ with counterexample.yaml, original.yaml (when `original` is
    given), report.json, report.md and report.html; return the folder.

    `doc` is the minimised scenario document, `violation` the violation it was minimised for (a
    Violation, its JSON form, or just the invariant id; cycle and action are taken from a fresh replay
    of `doc`, falling back to `violation` if the replay does not reproduce it). `stats` is the
    minimiser's MinimizeStats (or any mapping, or None); `found_after` says how long the search took
    before it found the failure: seconds as a number, or free text such as "37 examples, 12.4 s".
    `original` is the scenario before minimisation, written beside the minimised one.
    """
    from schedcheck.minimize import cause_of, scenario_counts
    from schedcheck.scenario.loader import scenario_from_document

    if isinstance(violation, str):  # just the invariant id: everything else comes from the replay
        given: dict[str, Any] = {"id": violation}
    else:
        given = violation.to_json() if isinstance(violation, Violation) else dict(violation)
    invariant = given.get("id") or given.get("invariant") or ""
    scenario = scenario_from_document(doc, FILE_NAME)
    observation = observe_failure(scenario, invariant, seed, mutant)
    seen = observation.violation if observation is not None else given
    annotated = annotate(doc, invariant, seen.get("cycle"), seen.get("action", ""), seed, mutant)
    stats_json = stats.to_json() if hasattr(stats, "to_json") else dict(stats) if stats is not None else None
    rule = get_invariant(invariant)
    payload: dict[str, Any] = {
        "invariant": invariant,
        "rule": rule.statement if rule else PSEUDO_RULES.get(invariant, PSEUDO_RULES[UPSTREAM_ASSERT]),
        "severity": rule.severity if rule else "safety",
        "seed": seed,
        "mutant": mutant,
        "violation": seen,
        "reproducedOnMinimised": observation is not None,
        "counterexample": FILE_NAME,
        "foundAfter": found_after,
        "minimisation": stats_json,
        "scenario": scenario_counts(annotated),
        "before": None if observation is None else {"label": observation.before_label, "state": observation.before},
        "after": None if observation is None else {"label": observation.after_label, "state": observation.after},
    }
    files: dict[str, Content] = {FILE_NAME: dump_counterexample(annotated)}
    if original is not None:
        payload.update(_original_part(original, invariant, seed, mutant,
                                      cause_of(seen, scenario.conf) if observation is not None else None))
        first = payload.pop("_originalViolation") or {}
        files[ORIGINAL_FILE_NAME] = dump_counterexample(
            annotate(original, invariant, first.get("cycle"), first.get("action", ""), seed, mutant),
            what="The scenario as the search found it, before minimisation (counterexample.yaml is the minimised one)")

    def placed(target: Path) -> dict[str, Any]:  # the report names its final place
        payload["replay"] = f"schedcheck replay {target / FILE_NAME}"
        return payload

    files["report.json"] = lambda target: json.dumps(placed(target), indent=2, default=str) + "\n"
    files["report.md"] = lambda target: render_counterexample_markdown(placed(target), annotated)
    states = (observation.before, observation.after) if observation is not None else ()
    hosts = host_nodes(seen, *states)
    run = record_run(scenario, seen, seed, mutant, hosts)  # the page's timeline, and the ledgers of the hosts
    files["report.html"] = lambda target: render_counterexample_html(placed(target), annotated, run)
    return write_report_folder(parent, safe_name(invariant, "counterexample"), files)


def _original_part(original: dict[str, Any], invariant: str, seed: int, mutant: str | None,
                   cause: Any) -> dict[str, Any]:
    """What report.json says of the original scenario: its size, and the failure's cause there and on the
    minimised one (the minimiser keeps the cause, so they agree unless the budget or a flaky run intervened)."""
    from schedcheck.minimize import cause_of, scenario_counts
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import scenario_from_document

    first = original_cause = None
    try:
        scenario = scenario_from_document(original, ORIGINAL_FILE_NAME)
    except ScenarioError:
        scenario = None
    if scenario is not None:
        first = first_violation(scenario, invariant, seed, mutant)
        original_cause = cause_of(first, scenario.conf) if first is not None else None
    return {
        "original": ORIGINAL_FILE_NAME,
        "originalScenario": scenario_counts(original),
        "cause": None if cause is None else cause.to_json(),
        "originalCause": None if original_cause is None else original_cause.to_json(),
        "sameCause": cause is not None and cause == original_cause,
        "_originalViolation": first,
    }
