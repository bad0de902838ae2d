"""usage: filter and score nodes by their measured load (pkg/scheduler/plugins/usage/usage.go,
estimator.go, shadow_cache.go; semantics §9.14).

Node load figures. Upstream's cache fills NodeInfo.ResourceUsage from a metrics source
(Prometheus, Elasticsearch): CPUUsageAvg and MEMUsageAvg, each a map keyed by the averaging period,
where the cache only ever writes the key "10m" (source.NODE_METRICS_PERIOD), plus MetricsTime,
the time of the sample. The scenario format has no metrics source, so this reference reads them
from node annotations (a schedcheck convention, see node_resource_usage):

    schedcheck.io/cpu-usage-avg: "85.5"     # CPU usage in percent (0-100), stored under "10m"
    schedcheck.io/mem-usage-avg: "40"       # memory usage in percent, stored under "10m"
    schedcheck.io/metrics-time: "2026-05-01T09:58:00Z"   # RFC 3339 time of the sample

A node with neither usage annotation has no metrics (zero MetricsTime: always stale). A node with a
usage annotation but no metrics-time was sampled at the session clock (fresh). A value that does
not parse counts as absent. Metrics are fresh while `now − MetricsTime <= 5m`.

Plugin behaviour:
- Predicate: with stale metrics, pass. Else UnschedulableAndUnresolvable when the cpu average
  exceeds `thresholds.cpu` (default 80), then likewise for memory with `thresholds.mem` (80).
- NodeOrder: 0 with stale metrics. Else, per dimension, the composite utilisation
  `min(max((real% / 100 · capacity + shadow) / capacity, 0), 1)` and the score
  `((1 − cpuComp)·cpu.weight + (1 − memComp)·memory.weight) / (cpu.weight + memory.weight)
  · 100 · usage.weight` (0 when the weights sum to 0).
- Shadow cache: pods placed on a node whose load the metrics cannot show yet carry an estimate.
  At session open every task on a node that is Allocated, Binding or Bound, or Running and started
  less than the metrics interval (30 s) ago, is added; every AllocateFunc event (allocate, pipeline,
  unevict) adds the task, every DeallocateFunc event subtracts what was added for it.
  Estimate of one task, per dimension: best-effort pods `be_cpu` / `be_mem` times the risk factor;
  others `(request·request_ratio + (limit − request)·burst_ratio) · risk`, clamped to
  [0, effective limit], where the effective limit is the limit, or the request when the limit is
  missing or lower. The risk factor is `risk_factor` once the node's weighted composite load
  reaches `risk_threshold`, else 1.

Limits are GetPodResourceLimit's: the containers' limits aggregated (summed, init containers maxed in),
pod-level limits in their place, overhead added to a non-zero limit. Pod status.startTime is not in the
format; a Running pod without it counts as just started, as upstream treats a nil start time. The metrics
interval comes from the scheduler conf's `metrics.interval` upstream, which the reference does not
read: it is always the 30 s default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo, get_pod_resource_limit, get_pod_resource_request
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.arguments import Arguments, as_arguments
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.plugins.sla import SECOND, go_since, seconds_to_ns
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.timestamps import ZERO_TIME, parse_timestamp

PLUGIN_NAME = "usage"
CPU_USAGE_ANNOTATION = "schedcheck.io/cpu-usage-avg"
MEM_USAGE_ANNOTATION = "schedcheck.io/mem-usage-avg"
METRICS_TIME_ANNOTATION = "schedcheck.io/metrics-time"
NODE_METRICS_PERIOD = "10m"  # the only period upstream's cache fills
METRICS_ACTIVE_TIME = 5 * 60 * SECOND
DEFAULT_METRICS_INTERVAL = 30 * SECOND
MAX_NODE_SCORE = 100
NODE_USAGE_CPU_EXTEND = "the CPU load of the node exceeds the upper limit."
NODE_USAGE_MEMORY_EXTEND = "the memory load of the node exceeds the upper limit."


@dataclass
class NodeUsage:
    """api.NodeUsage: per-period averages (percent) and the time of the sample (epoch seconds)."""

    metrics_time: float = ZERO_TIME
    cpu_usage_avg: dict[str, float] = field(default_factory=dict)
    mem_usage_avg: dict[str, float] = field(default_factory=dict)


def _percent(annotations: dict[str, str], key: str) -> float | None:
    try:
        return float(annotations[key])
    except (KeyError, ValueError):
        return None


def node_resource_usage(node: NodeInfo, now: float) -> NodeUsage:
    """The node's ResourceUsage, read from the schedcheck annotations (module docstring)."""
    annotations = node.node.annotations if node.node is not None else {}
    cpu = _percent(annotations, CPU_USAGE_ANNOTATION)
    mem = _percent(annotations, MEM_USAGE_ANNOTATION)
    usage = NodeUsage()
    if cpu is None and mem is None:
        return usage
    usage.metrics_time = now
    if METRICS_TIME_ANNOTATION in annotations:
        try:
            usage.metrics_time = parse_timestamp(annotations[METRICS_TIME_ANNOTATION])
        except ValueError:
            usage.metrics_time = ZERO_TIME
    if cpu is not None:
        usage.cpu_usage_avg[NODE_METRICS_PERIOD] = cpu
    if mem is not None:
        usage.mem_usage_avg[NODE_METRICS_PERIOD] = mem
    return usage


