"""Network topologies for a drawn cluster: leaf-spine trees of HyperNodes (1 to 3 tiers) and the
PodGroup network-topology constraints that use them.

Shrinks towards one leaf tier of single-node hypernodes named by exact match, and a hard constraint at
tier 1.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.quantities import sometimes
from schedcheck.generators.vocabulary import TASK_SPEC, group_pods

HYPER_NODE_API = "topology.volcano.sh/v1alpha1"
TIER_NAMES = {1: "leaf", 2: "spine", 3: "core"}


def _hyper_node(name: str, tier: int, members: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": HYPER_NODE_API, "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "tierName": TIER_NAMES[tier], "members": members}}


def _groups(draw: st.DrawFn, items: list[str], largest: int) -> list[list[str]]:
    """Consecutive groups of 1 to `largest` items (switches, racks: neighbours share them)."""
    groups, rest = [], list(items)
    while rest:
        size = draw(st.integers(1, min(largest, len(rest))))
        groups.append(rest[:size])
        rest = rest[size:]
    return groups


@st.composite
def hyper_node_trees(draw: st.DrawFn, node_names: list[str]) -> list[dict[str, Any]]:
    """Leaf hypernodes over consecutive nodes (by exact name, or one regular expression), then up to two
    tiers above, each grouping the one below; some nodes may be left outside every leaf."""
    tiers = draw(st.integers(1, 3))
    covered = node_names[:draw(st.integers(1, len(node_names)))]
    docs: list[dict[str, Any]] = []
    level: list[str] = []
    for i, group in enumerate(_groups(draw, covered, 4)):
        if len(group) > 1 and draw(st.integers(0, 3)) == 0:
            members = [{"type": "Node", "selector": {"regexMatch": {"pattern": "^(" + "|".join(group) + ")$"}}}]
        else:
            members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in group]
        docs.append(_hyper_node(f"leaf-{i}", 1, members))
        level.append(f"leaf-{i}")
    for tier in range(2, tiers + 1):
        above = []
        for i, group in enumerate(_groups(draw, level, 3)):
            name = f"{TIER_NAMES[tier]}-{i}"
            docs.append(_hyper_node(name, tier, [{"type": "HyperNode", "selector": {"exactMatch": {"name": c}}}
                                                  for c in group]))
            above.append(name)
        level = above
    return docs


@cache
def network_topologies(max_tier: int) -> st.SearchStrategy[dict[str, Any]]:
    """A PodGroup spec.networkTopology: hard or soft, its highest tier by number or (sometimes) by name."""
    tiers = st.integers(1, max_tier + 1)
    by_number = st.builds(lambda mode, tier: {"mode": mode, "highestTierAllowed": tier},
                          st.sampled_from(("hard", "soft")), tiers)
    by_name = st.builds(lambda mode, tier: {"mode": mode, "highestTierName": TIER_NAMES[tier]},
                        st.sampled_from(("hard", "soft")), st.integers(1, max_tier))
    return st.one_of(by_number, by_name)


@cache
def sub_group_policies(max_tier: int) -> st.SearchStrategy[list[dict[str, Any]]]:
    """One subGroupPolicy grouping a job's pods by role (the task-spec label), with a subgroup size, a
    minimum number of subgroups and sometimes a network topology of its own."""
    topology = st.one_of(st.none(), st.builds(lambda mode, tier: {"mode": mode, "highestTierAllowed": tier},
                                              st.sampled_from(("hard", "soft")), st.integers(1, max_tier + 1)))

    def policy(size: int, minimum: int, nt: dict[str, Any] | None) -> list[dict[str, Any]]:
        doc: dict[str, Any] = {"name": "roles", "matchLabelKeys": ["volcano.sh/task-spec"], "subGroupSize": size,
                               "minSubGroups": minimum}
        if nt is not None:
            doc["networkTopology"] = nt
        return [doc]
    return st.builds(policy, st.integers(1, 2), st.integers(0, 2), topology)


INSTANCE_KEY = "leaderworkerset.sigs.k8s.io/group-index"  # a replica group's index, as LeaderWorkerSet labels it


def apply_instance_sub_groups(draw: st.DrawFn, job_docs: list[dict[str, Any]], max_tier: int | None) -> None:
    """Subgroups by replica instance for some jobs without roles (in place): their pods, in name order,
    labelled with an instance index in groups of subGroupSize, and a policy asking for 1 to all of those
    groups. With minMember below the pod count, gang's readiness then turns on whole instances
    (CheckSubJobReady), not on the pod count alone. Shrinks towards no policy."""
    for group in (d for d in job_docs if d["kind"] == "PodGroup" and not d["spec"].get("subGroupPolicy")):
        pods = sorted(group_pods(group, job_docs), key=lambda d: d["metadata"]["name"])
        if len(pods) < 2 or any(TASK_SPEC in p["metadata"].get("annotations", {}) for p in pods):
            continue
        if not draw(sometimes(40)):
            continue
        size = draw(st.integers(1, 2))
        for i, pod in enumerate(pods):
            pod["metadata"].setdefault("labels", {})[INSTANCE_KEY] = str(i // size)
        count = -(-len(pods) // size)
        policy: dict[str, Any] = {"name": "instances", "matchLabelKeys": [INSTANCE_KEY], "subGroupSize": size,
                                  "minSubGroups": draw(st.integers(1, count))}
        if max_tier is not None and draw(st.booleans()):
            policy["networkTopology"] = {"mode": "hard", "highestTierAllowed": draw(st.integers(1, max_tier))}
        group["spec"]["subGroupPolicy"] = [policy]
