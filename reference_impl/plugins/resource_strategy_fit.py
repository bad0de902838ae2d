"""resource-strategy-fit: per-resource MostAllocated / LeastAllocated scoring, plus sra and proportional.

Upstream: pkg/scheduler/plugins/resource-strategy-fit/resource_strategy_fit.go; the sra score is
resource_strategy_fit_sra.py (sra.go), the proportional predicate resource_strategy_fit_proportional.py
(proportional.go).

Arguments, each read with framework.Get (mapstructure: ints and floats convert into each other, a float
truncated toward zero; struct fields match case-insensitively; a null value leaves the zero value):
- `resourceStrategyFitWeight` (10): absent or negative -> 10; 0 disables this part of the score.
- `resources`: resource name or pattern -> {type, weight}. Absent or empty -> cpu and memory, both
  LeastAllocated with weight 1. A weight <= 0 becomes 1, a type other than exactly "LeastAllocated" or
  "MostAllocated" becomes LeastAllocated. A pattern may hold one `*`, as its last character
  ("nvidia.com/*"); "*" alone or any other `*` drops the entry (possibly leaving no entry at all).
- `sra` and `proportional`: {enable, resources, ...}, see the two modules.

NodeOrder (registered when resourceStrategyFitWeight > 0 or the sra weight > 0): the sum of
- (resourceStrategyFitWeight > 0) the strategy score: over the task's requested resource names
  (Resource.ResourceNames: cpu, memory, scalars of at least 0.1, `pods` included), each with its entry:
  the exact name, else the wildcard with the longest matching prefix, else the name is skipped. With
  req = request, used = node.Used, alloc = node.Allocatable and w the entry's weight:
      weight 0 or alloc 0 -> contributes 0, weight still counted
      used + req > alloc  -> the whole strategy score is 0
      MostAllocated       -> (used + req) * w / alloc
      LeastAllocated      -> (alloc - used - req) * w / alloc
  score = Σ / Σw (when Σw > 0) * 100 * resourceStrategyFitWeight.
  Pod annotations override the entries: when `volcano.sh/resource-strategy-scoring-type` is set, its
  value is the type for every resource and `volcano.sh/resource-strategy-weight` (JSON object
  name -> integer weight, taken as given) picks the resources and weights; resources it does not name
  are skipped. A missing or empty weight annotation, or one Go's encoding/json cannot read into
  map[string]int, makes the strategy score 0. An annotated type other than the two contributes 0
  (its weight still counted, no capacity check).
- (sra weight > 0) the sra score.

Predicate (registered when proportional is enabled): the proportional check.

Reference notes: where mapstructure cannot decode an argument (say `enable: "yes"`), upstream stops
the scheduler (klog.Fatalf); the reference keeps that argument's default instead. Upstream sums the
per-resource scores with the extended resources in Go map order; the reference uses the order of
the task's request, which may differ in the last bit of a float.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from schedcheck.reference.api.node_info import NodeInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import Session
from schedcheck.reference.plugins.resource_strategy_fit_proportional import (
    BaseResource,
    ProportionalConfig,
    check_proportional,
    proportional_rates,
)
from schedcheck.reference.plugins.resource_strategy_fit_sra import SraConfig, SraWeights, sra_score, sra_weights

PLUGIN_NAME = "resource-strategy-fit"
DEFAULT_WEIGHT = 10
MAX_NODE_SCORE = 100
WEIGHT_KEY = "resourceStrategyFitWeight"
RESOURCES_KEY = "resources"
SRA_KEY = "sra"
PROPORTIONAL_KEY = "proportional"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
SCORING_TYPE_ANNOTATION = "volcano.sh/resource-strategy-scoring-type"
SCORING_WEIGHT_ANNOTATION = "volcano.sh/resource-strategy-weight"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

T = TypeVar("T")


@dataclass(frozen=True)
class ResourceStrategy:
    type: str = ""
    weight: int = 0


@dataclass
class StrategyFit:
    weight: int = DEFAULT_WEIGHT
    resources: dict[str, ResourceStrategy] = field(default_factory=dict)


# -- arguments: the part of mapstructure.Decode that framework.Get relies on -----------------------


class DecodeError(ValueError):
    """mapstructure cannot decode the value (upstream: klog.Fatalf)."""


def decode_int(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecodeError(f"expected an int, got {value!r}")
    if isinstance(value, float):
        # Go's int64(float): truncation; NaN and out-of-range give INT64_MIN on amd64
        return int(value) if math.isfinite(value) and INT64_MIN <= value < 2.0**63 else INT64_MIN
    if not INT64_MIN <= value <= INT64_MAX:
        raise DecodeError(f"{value} overflows int")
    return value


def decode_float(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecodeError(f"expected a float, got {value!r}")
    return float(value)


def decode_bool(value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise DecodeError(f"expected a bool, got {value!r}")
    return value


def decode_str(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DecodeError(f"expected a string, got {value!r}")
    return value


def decode_map(value: Any, decode_value: Callable[[Any], T]) -> dict[str, T]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"expected a map, got {value!r}")
    return {decode_str(key): decode_value(item) for key, item in value.items()}


def struct_fields(value: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The raw value of each Go field name: an exact key first, else the first case-insensitive one."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DecodeError(f"expected a map, got {value!r}")
    found: dict[str, Any] = {}
    for name in names:
        if name in value:
            found[name] = value[name]
            continue
        for key, item in value.items():
            if isinstance(key, str) and key.lower() == name.lower():
                found[name] = item
                break
    return found


def _decode_strategy(value: Any) -> ResourceStrategy:
    raw = struct_fields(value, ("Type", "Weight"))
    return ResourceStrategy(decode_str(raw.get("Type")), decode_int(raw.get("Weight")))


def decode_sra(value: Any) -> SraConfig:
    raw = struct_fields(value, ("Enable", "Resources", "Weight", "ResourceWeight"))
    return SraConfig(decode_bool(raw.get("Enable")), decode_str(raw.get("Resources")),
                     decode_int(raw.get("Weight")), decode_map(raw.get("ResourceWeight"), decode_int))


def decode_proportional(value: Any) -> ProportionalConfig:
    raw = struct_fields(value, ("Enable", "Resources", "ResourceProportion"))
    return ProportionalConfig(decode_bool(raw.get("Enable")), decode_str(raw.get("Resources")),
                              decode_map(raw.get("ResourceProportion"), decode_float))


def _get(arguments: dict[str, Any], key: str, decode: Callable[[Any], T]) -> T | None:
    """framework.Get: None when the key is absent or (upstream: fatal) cannot be decoded."""
    if key not in arguments:
        return None
    try:
        return decode(arguments[key])
    except DecodeError:
        return None


# -- the strategy part -------------------------------------------------------------------------------


def valid_pattern(pattern: str) -> bool:
    """isValidWildcardPattern: no `*`, or exactly one as the last character of a longer name."""
    if "*" not in pattern:
        return True
    return pattern != "*" and pattern.endswith("*") and pattern.count("*") == 1


def strategy_fit_config(arguments: dict[str, Any]) -> StrategyFit:
    """calculateWeight."""
    weight = _get(arguments, WEIGHT_KEY, decode_int)
    if weight is None or weight < 0:
        weight = DEFAULT_WEIGHT
    resources = _get(arguments, RESOURCES_KEY, lambda v: decode_map(v, _decode_strategy))
    if not resources:
        resources = {"cpu": ResourceStrategy(LEAST_ALLOCATED, 1), "memory": ResourceStrategy(LEAST_ALLOCATED, 1)}
    normalised = {}
    for name, strategy in resources.items():
        if not valid_pattern(name):
            continue
        kind = strategy.type if strategy.type in (LEAST_ALLOCATED, MOST_ALLOCATED) else LEAST_ALLOCATED
        normalised[name] = ResourceStrategy(kind, strategy.weight if strategy.weight > 0 else 1)
    return StrategyFit(weight, normalised)


def find_resource_strategy(name: str, resources: dict[str, ResourceStrategy]) -> ResourceStrategy | None:
    """findResourceConfigWithPrefix: the exact entry, else the matching wildcard with the longest prefix."""
    if name in resources:
        return resources[name]
    best, best_prefix = None, ""
    for pattern, strategy in resources.items():
        if "*" not in pattern:
            continue
        prefix = pattern[:-1]
        if name.startswith(prefix) and len(prefix) > len(best_prefix):
            best, best_prefix = strategy, prefix
    return best


def resource_score(kind: str, request: float, used: float, capacity: float, weight: int) -> float | None:
    """mostRequestedScore / leastRequestedScore; None when the node has no room for the request."""
    if kind not in (MOST_ALLOCATED, LEAST_ALLOCATED) or weight == 0 or capacity == 0:
        return 0.0
    total = request + used
    if total > capacity:
        return None
    kept = total if kind == MOST_ALLOCATED else capacity - total
    return kept * weight / capacity


def _json_int(literal: str) -> int:
    value = int(literal)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{literal} overflows int")
    return value


def _json_reject(literal: str) -> Any:
    raise ValueError(f"{literal} is not an int")


def parse_pod_weights(text: str) -> dict[str, int]:
    """json.Unmarshal into map[ResourceName]int; ValueError where Go returns an error."""
    value = json.loads(text, parse_int=_json_int, parse_float=_json_reject, parse_constant=_json_reject)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    weights = {}
    for name, weight in value.items():
        if weight is not None and (isinstance(weight, bool) or not isinstance(weight, int)):
            raise ValueError(f"weight of {name} is not an int")
        weights[name] = 0 if weight is None else weight  # null leaves the int at 0, key set
    return weights


def pod_strategies(task: TaskInfo, fit: StrategyFit) -> Callable[[str], ResourceStrategy | None] | None:
    """Each resource's strategy for this task; None when the annotations make the whole score 0."""
    annotations = task.pod.annotations
    kind = annotations.get(SCORING_TYPE_ANNOTATION, "")
    if not kind:
        return lambda name: find_resource_strategy(name, fit.resources)
    text = annotations.get(SCORING_WEIGHT_ANNOTATION, "")
    if not text:
        return None
    try:
        weights = parse_pod_weights(text)
    except ValueError:
        return None
    return lambda name: ResourceStrategy(kind, weights[name]) if name in weights else None