def metrics_fresh(usage: NodeUsage, now: float) -> bool:
    return go_since(seconds_to_ns(now), seconds_to_ns(usage.metrics_time)) <= METRICS_ACTIVE_TIME


# -- arguments ------------------------------------------------------------------------------


@dataclass
class UsageConfig:
    usage_weight: int = 5
    cpu_weight: int = 1
    memory_weight: int = 1
    cpu_threshold: float = 80.0
    mem_threshold: float = 80.0
    request_ratio: float = 0.7
    burst_ratio: float = 0.0
    risk_threshold: float = 0.6
    risk_factor: float = 1.2
    be_cpu: float = 250.0  # milli-cpu
    be_memory: float = float(200 * 1024 * 1024)  # bytes


def _non_negative_int(args: Arguments, key: str, default: int) -> int:
    value = args.get_int(key, default)
    return default if value < 0 else value


def _section(args: Arguments, name: str) -> Arguments | None:
    value = args.get(name)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return as_arguments(value)
    return None


def _best_effort_quantity(value: Any, default: float, int_scale: float, milli: bool) -> float:
    """be_cpu / be_mem: a YAML int (milli-cpu, or MiB) or a quantity string; negative -> default."""
    if isinstance(value, int) and not isinstance(value, bool):
        return default if value < 0 else float(value) * int_scale
    if isinstance(value, str):
        try:
            quantity = Quantity.parse(value)
        except ValueError:
            return default
        if quantity.is_negative():
            return default
        return float(quantity.milli_value() if milli else quantity.value())
    return default


def parse_usage_config(arguments: dict[str, Any]) -> UsageConfig:
    args = as_arguments(arguments)
    config = UsageConfig()
    config.usage_weight = _non_negative_int(args, "usage.weight", config.usage_weight)
    config.cpu_weight = _non_negative_int(args, "cpu.weight", config.cpu_weight)
    config.memory_weight = _non_negative_int(args, "memory.weight", config.memory_weight)
    _parse_thresholds(args, config)
    _parse_estimator(args, config)
    return config


def _parse_thresholds(args: Arguments, config: UsageConfig) -> None:
    section = _section(args, "thresholds")
    if section is None:
        return
    cpu = section.get_int("cpu", int(config.cpu_threshold))
    if 0 <= cpu <= 100:
        config.cpu_threshold = float(cpu)
    mem = section.get_int("mem", int(config.mem_threshold))
    if 0 <= mem <= 100:
        config.mem_threshold = float(mem)


