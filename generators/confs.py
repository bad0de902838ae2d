"""Hypothesis strategies for volcano-scheduler.conf documents, drawn from what users configure.

A conf is a mapping exactly as it appears in `volcano-scheduler.conf` (and in a
scenario's `schedulerConf`): `actions` as a comma-separated string, `tiers` of
`plugins` with per-plugin enable flags and `arguments`, and optional per-action
`configurations`.

Everything is drawn from realistic pieces rather than free combinations:
action orders users run (upstream's default first), tier sets from upstream's
defaults, the helm chart and the documentation (binpack, capacity instead of
proportion, hierarchical capacity or drf, sla, usage, resourcequota), the flags
people actually turn off (`enablePreemptable: false` above all), and plugin
arguments with the values the docs show. Every list starts with upstream's
default and every optional piece shrinks to "absent", so a failing conf shrinks
towards the default conf.

The confs respect upstream's own rules (the loader rejects the rest): drf with
`enableHierarchy` never shares a tier with proportion, and capacity never runs
beside proportion.
"""

from __future__ import annotations

from functools import cache

import copy
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from schedcheck.generators.devices import deviceshare_arguments
from schedcheck.generators.quantities import choice, rarely, sometimes
from schedcheck.reference.framework.conf import (
    DEFAULT_ACTIONS as REFERENCE_DEFAULT_ACTIONS,
)

# ---------------------------------------------------------------- actions

DEFAULT_ACTIONS = ", ".join(REFERENCE_DEFAULT_ACTIONS)  # upstream's default, defined once in the reference

ACTION_ORDERS: tuple[str, ...] = (
    DEFAULT_ACTIONS,  # upstream's default (pkg/scheduler/util.go)
    "enqueue, allocate, preempt, reclaim, backfill",
    "allocate, backfill",
    "enqueue, allocate, preempt, backfill",
    "enqueue, allocate, reclaim, backfill",
    "enqueue, allocate, backfill, reclaim",  # capacity plugin docs
    "enqueue, reclaim, allocate, backfill, preempt",  # older upstream examples
    "enqueue, allocate, backfill, preempt, reclaim",
    "enqueue, allocate, backfill, shuffle",  # with the rescheduling plugin
    "enqueue, allocate",
)

# The gang* actions are only partly modelled (see README); drawn rarely, and only on request.
GANG_ACTION_ORDERS: tuple[str, ...] = (
    "enqueue, allocate, gangpreempt, backfill",
    "enqueue, allocate, gangreclaim, gangpreempt, backfill",
)
# Drawn in place of the first gang order now and then (a draw only on that path, so the other draws keep
# their shape): allocate after the gang action, the only place allocate's nomination fast path is reached.
GANG_THEN_ALLOCATE = "enqueue, gangpreempt, allocate, backfill"


# ---------------------------------------------------------------- tiers


def _p(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, **extra}


DEFAULT_TIERS: list[list[dict[str, Any]]] = [
    [_p("priority"), _p("gang"), _p("conformance")],
    [_p("overcommit"), _p("drf"), _p("predicates"), _p("proportion"), _p("nodeorder")],
]

# name -> tiers; the first entry is upstream's default and the shrink target.
TIER_SETS: dict[str, list[list[dict[str, Any]]]] = {
    "default": DEFAULT_TIERS,
    # the scenario corpus's most common shape, and many hand-written confs
    "minimal": [
        [_p("priority"), _p("gang"), _p("conformance")],
        [_p("predicates"), _p("nodeorder")],
    ],
    # volcano's helm chart (installer/helm/chart/volcano/config/volcano-scheduler.conf)
    "helm": [
        [_p("priority"), _p("gang", enablePreemptable=False), _p("conformance")],
        [_p("overcommit"), _p("drf", enablePreemptable=False), _p("predicates"), _p("proportion"),
         _p("nodeorder"), _p("binpack")],
    ],
    "binpack": [
        [_p("priority"), _p("gang"), _p("conformance")],
        [_p("overcommit"), _p("drf"), _p("predicates"), _p("proportion"), _p("binpack")],
    ],
    # capacity plugin docs: capacity instead of proportion
    "capacity": [
        [_p("priority"), _p("gang", enablePreemptable=False), _p("conformance")],
        [_p("drf", enablePreemptable=False), _p("predicates"), _p("capacity"), _p("nodeorder")],
    ],
    "capacity-hierarchy": [
        [_p("priority"), _p("gang", enablePreemptable=False), _p("conformance")],
        [_p("drf", enablePreemptable=False), _p("predicates"), _p("capacity", enableHierarchy=True),
         _p("nodeorder")],
    ],
    "drf-hierarchy": [
        [_p("priority"), _p("gang"), _p("conformance")],
        [_p("drf", enableHierarchy=True), _p("predicates"), _p("nodeorder")],
    ],
    # sla docs: sla in the first tier so its Permit overrides later rejections
    "sla": [
        [_p("priority"), _p("gang"), _p("conformance"), _p("sla")],
        [_p("overcommit"), _p("drf"), _p("predicates"), _p("proportion"), _p("nodeorder")],
    ],
    "resourcequota": [
        [_p("priority"), _p("gang"), _p("conformance")],
        [_p("overcommit"), _p("drf"), _p("predicates"), _p("proportion"), _p("nodeorder"),
         _p("resourcequota")],
    ],
    "usage": [
        [_p("priority"), _p("gang"), _p("conformance")],
        [_p("overcommit"), _p("drf"), _p("predicates"), _p("proportion"), _p("nodeorder"),
         _p("usage", enablePredicate=False)],
    ],
    "three-tiers": [
        [_p("priority"), _p("gang"), _p("conformance")],
        [_p("drf"), _p("predicates"), _p("proportion")],
        [_p("nodeorder"), _p("binpack")],
    ],
}
TIER_SET_NAMES: tuple[str, ...] = tuple(TIER_SETS)

