"""`schedcheck replay FILE`: does a saved counterexample still fail?

The counterexample (schedcheck/counterexample/) is loaded, the deliberate
bug it names (if any) is activated, and the reference runs the scenario with
the annotated seed; the replay reproduces when the same invariant fires again.
Runs are deterministic, so a counterexample reproduces every time or never.
Exit status: 1 still fails, 0 no longer fails, 2 unreadable input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schedcheck.invariants.engine import InvariantEngine
from schedcheck.counterexample import Counterexample, only_ids, read_counterexample, recorded_failures, run_with
from schedcheck.scenario.errors import ScenarioError

EXIT_FIXED, EXIT_REPRODUCED, EXIT_UNREADABLE = 0, 1, 2

DESCRIPTION = ("Run a counterexample.yaml written by the gate (its seed and any deliberate bug are recorded "
               "in it). Exit 1 when the same invariant breaks again, 0 when it no longer does, 2 on "
               "unreadable input.")
EPILOG = """examples:
  schedcheck replay reports/20261122T010203Z-gang.commit-ready/counterexample.yaml
"""


def add_arguments(parser: Any) -> None:
    parser.add_argument("file", help="a counterexample.yaml")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--impl", metavar="CMD",
                        help="replay against another implementation speaking protocol 1 (docs/protocol.md)")


def main(args: Any) -> int:
    return cmd_replay(args)


@dataclass
class ReplayResult:
    path: str
    invariant: str
    seed: int
    mutant: str | None
    saved_cycle: int | None  # where the counterexample says it failed
    saved_action: str
    reproduced: bool
    violation: dict[str, Any] | None = None  # the first violation of the invariant in this replay
    other_violations: list[dict[str, Any]] = field(default_factory=list)  # others seen (with a wider engine)
    cycles: int = 1

    @property
    def same_place(self) -> bool:
        """The replay failed at the cycle and action the counterexample names."""
        v = self.violation
        return (v is not None and (self.saved_cycle is None or v.get("cycle") == self.saved_cycle)
                and (not self.saved_action or v.get("action") == self.saved_action))

    @property
    def exit_status(self) -> int:
        return EXIT_REPRODUCED if self.reproduced else EXIT_FIXED

    def to_json(self) -> dict[str, Any]:
        return {"file": self.path, "invariant": self.invariant, "seed": self.seed, "mutant": self.mutant,
                "saved": {"cycle": self.saved_cycle, "action": self.saved_action},
                "reproduced": self.reproduced, "samePlace": self.same_place, "cycles": self.cycles,
                "violation": self.violation, "otherViolations": self.other_violations}


def replay(path: str, engine_factory: Callable[[], InvariantEngine] | None = None) -> ReplayResult:
    """Replay a counterexample file; ScenarioError if it cannot be read or is not a counterexample.

    `engine_factory` builds the engine to run with (default: one watching only the counterexample's
    invariant); violations of other invariants it reports are listed in `other_violations`.
    """
    counterexample = read_counterexample(path)
    return replay_counterexample(counterexample, engine_factory)


def replay_counterexample(cx: Counterexample, engine_factory: Callable[[], InvariantEngine] | None = None
                          ) -> ReplayResult:
    engine = engine_factory() if engine_factory is not None else InvariantEngine(only=only_ids(cx.invariant))
    result = run_with(cx.scenario, cx.seed, cx.mutant, engine)
    seen = recorded_failures(result, cx.scenario.name)
    same = next((v for v in seen if v.get("id") == cx.invariant), None)
    return ReplayResult(path=cx.path, invariant=cx.invariant, seed=cx.seed, mutant=cx.mutant,
                        saved_cycle=cx.cycle, saved_action=cx.action, reproduced=same is not None,
                        violation=same, other_violations=[v for v in seen if v.get("id") != cx.invariant],
                        cycles=cx.scenario.cycles)


def describe(result: ReplayResult) -> str:
    """One paragraph saying what the replay found."""
    from schedcheck.invariants.catalog import get as get_invariant

    rule = get_invariant(result.invariant)
    setting = f"seed {result.seed}" + (f", with the deliberate bug {result.mutant} active" if result.mutant else "")
    saved = (f"cycle {result.saved_cycle}" if result.saved_cycle is not None else "an unrecorded cycle") + \
        (f", action {result.saved_action}" if result.saved_action else "")
    if result.reproduced:
        v = result.violation or {}
        where = f"cycle {v.get('cycle')}, action {v.get('action') or '-'}, at {v.get('checkpoint') or '-'}"
        if v.get("operation"):
            where += f" after {v['operation']}"
        text = (f"{result.path}: still fails. {result.invariant}"
                + (f" ({rule.statement})" if rule else "")
                + f" was violated again at {where}: {v.get('message') or v.get('found')}. "
                f"Replayed with {setting}; the counterexample recorded {saved}"
                + (", the same place." if result.same_place else ", so it now breaks elsewhere.")
                + (f" It is now reported as known upstream finding {v['known']} (docs/findings.md), a finding "
                   "rather than a failure unless --fail-on-known names it." if v.get("known") else "")
                + " Exit 1.")
    else:
        text = (f"{result.path}: no longer fails. {result.invariant} held throughout the replay "
                f"({result.cycles} cycle(s), {setting}), where the counterexample recorded a violation at {saved}; "
                "the bug appears fixed. Exit 0.")
    if result.other_violations:
        ids = sorted({v.get("id") for v in result.other_violations})
        text += f" Other invariants violated in this replay: {', '.join(ids)}."
    return text


def cmd_replay(args: Any) -> int:
    """The `schedcheck replay FILE [--json] [--impl CMD]` command; returns the exit status."""
    path = next((getattr(args, name) for name in ("file", "counterexample", "scenario", "path")
                 if getattr(args, name, None)), None)
    if path is None:
        print("schedcheck: replay: expected a counterexample file", file=sys.stderr)
        return EXIT_UNREADABLE
    if getattr(args, "impl", None):
        return replay_against_impl(path, args.impl, getattr(args, "json", False))
    try:
        result = replay(path)
    except ScenarioError as exc:
        error = exc
        if _conform_kind(path):
            error = ScenarioError(path, "Scenario", "metadata.annotations.schedcheck.io/conform-finding",
                                  "found against another implementation: replay it with --impl CMD")
        print(f"schedcheck: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    if getattr(args, "json", False):
        json.dump(result.to_json(), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(describe(result) + "\n")
    return result.exit_status


# ---------------------------------------------------------------- against another implementation


def _conform_kind(path: str) -> str | None:
    """The finding a conformance counterexample records (schedcheck/conform/report.py), if any."""
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            doc = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError):
        return None
    notes = ((doc or {}).get("metadata") or {}).get("annotations") or {} if isinstance(doc, dict) else {}
    return notes.get("schedcheck.io/conform-finding") if isinstance(notes, dict) else None


def replay_against_impl(path: str, impl_spec: str, as_json: bool = False) -> int:
    """Run one scenario (a conformance counterexample, or any scenario) through an implementation.

    Exit 1 while it does not conform on it (the text says whether the recorded finding recurs), 0 when
    it conforms, 2 when the file or the --impl is unusable."""
    from schedcheck.conform.check import conform_one
    from schedcheck.conform.impl import ImplSpecError, parse_impl
    from schedcheck.scenario.loader import load_scenario

    try:
        scenario = load_scenario(path)
        impl = parse_impl(impl_spec)
    except ScenarioError as exc:
        print(f"schedcheck: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except ImplSpecError as exc:
        print(f"schedcheck: replay: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    doc = scenario.document  # as the loader read it
    recorded = scenario.annotations.get("schedcheck.io/conform-finding")
    try:
        seed = int(scenario.annotations.get("schedcheck.io/seed", "0") or 0)
    except ValueError:
        seed = 0
    verdict = conform_one(impl, scenario, doc, seed)
    same = recorded is not None and any(f.kind == recorded for f in verdict.findings)
    if as_json:
        json.dump({"file": path, "implementation": impl.label, "seed": seed, "recorded": recorded,
                   "conformant": verdict.ok, "reproduced": same,
                   "findings": [f.to_json() for f in verdict.findings]}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif verdict.ok:
        sys.stdout.write(f"{path}: {impl.label} conforms on this scenario (seed {seed})"
                         + (f"; the recorded {recorded} no longer occurs" if recorded else "") + ". Exit 0.\n")
    else:
        first = verdict.findings[0]
        sys.stdout.write(f"{path}: {impl.label} still does not conform: {first.line()}"
                         + ("" if recorded is None else " (the recorded finding)" if same
                            else f" (the counterexample recorded {recorded})") + ". Exit 1.\n")
    return EXIT_FIXED if verdict.ok else EXIT_REPRODUCED