def _parse_estimator(args: Arguments, config: UsageConfig) -> None:
    section = _section(args, "estimator")
    if section is None:
        return
    for key, attr, low, high in (("request_ratio", "request_ratio", 0.0, 1.0),
                                 ("burst_ratio", "burst_ratio", 0.0, 1.0),
                                 ("risk_threshold", "risk_threshold", 0.0, 1.0),
                                 ("risk_factor", "risk_factor", 1.0, float("inf"))):
        value = section.get_float(key, getattr(config, attr))
        if low <= value <= high:
            setattr(config, attr, value)
    config.be_cpu = _best_effort_quantity(section.get("be_cpu"), config.be_cpu, 1.0, milli=True)
    config.be_memory = _best_effort_quantity(section.get("be_mem"), config.be_memory, 1024.0 * 1024.0, milli=False)


# -- estimator (estimator.go) ---------------------------------------------------------------


def load_composite(cpu_comp: float, mem_comp: float, cpu_weight: int, mem_weight: int) -> float:
    total = cpu_weight + mem_weight
    if total == 0:
        return 0.0
    return (cpu_comp * cpu_weight + mem_comp * mem_weight) / total


def applied_risk_factor(load: float, risk_threshold: float, risk_factor: float) -> float:
    if risk_factor < 1.0:
        return 1.0
    return risk_factor if load >= risk_threshold else 1.0


def estimate_pod_resource(request: float, limit: float, request_weight: float, burst_weight: float,
                          risk: float) -> float:
    request = max(request, 0.0)
    effective_limit = request if limit <= 0 or limit < request else limit
    burst = max(effective_limit - request, 0.0)
    estimate = (request * request_weight + burst * burst_weight) * risk
    return min(max(estimate, 0.0), effective_limit)


def composite_utilization(real_percent: float, shadow: float, capacity: float) -> float:
    if capacity <= 0:
        return 0.0
    composite = (real_percent / 100.0 * capacity + shadow) / capacity
    return min(max(composite, 0.0), 1.0)


def node_score(cpu_comp: float, mem_comp: float, cpu_weight: int, mem_weight: int, usage_weight: int) -> float:
    total = cpu_weight + mem_weight
    if total == 0:
        return 0.0
    score = ((1.0 - cpu_comp) * cpu_weight + (1.0 - mem_comp) * mem_weight) / total
    return score * MAX_NODE_SCORE * usage_weight


# -- shadow cache (shadow_cache.go) ---------------------------------------------------------