# Plugins a user adds to the second tier of a set that lacks them.
OPTIONAL_PLUGINS: tuple[str, ...] = ("binpack", "overcommit", "sla", "resourcequota", "pdb", "nodegroup", "cdp",
                                     "task-topology", "deviceshare")
# How many optional plugins a conf adds: none 28%, one 40%, two 24%, three 8%; in the gate's batches of 40
# each plugin lands in about the share a yes/no draw per plugin gave it; the first entry shrinks to none.
_OPTIONAL_COUNT = st.sampled_from((0,) * 7 + (1,) * 10 + (2,) * 6 + (3,) * 2)
# Never drawn: extender (it needs the process a scenario's extenderServer names; README, Scenarios).
# Plugins that filter victims: they join the first tier, beside priority and gang, where the victims are
# decided (a later tier's filter only counts when the first tier leaves no victim); the cdp guide puts cdp there.
FIRST_TIER_PLUGINS = frozenset({"pdb", "cdp"})

# Enable flags users turn off, per plugin (the first is the most common).
FLAGS_TURNED_OFF: dict[str, tuple[str, ...]] = {
    "gang": ("enablePreemptable", "enableJobStarving", "enableReclaimable", "enableJobOrder"),
    "drf": ("enablePreemptable", "enableJobOrder", "enableQueueOrder"),
    "priority": ("enableJobOrder", "enableTaskOrder", "enablePreemptable"),
    "conformance": ("enablePreemptable", "enableReclaimable"),
    "proportion": ("enableQueueOrder", "enableReclaimable"),
    "capacity": ("enableReclaimable", "enableQueueOrder"),
    "nodeorder": ("enableNodeOrder",),
    "binpack": ("enableNodeOrder",),
    "overcommit": ("enableJobEnqueued",),
    "usage": ("enablePredicate", "enableNodeOrder"),
    "sla": ("enableJobOrder",),
}

# Flags users turn on, per plugin: nodegroup's queues inherit an ancestor's affinity (its guide).
FLAGS_TURNED_ON: dict[str, tuple[str, ...]] = {
    "nodegroup": ("enableHierarchy",),
}

# ---------------------------------------------------------------- arguments


@st.composite
def nodeorder_arguments(draw: st.DrawFn) -> dict[str, int]:
    """Weights as the nodeorder docs show them; each key present or not."""
    out: dict[str, int] = {}
    for key, values in (
        ("leastrequested.weight", (1, 0, 2, 10)),
        ("mostrequested.weight", (0, 1, 2)),
        ("balancedresource.weight", (1, 0, 2)),
        ("nodeaffinity.weight", (2, 0, 1)),
        ("tainttoleration.weight", (3, 0, 1)),
    ):
        if draw(sometimes(30)):
            out[key] = draw(choice(values))
    return out


