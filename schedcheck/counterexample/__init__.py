"""Counterexamples: the annotated scenario file, observing the failure on replay, and the report folder.

- `counterexample.file`      the file: annotations, YAML with its replay header, reading it back
- `counterexample.observe`   replaying a failure and excerpting the objects it names, before and after
- `counterexample.markdown`  report.md: the rule, replay, minimisation, scenario tables, state changes
- `counterexample.report`    the report folder (counterexample.yaml, original.yaml, report.json, report.md)
"""

from __future__ import annotations

from schedcheck.counterexample.file import (
    ACTION,
    CYCLE,
    FILE_NAME,
    INVARIANT,
    MUTANT,
    ORIGINAL_FILE_NAME,
    PREFIX,
    SEED,
    EXPECTATION,
    PSEUDO_RULES,
    UPSTREAM_ASSERT,
    Counterexample,
    annotate,
    dump_counterexample,
    expectation_record,
    read_counterexample,
    recorded_failures,
)
from schedcheck.counterexample.markdown import render_counterexample_markdown, scenario_tables, state_changes
from schedcheck.counterexample.observe import (
    BEFORE,
    FailureObservation,
    first_violation,
    observe_failure,
    only_ids,
    run_with,
)
from schedcheck.counterexample.report import write_counterexample_report

__all__ = ["ACTION", "BEFORE", "CYCLE", "EXPECTATION", "FILE_NAME", "INVARIANT", "MUTANT", "ORIGINAL_FILE_NAME",
           "PREFIX", "PSEUDO_RULES", "SEED", "UPSTREAM_ASSERT", "expectation_record", "recorded_failures", "Counterexample", "FailureObservation", "annotate", "dump_counterexample",
           "first_violation", "observe_failure", "only_ids", "read_counterexample", "render_counterexample_markdown",
           "run_with", "scenario_tables", "state_changes", "write_counterexample_report"]
