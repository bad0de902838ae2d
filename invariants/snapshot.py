"""A copy of what a statement may change, taken when it begins (for the discard invariant)."""

from __future__ import annotations

from schedcheck.invariants.context import StatementSnapshot
from schedcheck.reference.framework.session import Session


def take_snapshot(ssn: Session, events: dict[str, list[int]]) -> StatementSnapshot:
    nodes = {}
    node_tasks = {}
    for name, node in ssn.nodes.items():
        nodes[name] = tuple(r.as_dict() for r in (node.idle, node.used, node.releasing, node.pipelined))
        node_tasks[name] = {key: task.status for key, task in node.tasks.items()}
    tasks = {uid: (task.status, task.node_name) for job in ssn.jobs.values() for uid, task in job.tasks.items()}
    plugins = {}
    for name, plugin in ssn.plugins.items():
        digest = getattr(plugin, "state_digest", None)
        if digest is not None:
            plugins[name] = digest()
    return StatementSnapshot(nodes, node_tasks, tasks, plugins, {uid: tuple(c) for uid, c in events.items()})


def state_excerpt(ssn: Session, objects: list[str]) -> dict[str, object]:
    """The named objects as the session holds them now: ledgers, task states, job counts."""
    excerpt: dict[str, object] = {}
    tasks = {task.key: task for job in ssn.jobs.values() for task in job.tasks.values()}
    for ref in objects[:6]:
        kind, _, name = ref.partition(" ")
        if kind == "node" and name in ssn.nodes:
            node = ssn.nodes[name]
            excerpt[ref] = {"allocatable": node.allocatable.as_dict(), "idle": node.idle.as_dict(),
                            "used": node.used.as_dict(), "releasing": node.releasing.as_dict(),
                            "pipelined": node.pipelined.as_dict(),
                            "tasks": {k: t.status.name for k, t in sorted(node.tasks.items())}}
        elif kind == "job" and name in ssn.jobs:
            job = ssn.jobs[name]
            excerpt[ref] = {"queue": job.queue, "minAvailable": job.min_available, "priority": job.priority,
                            "tasks": {t.key: f"{t.status.name}@{t.node_name or '-'}" for t in job.tasks.values()}}
        elif kind == "task" and name in tasks:
            task = tasks[name]
            excerpt[ref] = {"status": task.status.name, "node": task.node_name, "priority": task.priority,
                            "request": task.resreq.as_dict(), "job": task.job}
        elif kind == "queue" and name in ssn.queues:
            excerpt[ref] = {"weight": ssn.queues[name].weight, "priority": ssn.queues[name].priority}
    return excerpt
