"""Domain-aware minimisation of failing scenarios (delta debugging on scenario documents).

Hypothesis shrinks what it generates; what it hands over is still a whole
cluster. This module reduces the scenario document itself, the way a person
would: drop whole jobs, then single pods, nodes nobody uses, queues nobody
names, the conf's actions and plugins, optional fields, and bring every
quantity down to a small round number, keeping each change only while the
same invariant still fails (`still_fails(candidate)`).

The reduction is greedy and runs to a fixed point: the passes below run in
order, coarse to fine, and the whole sequence repeats until a round accepts
nothing (or the time budget runs out). It is deterministic: no randomness,
candidates in document order, so the same input and predicate give the same
result.

Passes, in order:

1. `normalise`  (once) a `kind: List` under `objects` becomes a plain list, a
   conf given as a string becomes a mapping, an absent conf becomes upstream's
   default conf written out (so that it can be reduced like any other)
2. `cycles`     fewer cycles (1, half, one less)
3. `wrapper`    drop `expect`, `now` and extra metadata of the Scenario wrapper
4. `jobs`       drop whole jobs: a PodGroup together with its pods (chunked, ddmin-style)
5. `pods`       drop single pods, adjusting nothing else (chunked)
6. `free-nodes` drop nodes no pod names (spec.nodeName, status.nominatedNodeName) (chunked)
7. `nodes`      drop nodes together with the pods placed on them (chunked)
8. `queues`     drop queues no PodGroup (and no other queue, as parent) names (chunked)
9. `others`     drop PriorityClasses, ResourceQuotas and objects of other kinds (chunked)
10. `actions`   drop actions from the conf, and per-action configurations
11. `plugins`   drop plugins, then tiers left empty
12. `plugin-options` drop plugin arguments (all, then one by one) and enable flags
13. `min-member` lower PodGroups' minMember (to 1, half, one less)
14. `fields`    drop optional fields: minResources, minTaskMember, annotations, labels,
                taints, affinity, tolerations, priorities, limits, conditions, ...
15. `dimensions` drop resource names from requests, minResources and queue limits,
                and extended resources from nodes
16. `scale`     divide one resource across the whole scenario by its common factor, or halve it
17. `quantities` round and lower single quantities toward small round values
                (cpu to whole cores, memory to whole Gi/Mi, scalars to whole units)

`minimize` returns the reduced document; `minimize_with_stats` also returns
the statistics (attempts, accepted reductions per pass, object counts before
and after, time, whether the budget ran out).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from schedcheck.reference.framework.conf import DEFAULT_ACTIONS, DEFAULT_TIERS
from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION
from schedcheck.reference.quantity import Quantity

Doc = dict[str, Any]
Predicate = Callable[[Doc], bool]

GI = 1024**3
MI = 1024**2
NAMESPACED = {"Pod", "PodGroup", "ResourceQuota"}
CORE_KINDS = {"Node", "Pod", "PodGroup", "Queue"}
# quantities never lowered: a pod-count limit is not a size (110 is what kubelets report)
UNSCALED = {"pods"}


# ---------------------------------------------------------------- statistics


@dataclass
class MinimizeStats:
    attempts: int = 0  # calls of the predicate (the initial check included)
    accepted: int = 0  # candidates kept
    rounds: int = 0  # passes over the whole sequence
    seconds: float = 0.0
    budget_exhausted: bool = False
    initially_failing: bool = True  # False: the input did not fail, nothing was reduced
    by_pass: Counter[str] = field(default_factory=Counter)  # pass -> accepted reductions
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts, "accepted": self.accepted, "rounds": self.rounds,
            "seconds": round(self.seconds, 3), "budgetExhausted": self.budget_exhausted,
            "initiallyFailing": self.initially_failing, "acceptedByPass": dict(self.by_pass),
            "before": self.before, "after": self.after,
        }

    # Read-only mapping view of to_json(), so that `{**stats, "more": 1}` and `stats["after"]` work.
    def keys(self):
        return self.to_json().keys()

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_json().get(key, default)


def scenario_counts(doc: Doc) -> dict[str, int]:
    """How big a scenario document is: nodes, pods, jobs (PodGroups), queues, objects, conf size, cycles."""
    objects = _objects(doc) or []
    kinds = Counter(o.get("kind") for o in objects if isinstance(o, dict))
    conf = doc.get("schedulerConf") if isinstance(doc, dict) else None
    actions = plugins = 0
    if isinstance(conf, dict):
        actions = len(_actions(conf))
        plugins = sum(len(t.get("plugins") or []) for t in _tiers(conf))
    cycles = doc.get("cycles", 1) if isinstance(doc, dict) else 1
    return {"nodes": kinds["Node"], "pods": kinds["Pod"], "jobs": kinds["PodGroup"], "queues": kinds["Queue"],
            "objects": len(objects), "actions": actions, "plugins": plugins,
            "cycles": cycles if isinstance(cycles, int) else 1}


# ---------------------------------------------------------------- entry points


def minimize(doc: Doc, still_fails: Predicate, budget_seconds: float | None = None) -> Doc:
    """The smallest document reachable by the passes above on which `still_fails` holds."""
    return minimize_with_stats(doc, still_fails, budget_seconds)[0]


def minimize_with_stats(doc: Doc, still_fails: Predicate,
                        budget_seconds: float | None = None) -> tuple[Doc, MinimizeStats]:
    reducer = _Reducer(still_fails, budget_seconds)
    return reducer.run(doc), reducer.stats


def failing_predicate(invariant_id: str, seed: int = 0, mutant: str | None = None) -> Predicate:
    """"This document still violates invariant X": loads it (unreadable: no), runs it with an engine
    limited to X (with the named deliberate bug active, if any), and looks at safety violations and
    quality findings alike. Any other exception while running counts as "no" (a different failure)."""
    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.invariants.catalog import get as get_invariant
    from schedcheck.mutants import MUTANTS
    from schedcheck.mutants import mutant as activate
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.errors import ScenarioError
    from schedcheck.scenario.loader import scenario_from_document

    if mutant is not None and mutant not in MUTANTS:
        raise ValueError(f"unknown mutant {mutant!r} (known: {', '.join(sorted(MUTANTS))})")
    only = [invariant_id] if get_invariant(invariant_id) is not None else []  # e.g. upstream.assert

    def still_fails(candidate: Doc) -> bool:
        try:
            scenario = scenario_from_document(candidate, "<minimise>")
        except ScenarioError:
            return False
        engine = InvariantEngine(only=only, stop_at_first=True)
        try:
            if mutant:
                with activate(mutant):
                    result = run_scenario(scenario, seed=seed, engine=engine)
            else:
                result = run_scenario(scenario, seed=seed, engine=engine)
        except Exception:  # noqa: BLE001 - a crash is a different failure, not this one
            return False
        return any(v.get("id") == invariant_id for v in result.violations + result.findings)

    return still_fails


# ---------------------------------------------------------------- the reducer


class _BudgetExhausted(Exception):
    pass


Edit = tuple[str, Callable[[Doc], list[Doc]]]  # label, doc -> alternative candidates (best first)


class _Reducer:
    def __init__(self, still_fails: Predicate, budget_seconds: float | None) -> None:
        self.still_fails = still_fails
        self.stats = MinimizeStats()
        self.started = time.monotonic()
        self.deadline = None if budget_seconds is None else self.started + budget_seconds
        self.seen: set[bytes] = set()  # candidates already tried (digests of their canonical JSON)
        self.best: Doc = {}  # the smallest document known to fail

    def run(self, doc: Doc) -> Doc:
        self.best = copy.deepcopy(doc)
        self.stats.before = scenario_counts(self.best)
        try:
            self.stats.attempts += 1
            self.stats.initially_failing = bool(self.still_fails(copy.deepcopy(self.best)))
            self.seen.add(_canonical(self.best))
            if self.stats.initially_failing:
                self._reduce()
        except _BudgetExhausted:
            self.stats.budget_exhausted = True
        finally:
            self.stats.seconds = time.monotonic() - self.started
        self.stats.after = scenario_counts(self.best)
        return self.best

    def _reduce(self) -> None:
        for normalise in _NORMALISATIONS:
            candidate = normalise(copy.deepcopy(self.best))
            if candidate is not None:
                self._try(candidate, "normalise")
        while True:
            self.stats.rounds += 1
            before = self.stats.accepted
            for name, step in _PASSES:
                if isinstance(step, _Drop):
                    self._drop_pass(name, step)
                else:
                    self._edit_pass(name, step)
            if self.stats.accepted == before:
                return

    def _try(self, candidate: Doc, pass_name: str) -> bool:
        key = _canonical(candidate)
        if key in self.seen:
            return False
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _BudgetExhausted
        self.seen.add(key)
        self.stats.attempts += 1
        if self.still_fails(copy.deepcopy(candidate)):
            self.best = candidate
            self.stats.accepted += 1
            self.stats.by_pass[pass_name] += 1
            return True
        return False

    def _edit_pass(self, name: str, edits: Callable[[Doc], list[Edit]]) -> None:
        """Try each edit in order; after an accepted one, stay at the same position (it may apply again,
        or the next item has moved into its place)."""
        position = 0
        while True:
            available = edits(self.best)
            if position >= len(available):
                return
            _, make = available[position]
            if not any(self._try(candidate, name) for candidate in make(copy.deepcopy(self.best))):
                position += 1

    def _drop_pass(self, name: str, step: _Drop) -> None:
        """ddmin-style removal: all items at once, then halves, quarters, ..., single items."""
        items = step.items(self.best)
        size = len(items)
        while size >= 1 and items:
            index = 0
            while index < len(items):
                chunk = items[index:index + size]
                if self._try(step.drop(copy.deepcopy(self.best), set(chunk)), name):
                    items = step.items(self.best)  # the next items have moved into place
                else:
                    index += size
            if size == 1:
                return
            size = max(1, size // 2)
            items = step.items(self.best)


def _canonical(doc: Doc) -> bytes:
    """A digest of the document's canonical JSON (the set of tried candidates stays small)."""
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).digest()