@st.composite
def binpack_arguments(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if draw(sometimes(50)):
        out["binpack.weight"] = draw(choice((1, 10, 5)))
    if draw(sometimes(30)):
        out["binpack.cpu"] = draw(choice((1, 5, 2)))
        out["binpack.memory"] = draw(choice((1, 2)))
    if draw(sometimes(30)):
        out["binpack.resources"] = "nvidia.com/gpu"
        out["binpack.resources.nvidia.com/gpu"] = draw(choice((2, 1, 5)))
    return out


def overcommit_arguments() -> st.SearchStrategy[dict[str, Any]]:
    # 1.2 is upstream's default; below 1 falls back to it; integers are read too.
    return st.sampled_from((1.2, 1.0, 1.5, 2, 0.8)).map(lambda f: {"overcommit-factor": f})


def sla_arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from(("1h", "5m", "30s", "1h2m3s", "10m")).map(lambda d: {"sla-waiting-time": d})


def predicates_arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from((
        {"predicate.CacheEnable": True},
        {"predicate.NodeAffinityEnable": True, "predicate.TaintTolerationEnable": True},
        {"predicate.CacheEnable": False},
    ))


def usage_arguments() -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from((
        {"usage.weight": 5, "thresholds": {"cpu": 80, "mem": 80}},
        {"usage.weight": 10, "cpu.weight": 2, "memory.weight": 1, "thresholds": {"cpu": 60, "mem": 70}},
        {"thresholds": {"cpu": 90, "mem": 90}},
    ))


def nodegroup_arguments() -> st.SearchStrategy[dict[str, Any]]:
    """Its guide's two arguments: queues without affinity may use unlabelled nodes; preferred groups scored
    in their listed order."""
    return st.sampled_from(({"strict": False}, {"enablePreferredOrder": True},
                            {"strict": False, "enablePreferredOrder": True}, {"strict": True}))


def task_topology_arguments() -> st.SearchStrategy[dict[str, Any]]:
    # the guides write 10; upstream's default is 1
    return st.sampled_from((10, 1, 2, 5)).map(lambda w: {"task-topology.weight": w})


RESCHEDULING = _p(
    "rescheduling",
    arguments={
        "interval": "0s",
        "metricsPeriod": "10m",
        "strategies": [{"name": "lowNodeUtilization",
                        "params": {"thresholds": {"cpu": 20, "memory": 20},
                                   "targetThresholds": {"cpu": 70, "memory": 70}}}],
    },
)

PLUGIN_ARGUMENTS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "nodeorder": nodeorder_arguments(),
    "binpack": binpack_arguments(),
    "overcommit": overcommit_arguments(),
    "sla": sla_arguments(),
    "predicates": predicates_arguments(),
    "usage": usage_arguments(),
    "nodegroup": nodegroup_arguments(),
    "task-topology": task_topology_arguments(),
    "numa-aware": st.fixed_dictionaries({"weight": choice((1, 10, 2, 0))}),  # numaaware.go: weight, 1 unset
    "deviceshare": deviceshare_arguments(),
}
# How often a plugin in the conf gets arguments, in percent (the rest: 20). sla needs its waiting time to do
# anything; the task-topology guides always set a weight.
ARGUMENT_PERCENT: dict[str, int] = {"sla": 100, "task-topology": 50, "nodegroup": 40, "deviceshare": 100}


@cache
@st.composite
def action_configurations(draw: st.DrawFn, actions: tuple[str, ...]) -> list[dict[str, Any]]:
    """Per-action arguments users set; usually none."""
    out: list[dict[str, Any]] = []
    if "preempt" in actions and draw(rarely(25)):
        out.append({"name": "preempt", "arguments": {"enableTopologyAwarePreemption": True}})
    if "allocate" in actions and draw(rarely(10)):
        out.append({"name": "allocate", "arguments": {"predicateErrorCacheEnable": False}})
    if any(a.startswith("gang") for a in actions) and draw(rarely(30)):
        out.append({"name": "gangpreempt", "arguments": {"allowWholeBundle": False}})
    return out


# ---------------------------------------------------------------- confs


def _names(tiers: list[list[dict[str, Any]]]) -> set[str]:
    return {p["name"] for tier in tiers for p in tier}


