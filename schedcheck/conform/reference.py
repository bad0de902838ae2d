"""The reference scheduler speaking protocol 1, in-process: `run(doc)` -> the result object with
trace and ledgers (what `schedcheck run SCENARIO --json --trace` prints). Used as
`--impl python:schedcheck.conform.reference:run` and by examples/impls/*.py through `serve`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import yaml


def run(doc: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """One scenario document -> the protocol result. The seed defaults to $SCHEDCHECK_SEED (else 0)."""
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import scenario_from_document

    if seed is None:
        seed = int(os.environ.get("SCHEDCHECK_SEED", "0") or 0)
    scenario = scenario_from_document(doc, "<protocol>")
    result = run_scenario(scenario, seed=seed, check_invariants=False, ledgers=True)
    out = result.to_json(with_trace=True)
    for key in ("violations", "findings", "expectations"):  # the reference's own verdicts, not decisions
        out.pop(key, None)
    return out


def read_scenario(argv: list[str]) -> dict[str, Any]:
    """The scenario document named by the protocol's last argument (`-`: standard input)."""
    if not argv:
        raise SystemExit("usage: IMPL SCENARIO (a file path, or - for standard input)")
    text = sys.stdin.read() if argv[-1] == "-" else open(argv[-1], encoding="utf-8").read()
    return yaml.safe_load(text)


def serve(fn: Callable[[dict[str, Any]], dict[str, Any]], argv: list[str] | None = None) -> int:
    """Protocol 1 main loop of a Python implementation: read the scenario, print fn's result as one
    JSON object on standard output, exit 0."""
    doc = read_scenario(sys.argv[1:] if argv is None else argv)
    json.dump(fn(doc), sys.stdout)
    sys.stdout.write("\n")
    return 0