# ---------------------------------------------------------------- document access


def _objects(doc: Any) -> list[Any] | None:
    if not isinstance(doc, dict):
        return None
    objects = doc.get("objects")
    return objects if isinstance(objects, list) else None


def _typed(doc: Doc, kind: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, o) for i, o in enumerate(_objects(doc) or []) if isinstance(o, dict) and o.get("kind") == kind]


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _sub(obj: Any, key: str) -> dict[str, Any]:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    """(kind, namespace, name) of an object."""
    meta = _meta(obj)
    kind = str(obj.get("kind"))
    namespace = str(meta.get("namespace") or "default") if kind in NAMESPACED else ""
    return kind, namespace, str(meta.get("name"))


def _pod_group(pod: dict[str, Any]) -> tuple[str, str, str] | None:
    group = _sub(_meta(pod), "annotations").get(GROUP_NAME_ANNOTATION)
    if not isinstance(group, str) or not group:
        return None
    return "PodGroup", str(_meta(pod).get("namespace") or "default"), group


def _pod_nodes(pod: dict[str, Any]) -> set[str]:
    names = {_sub(pod, "spec").get("nodeName"), _sub(pod, "status").get("nominatedNodeName")}
    return {n for n in names if isinstance(n, str) and n}


def _without(doc: Doc, keep: Callable[[Any], bool]) -> Doc:
    doc["objects"] = [o for o in _objects(doc) or [] if keep(o)]
    return doc