def strategy_fit_score(task: TaskInfo, node: NodeInfo, fit: StrategyFit) -> float:
    """Score."""
    strategy_of = pod_strategies(task, fit)
    if strategy_of is None:
        return 0.0
    requested, allocatable, used = task.resreq, node.allocatable, node.used
    score, weight_sum = 0.0, 0
    for name in requested.resource_names():
        strategy = strategy_of(name)
        if strategy is None:
            continue
        value = resource_score(strategy.type, requested.get(name), used.get(name), allocatable.get(name),
                               strategy.weight)
        if value is None:
            return 0.0
        score += value
        weight_sum += strategy.weight
    if weight_sum > 0:
        score /= weight_sum
    return score * (float(MAX_NODE_SCORE) * float(fit.weight))


# -- the plugin --------------------------------------------------------------------------------------


class ResourceStrategyFitPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        args = arguments or {}
        self.fit = strategy_fit_config(args)
        sra = _get(args, SRA_KEY, decode_sra) or SraConfig()
        self.sra = sra_weights(sra) if sra.enable else SraWeights()
        proportional = _get(args, PROPORTIONAL_KEY, decode_proportional) or ProportionalConfig()
        self.proportional: dict[str, BaseResource] | None = (
            proportional_rates(proportional) if proportional.enable else None)

    def on_session_open(self, ssn: Session) -> None:
        if self.proportional is not None:
            ssn.add_fn("predicate", self.name, self.predicate)
        if self.fit.weight > 0 or self.sra.weight > 0:
            ssn.add_fn("node_order", self.name, self.node_order)

    def predicate(self, task: TaskInfo, node: NodeInfo) -> FitError | None:
        assert self.proportional is not None
        status = check_proportional(task, node, self.proportional)
        if status.code == StatusCode.Success:
            return None
        return FitError(task.key, node.name, [status])

    def node_order(self, task: TaskInfo, node: NodeInfo) -> float:
        score = 0.0
        if self.fit.weight > 0:
            score += strategy_fit_score(task, node, self.fit)
        if self.sra.weight > 0:
            score += sra_score(task, node, self.sra)
        return score


register_plugin_builder(PLUGIN_NAME, ResourceStrategyFitPlugin)
