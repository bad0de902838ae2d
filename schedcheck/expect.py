"""Judge a scenario's `expect` block against a run (scenario-format.md, Expectations)."""

from __future__ import annotations

from collections import Counter

from schedcheck.result import RunResult
from schedcheck.scenario.model import Expectations


def judge(expect: Expectations, result: RunResult) -> list[str]:
    """One readable line per unmet expectation; empty when all hold."""
    failures: list[str] = []
    for pod, node in sorted((expect.binds_include or {}).items()):
        got = result.binds.get(pod)
        if got != node:
            failures.append(f"bindsInclude: expected {pod} bound to {node}, but it was "
                            + ("not bound" if got is None else f"bound to {got}"))
    if expect.binds is not None:
        for pod, node in sorted(expect.binds.items()):
            got = result.binds.get(pod)
            if got is None:
                failures.append(f"binds: expected {pod} bound to {node}, but it was not bound")
            elif got != node:
                failures.append(f"binds: expected {pod} bound to {node}, but it was bound to {got}")
        for pod in sorted(set(result.binds) - set(expect.binds)):
            failures.append(f"binds: {pod} was bound to {result.binds[pod]}, which the expectation does not list")
    if expect.evicted is not None:
        want, got = Counter(expect.evicted), Counter(result.evicted)
        if want != got:
            missing = sorted((want - got).elements())
            extra = sorted((got - want).elements())
            failures.append(f"evicted: expected {sorted(want.elements())}, got {sorted(got.elements())}"
                            f" (missing {missing}, unexpected {extra})")
    if expect.pipelined is not None:
        by_group: dict[str, list[tuple[str, str]]] = {}
        for pod, node in result.pipelined.items():
            group = result.pipelined_groups.get(pod, "")
            by_group.setdefault(group, []).append((pod, node))
        for group, nodes in sorted(expect.pipelined.items()):
            tasks = by_group.get(group, [])
            if not tasks:
                failures.append(f"pipelined: expected {group} to have a Pipelined task, but none is")
                continue
            for pod, node in tasks:
                if node not in nodes:
                    failures.append(f"pipelined: {pod} of {group} is pipelined to {node}, not one of {nodes}")
    if expect.pod_group_phases is not None:
        for group, phase in sorted(expect.pod_group_phases.items()):
            got = result.pod_group_phases.get(group)
            if got != phase:
                failures.append(f"podGroupPhases: expected {group} {phase}, got {got or 'no such PodGroup'}")
    if expect.task_status_counts is not None:
        for group, counts in sorted(expect.task_status_counts.items()):
            got = result.task_status_counts.get(group, {})
            for status in sorted(set(counts) | set(got)):
                if counts.get(status, 0) != got.get(status, 0):
                    failures.append(f"taskStatusCounts: expected {group} {status}={counts.get(status, 0)}, "
                                    f"got {got.get(status, 0)} (all: {got})")
    if expect.bind_count is not None and expect.bind_count != len(result.binds):
        failures.append(f"bindCount: expected {expect.bind_count}, got {len(result.binds)}")
    if expect.evict_count is not None and expect.evict_count != len(result.evicted):
        failures.append(f"evictCount: expected {expect.evict_count}, got {len(result.evicted)}")
    return failures

