"""The scheduler configuration (volcano-scheduler.conf), as upstream models it.

Mirrors pkg/scheduler/conf/scheduler_conf.go (types), pkg/scheduler/util.go
(defaults) and the plugin-default step ApplyPluginConfDefaults. Parsing a conf
document into these types lives in schedcheck/scenario/conf_loader.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# yaml key -> upstream flag name. Note upstream's inconsistent spellings
# (enabledClusterOrder, enabledVictim, ...); they are reproduced exactly.
ENABLE_FLAGS: dict[str, str] = {
    "enableJobOrder": "EnabledJobOrder",
    "enableHierarchy": "EnabledHierarchy",
    "enableJobReady": "EnabledJobReady",
    "enableJobPipelined": "EnabledJobPipelined",
    "enableTaskOrder": "EnabledTaskOrder",
    "enablePreemptable": "EnabledPreemptable",
    "enableReclaimable": "EnabledReclaimable",
    "enablePreemptive": "EnablePreemptive",
    "enableQueueOrder": "EnabledQueueOrder",
    "enabledClusterOrder": "EnabledClusterOrder",
    "enablePredicate": "EnabledPredicate",
    "enableBestNode": "EnabledBestNode",
    "enableNodeOrder": "EnabledNodeOrder",
    "enableTargetJob": "EnabledTargetJob",
    "enableReservedNodes": "EnabledReservedNodes",
    "enableJobEnqueued": "EnabledJobEnqueued",
    "enabledVictim": "EnabledVictim",
    "enableJobStarving": "EnabledJobStarving",
    "enabledOverused": "EnabledOverused",
    "enabledAllocatable": "EnabledAllocatable",
    "enabledHyperNodeOrder": "EnabledHyperNodeOrder",
    "enabledSubJobReady": "EnabledSubJobReady",
    "enabledSubJobPipelined": "EnabledSubJobPipelined",
    "enabledSubJobOrder": "EnabledSubJobOrder",
    "enabledHyperNodeGradient": "EnabledHyperNodeGradient",
}

# ApplyPluginConfDefaults turns every unset flag on, except these two.
FLAGS_LEFT_OFF_BY_DEFAULT = frozenset({"enableHierarchy", "enabledClusterOrder"})

DEFAULT_ACTIONS = ["enqueue", "allocate", "backfill"]
DEFAULT_TIERS = [
    ["priority", "gang", "conformance"],
    ["overcommit", "drf", "predicates", "proportion", "nodeorder"],
]

# pipelinePersistence (a schedcheck switch, not an upstream key): what happens to pipelined decisions
# at session close. "upstream": they vanish, only the nominated-node hint survives an eviction (upstream
# at ed72c7c8). "persistent": the unmerged PR #4552 design (seed 004, semantics §11): the pipelined status
# and node are kept on the pod in annotations and restored by the next session.
PERSISTENCE_UPSTREAM = "upstream"
PERSISTENCE_PERSISTENT = "persistent"
PERSISTENCE_MODES = (PERSISTENCE_UPSTREAM, PERSISTENCE_PERSISTENT)

# builtDirectly (a schedcheck switch, not an upstream key): the conf is handed to the session as a Go value,
# as upstream's unit tests do (uthelper's RegisterSession), not read by the scheduler's conf loader. The
# loader's steps are then skipped: an unset enable flag stays off (no ApplyPluginConfDefaults) and drf with
# enableHierarchy next to proportion in one tier is not refused.
BUILT_DIRECTLY_KEY = "builtDirectly"

# Every action name upstream registers (pkg/scheduler/actions/factory.go).
KNOWN_ACTIONS = frozenset(
    {"enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle", "gangpreempt", "gangreclaim"}
)

# Every plugin name upstream registers (pkg/scheduler/plugins/factory.go).
KNOWN_PLUGINS = frozenset(
    {
        "gang", "priority", "conformance", "drf", "proportion", "capacity", "predicates",
        "nodeorder", "binpack", "overcommit", "sla", "tdm", "usage", "resourcequota",
        "rescheduling", "deviceshare", "numa-aware", "task-topology", "cdp", "pdb", "nodegroup",
        "network-topology-aware", "resource-strategy-fit", "extender",
    }
)


@dataclass
class PluginOption:
    """One plugin entry of a tier: its name, arguments and enable flags.

    `flags` maps the yaml key (e.g. "enableJobOrder") to True/False, or None
    where the document left it unset and no default applies.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    flags: dict[str, bool | None] = field(default_factory=dict)

    def enabled(self, flag_key: str) -> bool:
        """Upstream's `isEnabled(flag)`: the pointer is set and true."""
        return bool(self.flags.get(flag_key))


@dataclass
class Tier:
    plugins: list[PluginOption] = field(default_factory=list)


@dataclass
class SchedulerConf:
    actions: list[str] = field(default_factory=list)
    tiers: list[Tier] = field(default_factory=list)
    configurations: dict[str, dict[str, Any]] = field(default_factory=dict)  # action -> arguments
    is_default: bool = False  # true when no conf was given and upstream's default applied
    pipeline_persistence: str = PERSISTENCE_UPSTREAM  # see PERSISTENCE_MODES
    built_directly: bool = False  # see BUILT_DIRECTLY_KEY

    @property
    def persistent_pipelines(self) -> bool:
        return self.pipeline_persistence == PERSISTENCE_PERSISTENT

    def action_arguments(self, action: str) -> dict[str, Any]:
        return self.configurations.get(action, {})

    def plugin(self, name: str) -> PluginOption | None:
        for tier in self.tiers:
            for option in tier.plugins:
                if option.name == name:
                    return option
        return None


def apply_plugin_conf_defaults(option: PluginOption) -> None:
    """Turn every unset enable flag on, as upstream's ApplyPluginConfDefaults does."""
    for key in ENABLE_FLAGS:
        if option.flags.get(key) is None and key not in FLAGS_LEFT_OFF_BY_DEFAULT:
            option.flags[key] = True


def default_scheduler_conf() -> SchedulerConf:
    tiers = []
    for names in DEFAULT_TIERS:
        options = [PluginOption(name=n) for n in names]
        for option in options:
            apply_plugin_conf_defaults(option)
        tiers.append(Tier(plugins=options))
    return SchedulerConf(actions=list(DEFAULT_ACTIONS), tiers=tiers, is_default=True)