class ShadowLoadCache:
    """Estimated load of pods the metrics cannot see yet; each pod's estimate is kept to undo it exactly."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self.mem: dict[str, float] = {}
        self.snapshots: dict[str, tuple[str, float, float]] = {}  # task uid -> (node, cpu, mem)

    def add(self, node: str, task_uid: str, cpu: float, mem: float) -> None:
        if task_uid in self.snapshots:
            self._subtract(self.snapshots[task_uid])
        self.cpu[node] = self.cpu.get(node, 0.0) + cpu
        self.mem[node] = self.mem.get(node, 0.0) + mem
        self.snapshots[task_uid] = (node, cpu, mem)

    def sub(self, task_uid: str) -> None:
        snapshot = self.snapshots.pop(task_uid, None)
        if snapshot is not None:
            self._subtract(snapshot)

    def _subtract(self, snapshot: tuple[str, float, float]) -> None:
        node, cpu, mem = snapshot
        self.cpu[node] = max(self.cpu.get(node, 0.0) - cpu, 0.0)
        self.mem[node] = max(self.mem.get(node, 0.0) - mem, 0.0)

    def node_estimate(self, node: str) -> tuple[float, float]:
        return self.cpu.get(node, 0.0), self.mem.get(node, 0.0)


# -- the plugin -----------------------------------------------------------------------------


class UsagePlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.config = parse_usage_config(arguments)
        self.shadow = ShadowLoadCache()
        self.usages: dict[str, NodeUsage] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.usages = {name: node_resource_usage(node, ssn.now) for name, node in ssn.nodes.items()}
        self._warm_up(ssn)
        ssn.add_event_handler(EventHandler(allocate_func=self._on_allocate, deallocate_func=self._on_deallocate))
        ssn.add_fn("predicate", self.name, self.predicate)
        ssn.add_fn("node_order", self.name, self.node_order)

    def usage_of(self, node: NodeInfo) -> NodeUsage:
        usage = self.usages.get(node.name)
        if usage is None:
            usage = self.usages[node.name] = node_resource_usage(node, self.ssn.now)
        return usage

    def predicate(self, task: TaskInfo, node: NodeInfo) -> FitError | None:
        usage = self.usage_of(node)
        if not metrics_fresh(usage, self.ssn.now):
            return None
        config = self.config
        if usage.cpu_usage_avg.get(NODE_METRICS_PERIOD, 0.0) > config.cpu_threshold:
            return self._unresolvable(task, node, NODE_USAGE_CPU_EXTEND)
        if usage.mem_usage_avg.get(NODE_METRICS_PERIOD, 0.0) > config.mem_threshold:
            return self._unresolvable(task, node, NODE_USAGE_MEMORY_EXTEND)
        return None

    @staticmethod
    def _unresolvable(task: TaskInfo, node: NodeInfo, reason: str) -> FitError:
        return FitError(task.key, node.name, [Status(StatusCode.UnschedulableAndUnresolvable, reason, PLUGIN_NAME)])

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        if not metrics_fresh(self.usage_of(node), self.ssn.now):
            return 0.0
        cpu_comp, mem_comp = self._composites(node)
        config = self.config
        return node_score(cpu_comp, mem_comp, config.cpu_weight, config.memory_weight, config.usage_weight)

    def _composites(self, node: NodeInfo) -> tuple[float, float]:
        usage = self.usage_of(node)
        shadow_cpu, shadow_mem = self.shadow.node_estimate(node.name)
        cpu = composite_utilization(usage.cpu_usage_avg.get(NODE_METRICS_PERIOD, 0.0), shadow_cpu,
                                    node.capacity.milli_cpu)
        mem = composite_utilization(usage.mem_usage_avg.get(NODE_METRICS_PERIOD, 0.0), shadow_mem,
                                    node.capacity.memory)
        return cpu, mem

    def risk_factor(self, node: NodeInfo) -> float:
        cpu_comp, mem_comp = self._composites(node)
        config = self.config
        load = load_composite(cpu_comp, mem_comp, config.cpu_weight, config.memory_weight)
        return applied_risk_factor(load, config.risk_threshold, config.risk_factor)

    def estimate(self, task: TaskInfo, risk: float) -> tuple[float, float]:
        config = self.config
        if task.best_effort:
            return max(config.be_cpu, 0.0) * risk, max(config.be_memory, 0.0) * risk
        request = get_pod_resource_request(task.pod)
        limit = get_pod_resource_limit(task.pod)
        cpu = estimate_pod_resource(request.milli_cpu, limit.milli_cpu, config.request_ratio, config.burst_ratio,
                                    risk)
        mem = estimate_pod_resource(request.memory, limit.memory, config.request_ratio, config.burst_ratio, risk)
        return cpu, mem

    def _add_estimate(self, node: NodeInfo, task: TaskInfo) -> None:
        cpu, mem = self.estimate(task, self.risk_factor(node))
        self.shadow.add(node.name, task.uid, cpu, mem)

    def _warm_up(self, ssn: Session) -> None:
        for node in ssn.nodes.values():
            for task in node.tasks.values():
                if self.in_metrics_blind_spot(task):
                    self._add_estimate(node, task)

    def in_metrics_blind_spot(self, task: TaskInfo) -> bool:
        """shouldAddToShadowCache: placed, and not yet visible in the metrics."""
        if not task.node_name:
            return False
        if task.status in (TaskStatus.Allocated, TaskStatus.Binding, TaskStatus.Bound):
            return True
        if task.status != TaskStatus.Running:
            return False
        start = task.pod.start_time
        if not start:
            return True
        started = seconds_to_ns(parse_timestamp(start))
        return go_since(seconds_to_ns(self.ssn.now), started) < DEFAULT_METRICS_INTERVAL

    def _on_allocate(self, event: Event) -> None:
        node = self.ssn.nodes.get(event.task.node_name)
        if node is not None:
            self._add_estimate(node, event.task)

    def _on_deallocate(self, event: Event) -> None:
        self.shadow.sub(event.task.uid)


register_plugin_builder(PLUGIN_NAME, UsagePlugin)