# ---------------------------------------------------------------- normalisation


# Plainer forms of the same scenario (each returns None where it does not apply); each is kept only
# if the failure survives it.


def _is_wrapper(doc: Any) -> bool:
    return isinstance(doc, dict) and (doc.get("kind") == "Scenario" or ("kind" not in doc and "objects" in doc))


def _wrap(doc: Any) -> Doc | None:
    """A `kind: List` or a single Kubernetes object becomes a Scenario holding its objects."""
    if _is_wrapper(doc) or not isinstance(doc, dict) or "kind" not in doc:
        return None
    items = doc.get("items") if doc.get("kind") == "List" else [doc]
    if not isinstance(items, list):
        return None
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": "minimised"},
            "objects": items}


def _plain_objects(doc: Any) -> Doc | None:
    objects = doc.get("objects") if _is_wrapper(doc) else None
    if isinstance(objects, dict) and objects.get("kind") == "List" and isinstance(objects.get("items"), list):
        doc["objects"] = objects["items"]
        return doc
    return None


def _conf_mapping(doc: Any) -> Doc | None:
    if not _is_wrapper(doc):
        return None
    conf = doc.get("schedulerConf")
    if isinstance(conf, str):
        import yaml

        try:
            parsed = yaml.safe_load(conf)
        except yaml.YAMLError:
            return None
        if isinstance(parsed, dict) and parsed.get("kind") != "ConfigMap":
            doc["schedulerConf"] = parsed
            return doc
    elif conf is None:  # upstream's default conf, written out so that it can be reduced too
        doc["schedulerConf"] = {"actions": ", ".join(DEFAULT_ACTIONS),
                                "tiers": [{"plugins": [{"name": n} for n in tier]} for tier in DEFAULT_TIERS]}
        return doc
    return None


