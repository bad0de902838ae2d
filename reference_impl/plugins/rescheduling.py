"""rescheduling: pick Running tasks to evict from overloaded nodes
(pkg/scheduler/plugins/rescheduling/*.go; semantics §8.6).

Registers VictimTasks (used by the shuffle action), one function per configured strategy; only
`lowNodeUtilization` exists upstream.

Arguments (upstream parses the first `rescheduling` entry of every tier, in tier order, into one
configuration):
- `interval` (Go duration string, default 5m; unparsable -> 5m): the strategies are registered only
  in a session where `lastRescheduleTime + interval` is strictly before the session clock, and that
  session then becomes the last reschedule time. Upstream keeps lastRescheduleTime in a process
  global initialised when the scheduler starts; the reference keeps it per scheduler cache,
  starting 1 ns before the first session's clock (the process starts just before its first
  session), so `interval: 0s` fires in every session and `interval: 1s` in every other one.
- `metricsPeriod` (default "5m"): the key read from the node's usage maps. Also a process global
  upstream: once set it stays set. Upstream's cache only fills the key "10m", so with the default
  every node reads 0% and nothing is ever evicted; set `metricsPeriod: "10m"` to use the figures.
- `strategies`: a list of `{name, params}`; a non-empty list replaces the default
  `[{name: lowNodeUtilization}]`.

Node figures: the usage plugin's node annotations (reference_impl/plugins/usage.py):
`schedcheck.io/cpu-usage-avg` and `schedcheck.io/mem-usage-avg`, in percent, under the period
"10m". Metrics freshness is not checked here.

lowNodeUtilization, with `params.thresholds` and `params.targetThresholds` (cpu, memory in percent,
YAML ints; default 100 each):
1. low nodes: schedulable, and every dimension below its threshold; high nodes: otherwise, some
   dimension above its target threshold. Nothing happens when there is no low node, when every
   node is low, or when there is no high node.
2. room = Σ over low nodes of (target% − usage%) · allocatable (capacity when allocatable is empty),
   truncated to whole milli-cpu and bytes.
3. High nodes in descending cpu% + memory%; on each, its pods by priority (a pod without
   spec.priority first, then ascending), then QoS (BestEffort, Burstable, Guaranteed). For each pod,
   while the node still has a dimension at or above its target and no room total is exactly zero
   (a negative one does not stop it): the first given Running task with the same pod NAME (any
   namespace) becomes a victim; its request leaves the room and, as a percentage of the node's
   status.capacity, its usage.

Reference notes: upstream panics on a non-string `interval` or `metricsPeriod` or on a non-integer
threshold; the reference then keeps the default instead. Upstream walks the session's node map and
sorts nodes and pods with an unstable sort, so ties come out in random order; the reference keeps
the session's node order and each node's task order among equals. QoS is computed from requests only (limits
are not in the scenario format), so a pod is BestEffort without cpu/memory requests, else Burstable.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import ResourceList
from schedcheck.reference.plugins.sla import DurationError, parse_go_duration, seconds_to_ns
from schedcheck.reference.plugins.usage import node_resource_usage
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.qos import pod_qos

PLUGIN_NAME = "rescheduling"
LOW_NODE_UTILIZATION = "lowNodeUtilization"
DEFAULT_INTERVAL = 5 * 60 * 1_000_000_000
DEFAULT_METRICS_PERIOD = "5m"
CPU = "cpu"
MEMORY = "memory"
MIN_INT64 = -(2**63)


@dataclass
class ProcessState:
    """What upstream keeps in package globals for the life of the scheduler process."""

    last_reschedule_ns: int
    metrics_period: str = DEFAULT_METRICS_PERIOD


_PROCESS: weakref.WeakKeyDictionary[Any, ProcessState] = weakref.WeakKeyDictionary()


def process_state(ssn: Session) -> ProcessState:
    state = _PROCESS.get(ssn.cache)
    if state is None:
        state = ProcessState(seconds_to_ns(ssn.now) - 1)
        _PROCESS[ssn.cache] = state
    return state


def time_to_run(state: ProcessState, interval_ns: int, now_ns: int) -> bool:
    if state.last_reschedule_ns + interval_ns < now_ns:
        state.last_reschedule_ns = now_ns
        return True
    return False


# -- configuration ----------------------------------------------------------------------------


@dataclass
class Strategy:
    name: str
    params: dict[str, Any] | None = None


@dataclass
class ReschedulingConfig:
    interval_ns: int = DEFAULT_INTERVAL
    strategies: list[Strategy] = field(default_factory=lambda: [Strategy(LOW_NODE_UTILIZATION)])


def parse_rescheduling_arguments(config: ReschedulingConfig, arguments: dict[str, Any],
                                 state: ProcessState) -> None:
    """Configs.parseArguments: the interval is always re-read (absent -> 5m); strategies only if given."""
    interval = arguments.get("interval")
    try:
        config.interval_ns = parse_go_duration(interval if isinstance(interval, str) else "")
    except DurationError:
        config.interval_ns = DEFAULT_INTERVAL
    period = arguments.get("metricsPeriod")
    if isinstance(period, str):
        state.metrics_period = period
    if state.metrics_period == "":
        state.metrics_period = DEFAULT_METRICS_PERIOD
    strategies = arguments.get("strategies")
    if isinstance(strategies, list) and strategies:
        config.strategies = [s for s in (_decode_strategy(item) for item in strategies) if s is not None]


def rescheduling_config(ssn: Session, state: ProcessState) -> ReschedulingConfig:
    """Upstream parses the first `rescheduling` entry of EVERY tier, in order, into one config."""
    config = ReschedulingConfig()
    for tier in ssn.tiers:
        option = next((o for o in tier.plugins if o.name == PLUGIN_NAME), None)
        if option is not None:
            parse_rescheduling_arguments(config, option.arguments, state)
    return config


def _decode_strategy(item: Any) -> Strategy | None:
    """mapstructure.Decode into {Name, Params}: field names match case-insensitively."""
    if not isinstance(item, dict):
        return None
    fields = {str(k).lower(): v for k, v in item.items()}
    name = fields.get("name", "")
    params = fields.get("params")
    if not isinstance(name, str) or (params is not None and not isinstance(params, dict)):
        return None
    return Strategy(name, params)


@dataclass
class LowNodeUtilizationConf:
    thresholds: dict[str, float] = field(default_factory=lambda: {CPU: 100.0, MEMORY: 100.0, "pods": 100.0})
    target_thresholds: dict[str, float] = field(default_factory=lambda: {CPU: 100.0, MEMORY: 100.0, "pods": 100.0})


def parse_low_node_utilization(params: dict[str, Any] | None) -> LowNodeUtilizationConf:
    """LowNodeUtilizationConf.parse: a malformed thresholds map stops the parse where it is."""
    conf = LowNodeUtilizationConf()
    for key, target in (("thresholds", conf.thresholds), ("targetThresholds", conf.target_thresholds)):
        if not params or key not in params:
            continue
        values = params[key]
        if not isinstance(values, dict) or not _all_int(values):
            return conf
        for name in (CPU, MEMORY, "pod"):  # upstream reads "pod", not "pods"
            if name in values:
                target[name] = float(values[name])
    return conf


def _all_int(values: dict[Any, Any]) -> bool:
    return all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in values.items())


# -- node utilisation --------------------------------------------------------------------------


@dataclass
class NodeUtilization:
    node: NodeInfo
    utilization: dict[str, float]
    pods: list[TaskInfo]


def node_utilizations(ssn: Session, period: str) -> list[NodeUtilization]:
    out = []
    for node in ssn.nodes.values():
        usage = node_resource_usage(node, ssn.now)
        utilization = {CPU: usage.cpu_usage_avg.get(period, 0.0), MEMORY: usage.mem_usage_avg.get(period, 0.0)}
        out.append(NodeUtilization(node, utilization, node.pods()))
    return out


def is_low(usage: NodeUtilization, conf: LowNodeUtilizationConf) -> bool:
    if usage.node.node is not None and usage.node.node.unschedulable:
        return False
    return all(not (name in conf.thresholds and value >= conf.thresholds[name])
               for name, value in usage.utilization.items())


def is_high(usage: NodeUtilization, conf: LowNodeUtilizationConf) -> bool:
    return any(name in conf.target_thresholds and value > conf.target_thresholds[name]
               for name, value in usage.utilization.items())


def group_nodes(usages: list[NodeUtilization],
                conf: LowNodeUtilizationConf) -> tuple[list[NodeUtilization], list[NodeUtilization]]:
    low, high = [], []
    for usage in usages:
        if is_low(usage, conf):
            low.append(usage)
        elif is_high(usage, conf):
            high.append(usage)
    return low, high


def node_capacity(node: NodeInfo) -> ResourceList:
    """getNodeCapacity: allocatable when it is non-empty, else capacity."""
    if node.node is None:
        return {}
    return node.node.allocatable if node.node.allocatable else node.node.capacity


def _go_int64(value: float) -> int:
    """int64(float64) conversion: truncation; amd64 turns NaN and overflow into MinInt64."""
    if not math.isfinite(value) or not MIN_INT64 <= value < 2**63:
        return MIN_INT64
    return int(value)


def percent_to_amount(name: str, percent: float, capacity: ResourceList) -> int:
    """convertPercentToQuan: milli-cpu or bytes, truncated."""
    if name == CPU:
        return _go_int64(percent * float(_quantity(capacity, CPU).milli_value()) * 0.01)
    return _go_int64(percent * float(_quantity(capacity, MEMORY).value()) * 0.01)


def amount_to_percent(name: str, amount: int, capacity: ResourceList) -> float:
    """convertQuanToPercent, on the node's status.capacity; division by zero gives inf or NaN as in Go."""
    used = amount * 10.0**-3 if name == CPU else float(amount)
    total = float(_quantity(capacity, name).as_fraction())
    return _go_divide(used * 100, total)


