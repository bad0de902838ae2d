"""resource-strategy-fit, sra part: keep nodes with scarce resources for the tasks that need them.

Upstream: pkg/scheduler/plugins/resource-strategy-fit/sra.go. The plugin is resource_strategy_fit.py.

Arguments (`sra`, decoded in resource_strategy_fit.py): `enable`, `resources` (a comma-separated list
of resource names, blanks trimmed, empty entries dropped), `weight` (taken as given, no default: 0
when absent) and `resourceWeight` (name -> int; a missing name gets 1, a negative one 1, 0 stays 0).
A name listed twice keeps one weight but adds it to the weight sum twice (upstream quirk, kept).

Score of a node for a task:
- 0 when the node's allocatable lacks (is 0 for) any resource name the task requests
  (Resource.ResourceNames: cpu, memory and scalars of at least 0.1, `pods` included);
- else s = Σ weights of the listed resources the node's allocatable has (> 0); with a weight sum
  W > 0 the score is (1 - s / W) * 100 * sra.weight, otherwise s * 100 * sra.weight (which is 0).
So a node carrying none of the scarce resources scores highest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo

MAX_NODE_SCORE = 100


@dataclass
class SraConfig:
    """The decoded `sra` argument (upstream's sraConfig)."""

    enable: bool = False
    resources: str = ""
    weight: int = 0
    resource_weight: dict[str, int] = field(default_factory=dict)


@dataclass
class SraWeights:
    weight: int = 0
    resources: dict[str, int] = field(default_factory=dict)
    weight_sum: int = 0


def sra_weights(config: SraConfig) -> SraWeights:
    """calculateSraWeight; only called when sra is enabled."""
    weights = SraWeights(weight=config.weight)
    for name in config.resources.split(","):
        name = name.strip()
        if not name:
            continue
        weight = config.resource_weight.get(name, 1)
        if weight < 0:
            weight = 1
        weights.resources[name] = weight
        weights.weight_sum += weight
    return weights


def sra_score(task: TaskInfo, node: NodeInfo, sra: SraWeights) -> float:
    allocatable = node.allocatable
    if any(allocatable.get(name) == 0 for name in task.resreq.resource_names()):
        return 0.0
    score = float(sum(weight for name, weight in sra.resources.items() if allocatable.get(name) > 0))
    if sra.weight_sum > 0:
        score = 1.0 - score / sra.weight_sum
    return score * float(MAX_NODE_SCORE * sra.weight)
