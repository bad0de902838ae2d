"""The result of running the reference on a scenario: the result object of the spec (and of protocol 1).

It lives apart from the runner so that the expectation judge (schedcheck.expect) and the renderers can
read it without importing the runner that fills it in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PROTOCOL = 1  # the conformance protocol version this result speaks (docs/protocol.md)

# PodGroup annotation keys some Volcano scheduler writes during a session: allocate wrote the job's hypernode
# in v1.12 and v1.13 (since v1.14 it lives in the cache's JobInfo and no PodGroup annotation is written).
SCHEDULER_POD_GROUP_ANNOTATIONS = ("volcano.sh/job-allocated-hypernode",)


@dataclass
class RunResult:
    scenario: str
    seed: int
    cycles: int
    binds: dict[str, str] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list)
    pipelined: dict[str, str] = field(default_factory=dict)
    pipelined_groups: dict[str, str] = field(default_factory=dict)  # pipelined pod -> its PodGroup
    pod_group_phases: dict[str, str] = field(default_factory=dict)
    pod_group_annotations: dict[str, dict[str, str]] = field(default_factory=dict)  # scheduler-written keys only
    pod_group_conditions: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # the run's, by type
    task_status_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    violations: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)  # quality invariants (not failures)
    expectation_failures: list[str] = field(default_factory=list)
    ties: list[dict[str, Any]] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    skipped_actions: list[str] = field(default_factory=list)
    skipped_plugins: list[str] = field(default_factory=list)
    invariants: int = 0  # how many invariants watched the run
    invariant_checks: int = 0  # how many times they were checked
    overkill: list[dict[str, Any]] = field(default_factory=list)  # per preemptor: evictions made / needed
    ledgers: list[dict[str, Any]] = field(default_factory=list)  # node accounting after each session (protocol)
    warnings: list[str] = field(default_factory=list)  # about the cluster state read (e.g. a node out of sync)

    @property
    def ok(self) -> bool:
        return not self.violations and not self.expectation_failures

    def to_json(self, with_trace: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocol": PROTOCOL,
            "implementation": "schedcheck-reference",
            "scenario": self.scenario,
            "seed": self.seed,
            "cycles": self.cycles,
            "binds": self.binds,
            "evicted": self.evicted,
            "pipelined": self.pipelined,
            "podGroupPhases": self.pod_group_phases,
            "podGroupAnnotations": self.pod_group_annotations,
            "podGroupConditions": self.pod_group_conditions,
            "taskStatusCounts": self.task_status_counts,
            "violations": self.violations,
            "findings": self.findings,
            "expectations": {"met": not self.expectation_failures, "failures": self.expectation_failures},
            "ties": self.ties,
        }
        if self.warnings:
            out["warnings"] = self.warnings
        if with_trace:
            out["trace"] = self.trace
            out["ledgers"] = self.ledgers
        return out
