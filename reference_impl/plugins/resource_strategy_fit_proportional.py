"""resource-strategy-fit, proportional part: keep cpu and memory back for a node's scarce resources.

Upstream: pkg/scheduler/plugins/resource-strategy-fit/proportional.go. The plugin is
resource_strategy_fit.py.

Arguments (`proportional`, decoded in resource_strategy_fit.py): `enable`, `resources` (a
comma-separated list of resource names, blanks trimmed, empty entries dropped) and
`resourceProportion` (`<name>.cpu` and `<name>.memory` -> number; missing or negative -> 1).

Predicate, for a task on a node:
- a task requesting any listed resource (> 0 among its scalars) passes;
- otherwise, for every listed resource present among the node's idle scalars (even at 0), with v its
  idle amount in milli-units: the node must keep idle.cpu - task.cpu >= v * rate.cpu milli-cpu and
  idle.memory - task.memory >= v * rate.memory * 10^6 bytes (so a rate is in cores and in decimal GB
  per whole unit of the resource); else UnschedulableAndUnresolvable "proportional of resource <name>
  check failed".

Reference note: upstream walks its map of resources in random order, so when several fail, which one
the reason names varies; the reference takes them in the order `resources` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.unschedule_info import Status, StatusCode

PLUGIN_NAME = "resource-strategy-fit"


@dataclass
class ProportionalConfig:
    """The decoded `proportional` argument (upstream's proportionalConfig)."""

    enable: bool = False
    resources: str = ""
    resource_proportion: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BaseResource:
    cpu: float = 1.0
    memory: float = 1.0


def proportional_rates(config: ProportionalConfig) -> dict[str, BaseResource]:
    """calculateProportionalResources; only called when proportional is enabled."""
    rates: dict[str, BaseResource] = {}
    for name in config.resources.split(","):
        name = name.strip()
        if name:
            rates[name] = BaseResource(_rate(config, name + ".cpu"), _rate(config, name + ".memory"))
    return rates


def _rate(config: ProportionalConfig, key: str) -> float:
    rate = config.resource_proportion.get(key, 1.0)
    return 1.0 if rate < 0 else rate


def check_proportional(task: TaskInfo, node: NodeInfo, rates: dict[str, BaseResource]) -> Status:
    """checkNodeResourceIsProportional."""
    passed = Status(StatusCode.Success, "", PLUGIN_NAME)
    requested = task.resreq.scalars or {}
    if any(requested.get(name, 0.0) > 0 for name in rates):
        return passed
    idle = node.idle
    idle_scalars = idle.scalars or {}
    for name, rate in rates.items():
        if name not in idle_scalars:
            continue
        value = idle_scalars[name]
        if (idle.milli_cpu - task.resreq.milli_cpu < value * rate.cpu
                or idle.memory - task.resreq.memory < value * rate.memory * 1000 * 1000):
            return Status(StatusCode.UnschedulableAndUnresolvable,
                          f"proportional of resource {name} check failed", PLUGIN_NAME)
    return passed