def _quantity(resources: ResourceList, name: str) -> Quantity:
    return resources.get(name, Quantity(0))


def _go_divide(numerator: float, denominator: float) -> float:
    if denominator != 0:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


# -- victim selection --------------------------------------------------------------------------


_QOS_RANK = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}


def pod_eviction_key(task: TaskInfo) -> tuple[int, int, int]:
    """sortPods: no priority first, then ascending priority, then QoS BestEffort < Burstable < Guaranteed."""
    priority = task.pod.priority
    return (0 if priority is None else 1, priority or 0, _QOS_RANK[pod_qos(task.pod)])


def keep_evicting(usage: NodeUtilization, room: dict[str, int], conf: LowNodeUtilizationConf) -> bool:
    """isContinueEvictPods: some dimension still at or above target, and no room total exactly 0."""
    overused = any(name in conf.target_thresholds and value >= conf.target_thresholds[name]
                   for name, value in usage.utilization.items())
    return overused and all(amount != 0 for amount in room.values())


def evict_from_node(usage: NodeUtilization, room: dict[str, int], tasks: list[TaskInfo],
                    conf: LowNodeUtilizationConf) -> list[TaskInfo]:
    victims = []
    capacity = usage.node.node.capacity if usage.node.node is not None else {}
    for pod_task in sorted(usage.pods, key=pod_eviction_key):
        if not keep_evicting(usage, room, conf):
            break
        task = next((t for t in tasks if t.pod.name == pod_task.pod.name), None)
        if task is None:
            continue
        used_cpu, used_mem = _go_int64(task.resreq.milli_cpu), _go_int64(task.resreq.memory)
        room[CPU] -= used_cpu
        room[MEMORY] -= used_mem
        usage.utilization[CPU] -= amount_to_percent(CPU, used_cpu, capacity)
        usage.utilization[MEMORY] -= amount_to_percent(MEMORY, used_mem, capacity)
        victims.append(task)
    return victims