_NORMALISATIONS: list[Callable[[Any], Doc | None]] = [_wrap, _plain_objects, _conf_mapping]


# ---------------------------------------------------------------- passes: cycles and wrapper


def _lower_int(value: int, floor: int) -> list[int]:
    """Smaller values to try, most aggressive first: floor, half, one less."""
    out: list[int] = []
    for candidate in (floor, value // 2, value - 1):
        if floor <= candidate < value and candidate not in out:
            out.append(candidate)
    return out


def _cycles_edits(doc: Doc) -> list[Edit]:
    cycles = doc.get("cycles")
    if not isinstance(cycles, int) or isinstance(cycles, bool) or cycles <= 1:
        return []

    def make(d: Doc) -> list[Doc]:
        out = []
        for n in _lower_int(cycles, 1):
            candidate = copy.deepcopy(d)
            if n == 1:
                del candidate["cycles"]
            else:
                candidate["cycles"] = n
            out.append(candidate)
        return out
    return [("cycles", make)]


def _wrapper_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for key in ("expect", "now"):
        if key in doc:
            edits.append((f"drop {key}", _dropper((key,))))
    for key in sorted(_sub(doc, "metadata")):
        if key != "name":
            edits.append((f"drop metadata.{key}", _dropper(("metadata", key))))
    return edits


# ---------------------------------------------------------------- passes: dropping objects


@dataclass(frozen=True)
class _Drop:
    items: Callable[[Doc], list[Any]]  # the droppable items, in document order
    drop: Callable[[Doc, set[Any]], Doc]  # the document without them


def _job_items(doc: Doc) -> list[Any]:
    return [_key(o) for _, o in _typed(doc, "PodGroup")]


def _drop_jobs(doc: Doc, jobs: set[Any]) -> Doc:
    return _without(doc, lambda o: not (isinstance(o, dict) and (
        (o.get("kind") == "PodGroup" and _key(o) in jobs) or (o.get("kind") == "Pod" and _pod_group(o) in jobs))))


def _pod_items(doc: Doc) -> list[Any]:
    return [_key(o) for _, o in _typed(doc, "Pod")]


def _drop_keys(doc: Doc, keys: set[Any]) -> Doc:
    return _without(doc, lambda o: not (isinstance(o, dict) and _key(o) in keys))


def _free_node_items(doc: Doc) -> list[Any]:
    named = set().union(*(_pod_nodes(o) for _, o in _typed(doc, "Pod")))
    return [_key(o) for _, o in _typed(doc, "Node") if _key(o)[2] not in named]


def _node_items(doc: Doc) -> list[Any]:
    return [_key(o) for _, o in _typed(doc, "Node")]


def _drop_nodes_with_pods(doc: Doc, nodes: set[Any]) -> Doc:
    names = {name for _, _, name in nodes}
    return _without(doc, lambda o: not (isinstance(o, dict) and (
        (o.get("kind") == "Node" and _key(o) in nodes)
        or (o.get("kind") == "Pod" and _sub(o, "spec").get("nodeName") in names))))


def _queue_items(doc: Doc) -> list[Any]:
    named = {_sub(o, "spec").get("queue") or "default" for _, o in _typed(doc, "PodGroup")}
    named |= {_sub(o, "spec").get("parent") for _, o in _typed(doc, "Queue")}
    return [_key(o) for _, o in _typed(doc, "Queue") if _key(o)[2] not in named]


def _other_items(doc: Doc) -> list[Any]:
    return [_key(o) for o in _objects(doc) or [] if isinstance(o, dict) and o.get("kind") not in CORE_KINDS]


# ---------------------------------------------------------------- passes: the conf


def _conf(doc: Doc) -> dict[str, Any] | None:
    conf = doc.get("schedulerConf")
    return conf if isinstance(conf, dict) else None


def _actions(conf: dict[str, Any]) -> list[str]:
    actions = conf.get("actions")
    return [a.strip() for a in actions.split(",")] if isinstance(actions, str) else []


def _tiers(conf: dict[str, Any]) -> list[dict[str, Any]]:
    tiers = conf.get("tiers")
    return [t for t in tiers if isinstance(t, dict)] if isinstance(tiers, list) else []


def _action_edits(doc: Doc) -> list[Edit]:
    conf = _conf(doc)
    if conf is None:
        return []
    edits: list[Edit] = []
    actions = _actions(conf)
    if len(actions) > 1:
        for index, name in enumerate(actions):
            def make(d: Doc, index: int = index) -> list[Doc]:
                remaining = actions[:index] + actions[index + 1:]
                d["schedulerConf"]["actions"] = ", ".join(remaining)
                return [d]
            edits.append((f"drop action {name}", make))
    configurations = conf.get("configurations")
    if isinstance(configurations, list):
        if configurations:
            edits.append(("drop configurations", _dropper(("schedulerConf", "configurations"))))
        for index in range(len(configurations)):
            edits.append((f"drop configurations[{index}]", _dropper(("schedulerConf", "configurations", index))))
    elif configurations is not None:
        edits.append(("drop configurations", _dropper(("schedulerConf", "configurations"))))
    return edits


def _plugin_edits(doc: Doc) -> list[Edit]:
    conf = _conf(doc)
    if conf is None or not isinstance(conf.get("tiers"), list):
        return []
    edits: list[Edit] = []
    for t, tier in enumerate(conf["tiers"]):
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        if isinstance(plugins, list):
            for p in range(len(plugins)):
                edits.append((f"drop tiers[{t}].plugins[{p}]", _dropper(("schedulerConf", "tiers", t, "plugins", p))))
    for t, tier in enumerate(conf["tiers"]):
        if not isinstance(tier, dict) or not tier.get("plugins"):
            edits.append((f"drop empty tiers[{t}]", _dropper(("schedulerConf", "tiers", t))))
    return edits


def _plugin_option_edits(doc: Doc) -> list[Edit]:
    conf = _conf(doc)
    if conf is None:
        return []
    edits: list[Edit] = []
    for t, tier in enumerate(_tiers(conf)):
        plugins = tier.get("plugins")
        if not isinstance(plugins, list):
            continue
        for p, plugin in enumerate(plugins):
            if not isinstance(plugin, dict):
                continue
            base = ("schedulerConf", "tiers", t, "plugins", p)
            if "arguments" in plugin:
                edits.append((f"drop {plugin.get('name')} arguments", _dropper(base + ("arguments",))))
                if isinstance(plugin["arguments"], dict) and len(plugin["arguments"]) > 1:
                    for key in plugin["arguments"]:
                        edits.append((f"drop {plugin.get('name')} argument {key}",
                                      _dropper(base + ("arguments", key))))
            for key in plugin:
                if key not in ("name", "arguments"):
                    edits.append((f"drop {plugin.get('name')} {key}", _dropper(base + (key,))))
    return edits


# ---------------------------------------------------------------- passes: fields


def _min_member_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for index, group in _typed(doc, "PodGroup"):
        value = _sub(group, "spec").get("minMember")
        if not isinstance(value, int) or isinstance(value, bool) or value <= 1:
            continue

        def make(d: Doc, index: int = index, value: int = value) -> list[Doc]:
            out = []
            for n in _lower_int(value, 1):
                candidate = copy.deepcopy(d)
                candidate["objects"][index]["spec"]["minMember"] = n
                out.append(candidate)
            return out
        edits.append((f"lower minMember of {_key(group)[2]}", make))
    return edits


_META_KEEP = {"name"}
# per kind: (section, key) pairs never dropped by the field pass (they carry the failure's structure)
_PROTECTED = {
    "Pod": {("spec", "containers"), ("spec", "nodeName"), ("status", "phase")},
    "PodGroup": {("spec", "minMember"), ("status", "phase")},
    "Node": set(),
    "Queue": set(),
    "PriorityClass": set(),
    "ResourceQuota": {("spec", "hard")},
}
_LIST_FIELDS = {("spec", "taints"), ("spec", "tolerations"), ("spec", "containers"), ("spec", "initContainers"),
                ("status", "conditions")}


def _field_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for index, obj in enumerate(_objects(doc) or []):
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind")
        label = "/".join(p for p in _key(obj) if p)
        base: tuple[Any, ...] = ("objects", index)
        for key in obj:
            if key not in ("apiVersion", "kind", "metadata", "spec", "status", "value"):
                edits.append((f"{label}: drop {key}", _dropper(base + (key,))))
        meta = _meta(obj)
        for key in meta:
            if key in _META_KEEP or (key == "namespace" and meta[key] != "default"):
                continue  # a namespace other than the default is kept: it ties pods to their PodGroup
            if key == "annotations" and kind == "Pod" and GROUP_NAME_ANNOTATION in _sub(meta, key):
                others = [k for k in meta[key] if k != GROUP_NAME_ANNOTATION]
                if others:
                    edits.append((f"{label}: drop annotations", _keep_only(base + ("metadata", key),
                                                                            {GROUP_NAME_ANNOTATION})))
                    edits += [(f"{label}: drop annotation {k}", _dropper(base + ("metadata", key, k)))
                              for k in others]
                continue
            edits.append((f"{label}: drop metadata.{key}", _dropper(base + ("metadata", key))))
            if key in ("annotations", "labels") and len(_sub(meta, key)) > 1:
                edits += [(f"{label}: drop {key[:-1]} {k}", _dropper(base + ("metadata", key, k))) for k in meta[key]]
        protected = _PROTECTED.get(str(kind), set())
        for section in ("spec", "status"):
            values = _sub(obj, section)
            for key, value in values.items():
                path = base + (section, key)
                if kind == "Node" and section == "status" and key in ("allocatable", "capacity"):
                    other = "capacity" if key == "allocatable" else "allocatable"
                    if key == "capacity" and other in values:  # keep allocatable, the one the scheduler uses
                        edits.append((f"{label}: drop status.capacity", _dropper(path)))
                    continue
                if (section, key) not in protected or ((section, key) == ("status", "phase") and value == "Pending"):
                    edits.append((f"{label}: drop {section}.{key}", _dropper(path)))
                if (section, key) in _LIST_FIELDS and isinstance(value, list):
                    first = 1 if key == "containers" else 0
                    if len(value) > first + 1 or ((section, key) in protected and len(value) > first):
                        edits += [(f"{label}: drop {section}.{key}[{i}]", _dropper(path + (i,)))
                                  for i in range(first, len(value))]
                    if key in ("containers", "initContainers"):
                        edits += _container_edits(label, path, value)
    return edits


def _container_edits(label: str, path: tuple[Any, ...], containers: list[Any]) -> list[Edit]:
    edits: list[Edit] = []
    for i, container in enumerate(containers):
        if not isinstance(container, dict):
            continue
        for key in container:
            if key not in ("resources",):
                edits.append((f"{label}: drop {path[-1]}[{i}].{key}", _dropper(path + (i, key))))
        resources = _sub(container, "resources")
        for key in resources:
            if key != "requests" or "limits" not in resources:
                edits.append((f"{label}: drop {path[-1]}[{i}].resources.{key}",
                              _dropper(path + (i, "resources", key))))
    return edits


# ---------------------------------------------------------------- passes: quantities


def _resource_maps(doc: Doc) -> list[tuple[str, tuple[Any, ...]]]:
    """Every resource list in the scenario: (what it is, path), in document order."""
    maps: list[tuple[str, tuple[Any, ...]]] = []
    for index, obj in enumerate(_objects(doc) or []):
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind")
        base: tuple[Any, ...] = ("objects", index)
        spec, status = _sub(obj, "spec"), _sub(obj, "status")
        if kind == "Pod":
            for section in ("containers", "initContainers"):
                containers = spec.get(section)
                for i, container in enumerate(containers if isinstance(containers, list) else []):
                    for key in ("requests", "limits"):
                        if isinstance(_sub(_sub(container, "resources"), key), dict) and \
                                _sub(_sub(container, "resources"), key):
                            maps.append(("request", base + ("spec", section, i, "resources", key)))
            if _sub(spec, "overhead"):
                maps.append(("request", base + ("spec", "overhead")))
        elif kind == "Node":
            for key in ("allocatable", "capacity"):
                if _sub(status, key):
                    maps.append(("node", base + ("status", key)))
        elif kind == "PodGroup" and _sub(spec, "minResources"):
            maps.append(("limit", base + ("spec", "minResources")))
        elif kind == "Queue":
            for path in (("capability",), ("deserved",), ("guarantee", "resource")):
                holder = spec
                for part in path:
                    holder = _sub(holder, part)
                if holder:
                    maps.append(("limit", base + ("spec",) + path))
        elif kind == "ResourceQuota":
            for section, key in (("spec", "hard"), ("status", "used"), ("status", "hard")):
                if _sub(_sub(obj, section), key):
                    maps.append(("limit", base + (section, key)))
    return maps


def _dimension_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for what, path in _resource_maps(doc):
        values = _get(doc, path)
        for name in values:
            if what == "node" and name in ("cpu", "memory", "pods"):
                continue  # a node without cpu or memory is not simpler, it is a different cluster
            if what == "node":
                edits.append((f"drop {name} from node", _node_dropper(path, name)))
            else:
                edits.append((f"drop {name} at {_path_label(path)}", _dropper(path + (name,))))
    return edits


def _node_dropper(path: tuple[Any, ...], name: str) -> Callable[[Doc], list[Doc]]:
    """Drop an extended resource from both allocatable and capacity of the node."""
    def make(d: Doc) -> list[Doc]:
        status = _get(d, path[:-1])
        for key in ("allocatable", "capacity"):
            if isinstance(status.get(key), dict):
                status[key].pop(name, None)
                if not status[key]:
                    del status[key]
        return [d]
    return make


def _quantity(value: Any) -> Fraction | None:
    try:
        return Quantity.parse(value).as_fraction()
    except (ValueError, TypeError):
        return None


def _unit(name: str, value: Fraction) -> int:
    if name == "memory" or name.endswith("storage"):
        return GI if value >= GI else MI if value >= MI else 1
    return 1


def _render(name: str, value: Fraction) -> str:
    """The plainest spelling of a value: 3, 500m, 4Gi, 512Mi."""
    if value.denominator == 1:
        n = int(value)
        if (name == "memory" or name.endswith("storage")) and n:
            for suffix, size in (("Gi", GI), ("Mi", MI), ("Ki", 1024)):
                if n % size == 0:
                    return f"{n // size}{suffix}"
        return str(n)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{int(milli)}m"
    return str(Quantity(value))


def _simpler_values(name: str, value: Fraction) -> list[Fraction]:
    """Values to try instead, most aggressive first; every one is smaller or rounder."""
    if value <= 0:
        return []
    unit = _unit(name, value)
    whole = value % unit == 0
    out: list[Fraction] = []
    if not whole:
        floor = (value // unit) * unit
        ceil = floor + unit
        for candidate in (floor, ceil):
            if candidate > 0:
                out.append(Fraction(candidate))
        if unit == 1 and value < 1:  # 250m -> 1
            out = [Fraction(1)]
        return out
    n = int(value // unit)
    for m in _lower_int(n, 1):
        out.append(Fraction(m * unit))
    return out


def _quantity_edits(doc: Doc) -> list[Edit]:
    edits: list[Edit] = []
    for what, path in _resource_maps(doc):
        if what == "node" and path[-1] == "capacity" and _sub(_get(doc, path[:-1]), "allocatable"):
            continue  # changed together with allocatable
        values = _get(doc, path)
        for name, raw in values.items():
            if name in UNSCALED:
                continue
            value = _quantity(raw)
            if value is None:
                continue
            alternatives = _simpler_values(name, value)
            spelled = _render(name, value) if value % _unit(name, value) == 0 else str(raw)
            if not alternatives and spelled == str(raw):
                continue

            def make(d: Doc, path: tuple[Any, ...] = path, name: str = name, what: str = what,
                     value: Fraction = value, raw: Any = raw, alternatives: list[Fraction] = alternatives,
                     spelled: str = spelled) -> list[Doc]:
                out = []
                if spelled != str(raw):  # the same value, spelled plainly ("2000m" -> "2")
                    out.append(_set_quantity(copy.deepcopy(d), path, name, what, value, spelled))
                for alternative in alternatives:
                    out.append(_set_quantity(copy.deepcopy(d), path, name, what, value, _render(name, alternative)))
                return out
            edits.append((f"lower {name} at {_path_label(path)}", make))
    return edits


def _set_quantity(d: Doc, path: tuple[Any, ...], name: str, what: str, old: Fraction, new: str) -> Doc:
    _get(d, path)[name] = new
    if what == "node" and path[-1] == "allocatable":  # keep capacity in step when it said the same
        capacity = _sub(_get(d, path[:-1]), "capacity")
        if name in capacity and _quantity(capacity[name]) == old:
            capacity[name] = new
    return d


def _scale_edits(doc: Doc) -> list[Edit]:
    """Divide one resource everywhere by the common factor of its values, or halve it (ratios kept)."""
    places: dict[str, list[tuple[tuple[Any, ...], Fraction]]] = {}
    for _, path in _resource_maps(doc):
        for name, raw in _get(doc, path).items():
            value = _quantity(raw)
            if name in UNSCALED or value is None:
                continue
            places.setdefault(name, []).append((path, value))
    edits: list[Edit] = []
    for name, found in places.items():
        unit = GI if name == "memory" or name.endswith("storage") else 1  # whole Gi, whole cores or units
        if any((v / unit).denominator != 1 for _, v in found):
            continue
        counts = [int(v / unit) for _, v in found]
        if not any(counts):
            continue
        factors = []
        divisor = math.gcd(*counts)
        if divisor > 1:
            factors.append(divisor)
        if divisor % 2 == 0 and divisor != 2:
            factors.append(2)

        def make(d: Doc, name: str = name, found: list = found, unit: int = unit,
                 factors: list[int] = factors) -> list[Doc]:
            out = []
            for factor in factors:
                candidate = copy.deepcopy(d)
                for path, value in found:
                    _get(candidate, path)[name] = _render(name, value / factor)
                out.append(candidate)
            return out
        if factors:
            edits.append((f"scale {name} down", make))
    return edits


# ---------------------------------------------------------------- path helpers


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _path_label(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _remove(d: Doc, path: tuple[Any, ...]) -> bool:
    """Delete the path; then delete mappings left empty on the way up (never the object itself)."""
    try:
        parent = _get(d, path[:-1])
        del parent[path[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    for depth in range(len(path) - 1, 2, -1):  # objects.<i>.<section> at most
        holder = _get(d, path[:depth])
        if isinstance(holder, (dict, list)) and not holder and path[depth - 1] != "metadata":
            del _get(d, path[:depth - 1])[path[depth - 1]]
        else:
            break
    return True


def _dropper(path: tuple[Any, ...]) -> Callable[[Doc], list[Doc]]:
    def make(d: Doc) -> list[Doc]:
        return [d] if _remove(d, path) else []
    return make


def _keep_only(path: tuple[Any, ...], keep: set[str]) -> Callable[[Doc], list[Doc]]:
    def make(d: Doc) -> list[Doc]:
        holder = _get(d, path)
        for key in [k for k in holder if k not in keep]:
            del holder[key]
        return [d]
    return make


_PASSES: list[tuple[str, Any]] = [
    ("cycles", _cycles_edits),
    ("wrapper", _wrapper_edits),
    ("jobs", _Drop(_job_items, _drop_jobs)),
    ("pods", _Drop(_pod_items, _drop_keys)),
    ("free-nodes", _Drop(_free_node_items, _drop_keys)),
    ("nodes", _Drop(_node_items, _drop_nodes_with_pods)),
    ("queues", _Drop(_queue_items, _drop_keys)),
    ("others", _Drop(_other_items, _drop_keys)),
    ("actions", _action_edits),
    ("plugins", _plugin_edits),
    ("plugin-options", _plugin_option_edits),
    ("min-member", _min_member_edits),
    ("fields", _field_edits),
    ("dimensions", _dimension_edits),
    ("scale", _scale_edits),
    ("quantities", _quantity_edits),
]
