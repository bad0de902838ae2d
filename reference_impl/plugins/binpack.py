"""binpack: best-fit node scoring (pkg/scheduler/plugins/binpack/binpack.go; semantics §9.8).

Arguments: `binpack.weight` (1), `binpack.cpu` (1), `binpack.memory` (1), `binpack.resources` (a
comma-separated list of extra resource names) and `binpack.resources.<name>` (1). Negative cpu,
memory and extra-resource weights become 1; `binpack.weight` is taken as given, and 0 registers no
node-order function. cpu and memory are set after the extra resources, so they win over an extra
entry of the same name.

NodeOrderFn, over the task's resource names (Resource.ResourceNames order, `pods` included) that it
requests and that have a weight:
    alloc == 0 or w == 0  -> contributes 0, weight still counted
    used + req > alloc    -> the whole node scores 0
    else                  -> (used + req) * w / alloc
    score = Σ / Σw (when Σw > 0) * 100 * binpack.weight
with `used` = node.Used (Releasing included, Pipelined not).
"""

from __future__ import annotations

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.resource_info import CPU, MEMORY
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.arguments import as_arguments
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session

PLUGIN_NAME = "binpack"
BINPACK_WEIGHT = "binpack.weight"
BINPACK_CPU = "binpack.cpu"
BINPACK_MEMORY = "binpack.memory"
BINPACK_RESOURCES = "binpack.resources"
BINPACK_RESOURCES_PREFIX = BINPACK_RESOURCES + "."
MAX_NODE_SCORE = 100


def resource_weights(arguments: dict) -> tuple[int, dict[str, int]]:
    """(binpack.weight, per-resource weights) as upstream's calculateWeight."""
    args = as_arguments(arguments)
    weight = args.get_int(BINPACK_WEIGHT, 1)
    cpu = args.get_int(BINPACK_CPU, 1)
    memory = args.get_int(BINPACK_MEMORY, 1)
    names = args.get(BINPACK_RESOURCES)
    weights: dict[str, int] = {}
    for name in (names if isinstance(names, str) else "").split(","):
        name = name.strip()
        if not name:
            continue
        value = args.get_int(BINPACK_RESOURCES_PREFIX + name, 1)
        weights[name] = value if value >= 0 else 1
    weights["cpu"] = cpu if cpu >= 0 else 1
    weights["memory"] = memory if memory >= 0 else 1
    return weight, weights


class BinpackPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict) -> None:
        super().__init__(arguments)
        self.weight, self.weights = resource_weights(arguments)
        self._requests: dict[str, list[tuple[str, float, int]]] = {}  # task uid -> (name, request, weight)

    def on_session_open(self, ssn: Session) -> None:
        if self.weight != 0:
            ssn.add_fn("node_order", self.name, self.score)

    def _task_requests(self, task: TaskInfo) -> list[tuple[str, float, int]]:
        entries = self._requests.get(task.uid)
        if entries is None:
            resreq = task.resreq
            entries = []
            for name in resreq.resource_names():
                request = resreq.get(name)
                if request != 0 and name in self.weights:
                    entries.append((name, request, self.weights[name]))
            self._requests[task.uid] = entries
        return entries

    def score(self, task: TaskInfo, node: NodeInfo) -> float:
        allocatable, used = node.allocatable, node.used
        score = 0.0
        weight_sum = 0
        for name, request, weight in self._task_requests(task):
            if name == CPU:
                capacity, in_use = allocatable.milli_cpu, used.milli_cpu
            elif name == MEMORY:
                capacity, in_use = allocatable.memory, used.memory
            else:
                capacity, in_use = allocatable.get(name), used.get(name)
            if capacity != 0 and weight != 0:
                total = request + in_use
                if total > capacity:
                    return 0.0
                score += total * weight / capacity
            weight_sum += weight
        if weight_sum > 0:
            score /= weight_sum
        return score * float(MAX_NODE_SCORE * self.weight)


register_plugin_builder(PLUGIN_NAME, BinpackPlugin)