def low_node_room(low: list[NodeUtilization], conf: LowNodeUtilizationConf) -> dict[str, int]:
    room = {CPU: 0, MEMORY: 0}
    for usage in low:
        capacity = node_capacity(usage.node)
        for name in (CPU, MEMORY):
            room[name] += percent_to_amount(name, conf.target_thresholds[name], capacity)
            room[name] -= percent_to_amount(name, usage.utilization[name], capacity)
    return room


def low_node_utilization_victims(ssn: Session, period: str, params: dict[str, Any] | None,
                                 tasks: list[TaskInfo]) -> list[TaskInfo]:
    conf = parse_low_node_utilization(params)
    low, high = group_nodes(node_utilizations(ssn, period), conf)
    if not low or len(low) == len(ssn.nodes) or not high:
        return []
    room = low_node_room(low, conf)
    high.sort(key=lambda u: -(u.utilization[CPU] + u.utilization[MEMORY]))
    victims: list[TaskInfo] = []
    for usage in high:
        if usage.pods:
            victims.extend(evict_from_node(usage, room, tasks, conf))
    return victims


VictimFn = Callable[[Session, str, dict[str, Any] | None, list[TaskInfo]], list[TaskInfo]]
VICTIM_FNS: dict[str, VictimFn] = {LOW_NODE_UTILIZATION: low_node_utilization_victims}


class ReschedulingPlugin(Plugin):
    name = PLUGIN_NAME

    def on_session_open(self, ssn: Session) -> None:
        state = process_state(ssn)
        config = rescheduling_config(ssn, state)
        if not time_to_run(state, config.interval_ns, seconds_to_ns(ssn.now)):
            return
        strategies = [s for s in config.strategies if s.name in VICTIM_FNS]
        params = {s.name: s.params for s in config.strategies}  # the last entry of a name wins
        period = state.metrics_period

        def victim_tasks(tasks: list[TaskInfo]) -> list[TaskInfo]:
            victims: list[TaskInfo] = []
            for strategy in strategies:
                victims.extend(VICTIM_FNS[strategy.name](ssn, period, params.get(strategy.name), tasks))
            return victims

        ssn.add_fn("victim_tasks", self.name, victim_tasks)


register_plugin_builder(PLUGIN_NAME, ReschedulingPlugin)
