"""What the task-topology plugin reads: the PodGroup annotations `volcano.sh/task-topology-affinity` and
`-anti-affinity` (groups of role names separated by ";", names within a group by ",") and
`-task-order` (names separated by ","), naming the roles of the job's pods (their `volcano.sh/task-spec`).

Drawn only when the conf has task-topology (scenarios.py), for jobs with roles, in the shapes of the
plugin's guide: the roles kept together ("ps,worker"), a role spread out (self anti-affinity, "worker"),
the order the roles go in ("ps,worker"). Rarely a name the job does not have (the guide's "chief"), which
leaves the job without topology, as upstream does. Shrinks to no annotation.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.vocabulary import (
    TASK_SPEC,
    TASK_TOPOLOGY_AFFINITY,
    TASK_TOPOLOGY_ANTI_AFFINITY,
    TASK_TOPOLOGY_ORDER,
)
from schedcheck.generators.quantities import choice, rarely, sometimes

STRANGER = "chief"  # a role none of the generated jobs has


def _groups(first: str, second: str) -> tuple[str, ...]:
    """Affinity or anti-affinity texts over two roles, the plain pair first."""
    return (f"{first},{second}", second, first, f"{first};{second}", f"{first},{second};{second}")


def _orders(first: str, second: str) -> tuple[str, ...]:
    return (f"{first},{second}", f"{second},{first}", first, second)


@cache
@st.composite
def task_topology_annotations(draw: st.DrawFn, roles: tuple[str, ...]) -> dict[str, str]:
    """The annotations of one job with the two roles `roles` (leading role first); {} for none."""
    if len(roles) != 2 or not draw(sometimes(60)):
        return {}
    first, second = roles
    out: dict[str, str] = {}
    if draw(sometimes(80)):
        out[TASK_TOPOLOGY_AFFINITY] = draw(choice(_groups(first, second)))
    if draw(sometimes(40)):
        out[TASK_TOPOLOGY_ANTI_AFFINITY] = draw(choice(_groups(second, first)[1:]))
    if draw(sometimes(40)):
        out[TASK_TOPOLOGY_ORDER] = draw(choice(_orders(first, second)))
    if out and draw(rarely(8)):
        key = draw(choice(tuple(out)))
        out[key] = f"{out[key]},{STRANGER}"
    return out


def job_roles(pod_docs: list[dict[str, Any]]) -> tuple[str, ...]:
    """The roles of a job's pods, in pod order, each once."""
    roles: list[str] = []
    for pod in pod_docs:
        role = pod["metadata"].get("annotations", {}).get(TASK_SPEC)
        if role and role not in roles:
            roles.append(role)
    return tuple(roles)
