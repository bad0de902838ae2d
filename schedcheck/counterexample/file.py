"""The counterexample file: an ordinary scenario document (so `schedcheck run` accepts it unchanged)
whose `metadata.annotations` say what it proves:

    schedcheck.io/invariant  the invariant that fails         gang.commit-ready
    schedcheck.io/cycle      the session where it failed      "0"
    schedcheck.io/action     the action running at the time   allocate
    schedcheck.io/seed       the tie-breaking seed            "0"
    schedcheck.io/mutant     the deliberate bug that was active (schedcheck/mutants.py), if any
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from schedcheck.invariants.catalog import get as get_invariant
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.model import Scenario

PREFIX = "schedcheck.io/"
INVARIANT = PREFIX + "invariant"
CYCLE = PREFIX + "cycle"
ACTION = PREFIX + "action"
SEED = PREFIX + "seed"
MUTANT = PREFIX + "mutant"
FILE_NAME = "counterexample.yaml"
ORIGINAL_FILE_NAME = "original.yaml"  # the scenario as the search found it, before minimisation
UPSTREAM_ASSERT = "upstream.assert"  # reported by the runner, not by a catalogued invariant
EXPECTATION = "corpus.expectation"  # the scenario decided otherwise than its expect block (the gate's corpus)
PSEUDO_RULES = {  # failures that are not catalogued invariants, with the rule each stands for
    UPSTREAM_ASSERT: "an upstream assertion must hold",
    EXPECTATION: "the scheduler must decide what the scenario's expect block states (upstream's decisions, "
                 "derived by hand from its unit tests, the seeds or a known finding)",
}


def expectation_record(result: Any, scenario_name: str) -> dict[str, Any] | None:
    """A run's expectation misses as one failure record (Violation.to_json() shape), or None."""
    misses = list(getattr(result, "expectation_failures", []) or [])
    if not misses:
        return None
    more = f" (and {len(misses) - 1} more)" if len(misses) > 1 else ""
    return {"id": EXPECTATION, "cycle": max(0, result.cycles - 1), "action": "", "scenario": scenario_name,
            "message": f"scenario {scenario_name} decides differently from upstream: {misses[0]}{more}",
            "expected": "the decisions in the scenario's expect block", "found": misses}


def recorded_failures(result: Any, scenario_name: str) -> list[dict[str, Any]]:
    """Everything a run reported, violations and findings first, then its expectation misses as one record."""
    expectation = expectation_record(result, scenario_name)
    return result.violations + result.findings + ([expectation] if expectation else [])


@dataclass
class Counterexample:
    scenario: Scenario
    invariant: str
    seed: int
    cycle: int | None = None
    action: str = ""
    mutant: str | None = None
    path: str = ""


def annotate(doc: dict[str, Any], invariant: str, cycle: int | None, action: str, seed: int,
             mutant: str | None) -> dict[str, Any]:
    """A copy of the scenario document carrying the counterexample annotations (older ones replaced)."""
    out = copy.deepcopy(doc)
    metadata = out.get("metadata")
    if not isinstance(metadata, dict):
        metadata = out["metadata"] = {}
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if not str(k).startswith(PREFIX)}
    annotations[INVARIANT] = invariant
    if cycle is not None:
        annotations[CYCLE] = str(cycle)
    annotations[ACTION] = action or ""
    annotations[SEED] = str(seed)
    if mutant:
        annotations[MUTANT] = mutant
    metadata["annotations"] = annotations
    return out


def dump_counterexample(doc: dict[str, Any], what: str = "") -> str:
    """YAML text of an annotated counterexample, with a header saying how to replay it (and, given
    `what`, a first line saying what this file is)."""
    notes = (doc.get("metadata") or {}).get("annotations") or {}
    header = [f"# {what}."] if what else []
    header += [f"# schedcheck counterexample: {notes.get(INVARIANT, '?')} fails"
               f" (cycle {notes.get(CYCLE, '?')}, action {notes.get(ACTION) or '-'}, seed {notes.get(SEED, '0')}"
               + (f", with the deliberate bug {notes[MUTANT]} active" if notes.get(MUTANT) else "") + ").",
               "# Replay: schedcheck replay THIS_FILE   (exit 1: still fails, 0: fixed)",
               "# It is an ordinary scenario: schedcheck run THIS_FILE works too."]
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
    return "\n".join(header) + "\n" + body


def read_counterexample(path: str | Path) -> Counterexample:
    """Load a counterexample file; ScenarioError (naming file, object and field) when it is not one."""
    from schedcheck.mutants import MUTANTS
    from schedcheck.scenario.loader import load_scenario

    scenario = load_scenario(path)
    source = scenario.source
    notes = scenario.annotations
    where = "metadata.annotations"
    invariant = notes.get(INVARIANT)
    if not invariant:
        raise ScenarioError(source, "Scenario", f"{where}.{INVARIANT}",
                            "missing: not a counterexample (it names no invariant)")
    if invariant not in PSEUDO_RULES and get_invariant(invariant) is None:
        raise ScenarioError(source, "Scenario", f"{where}.{INVARIANT}",
                            f"unknown invariant {invariant!r} (see `schedcheck invariants`)")
    seed = _int_note(notes, SEED, source, default=0)
    cycle = _int_note(notes, CYCLE, source, default=None)
    mutant = notes.get(MUTANT) or None
    if mutant is not None and mutant not in MUTANTS:
        raise ScenarioError(source, "Scenario", f"{where}.{MUTANT}",
                            f"unknown deliberate bug {mutant!r} (known: {', '.join(sorted(MUTANTS))})")
    return Counterexample(scenario=scenario, invariant=invariant, seed=seed, cycle=cycle,
                          action=notes.get(ACTION, ""), mutant=mutant, path=str(path))


def _int_note(notes: dict[str, str], key: str, source: str, default: int | None) -> int | None:
    raw = notes.get(key)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ScenarioError(source, "Scenario", f"metadata.annotations.{key}",
                            f"expected an integer, got {raw!r}") from None