@st.composite
def scheduler_confs(
    draw: st.DrawFn,
    tier_sets: tuple[str, ...] = TIER_SET_NAMES,
    action_orders: tuple[str, ...] = ACTION_ORDERS,
    gang_actions: bool = True,
    flags: bool = True,
    arguments: bool = True,
) -> dict[str, Any]:
    """A volcano-scheduler.conf document (a mapping), shrinking towards upstream's default conf.

    `tier_sets` and `action_orders` restrict the choices (their first entry is the shrink
    target); `gang_actions` lets the gangpreempt/gangreclaim orders appear (on by default: three
    60 s gate runs with them, seeds 1 to 3, found nothing on the clean reference);
    `flags` and `arguments` allow turned-off enable flags and plugin arguments.
    """
    orders = tuple(action_orders) + (GANG_ACTION_ORDERS if gang_actions else ())
    actions_text = draw(choice(orders))
    if actions_text == GANG_ACTION_ORDERS[0] and draw(rarely(50)):
        actions_text = GANG_THEN_ALLOCATE
    actions = [a.strip() for a in actions_text.split(",")]
    tiers = copy.deepcopy(TIER_SETS[draw(choice(tuple(tier_sets)))])
    names = _names(tiers)

    # Optional plugins join the second tier (where users put them), respecting upstream's rules: how many,
    # then which (two or three choices where a yes/no per plugin took nine). Each pick indexes the whole list
    # (one already there is skipped), so the shrinker can drop a pick with the count in front of it.
    for _ in range(draw(_OPTIONAL_COUNT)):
        name = draw(choice(OPTIONAL_PLUGINS))
        if name in names:
            continue
        if name == "deviceshare" and {"gangpreempt", "gangreclaim"} & set(actions):
            continue  # not with the gang actions yet (docs/findings.md F31, F32; generators/scenarios.py)
        tiers[0 if name in FIRST_TIER_PLUGINS else -1].append(_p(name))
        names.add(name)
    if "shuffle" in actions and "rescheduling" not in names:
        tiers[-1].append(copy.deepcopy(RESCHEDULING))
        names.add("rescheduling")

    if arguments:
        for tier in tiers:
            for plugin in tier:
                strategy = PLUGIN_ARGUMENTS.get(plugin["name"])
                if strategy is None or "arguments" in plugin:
                    continue
                percent = ARGUMENT_PERCENT.get(plugin["name"], 20)
                if percent == 100 or draw(rarely(percent)):
                    args = draw(strategy)
                    if args:
                        plugin["arguments"] = args

    if flags:
        candidates = [(ti, pi) for ti, tier in enumerate(tiers) for pi, p in enumerate(tier)
                      if p["name"] in FLAGS_TURNED_OFF]
        if candidates and draw(rarely(20)):
            ti, pi = draw(choice(tuple(candidates)))
            plugin = tiers[ti][pi]
            flag = draw(choice(FLAGS_TURNED_OFF[plugin["name"]]))
            plugin[flag] = False
        for plugin in (p for tier in tiers for p in tier if p["name"] in FLAGS_TURNED_ON):
            for flag in FLAGS_TURNED_ON[plugin["name"]]:
                if draw(sometimes(35)):
                    plugin[flag] = True

    conf: dict[str, Any] = {"actions": actions_text, "tiers": [{"plugins": tier} for tier in tiers]}
    configurations = draw(action_configurations(tuple(actions)))
    if configurations:
        conf["configurations"] = configurations
    return conf


def default_conf() -> dict[str, Any]:
    """Upstream's default conf as a document (what scheduler_confs() shrinks to)."""
    return {"actions": DEFAULT_ACTIONS, "tiers": [{"plugins": copy.deepcopy(t)} for t in DEFAULT_TIERS]}


# ---------------------------------------------------------------- what a conf implies for the cluster


@dataclass(frozen=True)
class ConfFeatures:
    """What the objects of a scenario should carry for this conf to have something to do."""

    plugins: frozenset[str]
    actions: tuple[str, ...]
    queue_hierarchy: str | None  # "capacity" (spec.parent), "drf" (hierarchy annotations), "nodegroup"
    # (spec.parent) or None
    deserved: bool  # capacity reads spec.deserved
    sla: bool
    metrics: bool  # usage / rescheduling read node usage annotations
    resource_quotas: bool
    pdbs: bool = False  # the pdb plugin reads PodDisruptionBudgets
    node_groups: bool = False  # nodegroup reads node labels, queue affinities and limits
    cooldowns: bool = False  # cdp reads pods' cooldowns and PodScheduled times against `now`
    task_topology: bool = False  # task-topology reads PodGroup annotations naming the job's roles
    numa: bool = False  # numa-aware reads Numatopology objects and Guaranteed pods' topology policies
    devices: dict[str, Any] | None = field(default=None, compare=False)  # deviceshare arguments (devices.py)


def conf_features(conf: dict[str, Any]) -> ConfFeatures:
    plugins = [p for tier in conf.get("tiers", []) for p in tier.get("plugins", [])]
    names = frozenset(p["name"] for p in plugins)
    hierarchy = None
    for p in plugins:
        if p["name"] == "capacity" and p.get("enableHierarchy"):
            hierarchy = "capacity"
        elif p["name"] == "drf" and p.get("enableHierarchy") and hierarchy is None:
            hierarchy = "drf"
    if hierarchy is None and any(p["name"] == "nodegroup" and p.get("enableHierarchy") for p in plugins):
        hierarchy = "nodegroup"  # spec.parent, for queues to inherit an ancestor's affinity
    return ConfFeatures(
        plugins=names,
        actions=tuple(a.strip() for a in conf.get("actions", "").split(",")),
        queue_hierarchy=hierarchy,
        deserved="capacity" in names,
        sla="sla" in names,
        metrics=bool(names & {"usage", "rescheduling"}),
        resource_quotas="resourcequota" in names,
        pdbs="pdb" in names,
        node_groups="nodegroup" in names,
        cooldowns="cdp" in names,
        task_topology="task-topology" in names,
        numa="numa-aware" in names,
        devices=next((p.get("arguments") or {} for p in plugins if p["name"] == "deviceshare"), None),
    )
