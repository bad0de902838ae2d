"""Whole scenarios: one Hypothesis strategy composing a conf, nodes, queues, classes and jobs.

`scenarios(...)` draws one scenario document (apiVersion schedcheck/v1, kind
Scenario; ../shared/spec/scenario-format.md), so every generated case can be
saved as YAML, read back with the ordinary loader and replayed. The conf is
drawn first and decides what the objects carry: queue hierarchies (spec.parent
or the drf hierarchy annotations) for hierarchical capacity or drf, spec.deserved
for capacity, node usage annotations for usage and rescheduling, sla waiting
times, ResourceQuotas for resourcequota. Pods ask for GPUs only where some node
has them. Sometimes the kube-system pods of another scheduler hold a little of
each node, and sometimes (a full cluster) a running elastic "fill" job, usually
at the lowest priority, takes whatever the nodes have left in one to three pods a
node (victims gang lets go), so that pending
jobs have to wait, preempt or reclaim.

`scenario_profiles` holds the bounds of the two standard runs: "ci" (small and
fast) and "nightly" (larger). Use them as `scenarios(**scenario_profiles["ci"])`.

Everything shrinks towards a simple cluster: one node of 4 cpu / 16Gi, no jobs
(or as few as the property needs, each with one pod asking for 1 cpu / 1Gi), the
implicit default queue, no priority classes, upstream's default conf, one cycle,
no `now`.

Generation is deterministic given Hypothesis' seed: `sample_documents(strategy,
count, seed)` returns the same documents for the same seed, and a document's
name is a hash of its content.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from schedcheck.generators.admission import apply_admission_pressure
from schedcheck.generators.confs import PLUGIN_ARGUMENTS, conf_features, scheduler_confs
from schedcheck.generators.queue_gates import apply_queue_gates
from schedcheck.generators.swarm import PLAIN, swarms
from schedcheck.generators.jobs import filler_job, job_drafts, place_jobs, system_pods
from schedcheck.generators.ledger import NodeLedger
from schedcheck.generators.nodes import node_lists
from schedcheck.generators.queues import hierarchical_queues, leaf_queues, priority_classes, queue_lists, queue_trees
from schedcheck.generators.cooldowns import apply_cooldowns
from schedcheck.generators.devices import apply_devices, apply_mindcluster
from schedcheck.generators.nodegroups import apply_node_groups, default_queue, label_node_groups
from schedcheck.generators.pdbs import pod_disruption_budgets
from schedcheck.generators.spread_defaults import default_spread_selector, spread_scored
from schedcheck.generators.task_topologies import job_roles, task_topology_annotations
from schedcheck.generators.numa import apply_numa
from schedcheck.generators.dra import apply_dra, apply_dra_quotas
from schedcheck.generators.volumes import apply_volumes
from schedcheck.generators.pod_level_resources import apply_pod_level_resources
from schedcheck.generators.quotas import namespace_usage, resource_quotas
from schedcheck.generators.shards import node_shards
from schedcheck.generators.topology import (apply_instance_sub_groups, hyper_node_trees, network_topologies,
                                            sub_group_policies)

GROUP_KEY = "scheduling.k8s.io/group-name"
from schedcheck.generators.vocabulary import NAMESPACES, group_pods, timestamp
from schedcheck.scenario.tree_copy import copy_document
from schedcheck.generators.quantities import CPU, GPU, MEMORY, amounts, choice, rarely, sometimes

API_VERSION = "schedcheck/v1"
_OPTIONAL_NOW = st.one_of(st.none(), st.integers(3600, 3 * 3600))
# cdp's clock: after every job's creation (the first hour) and the pods' binding, so that cooldowns both
# run and have run out by then.
_COOLDOWN_NOW = st.integers(2 * 3600, 3 * 3600)

scenario_profiles: dict[str, dict[str, int]] = {
    # pull requests: seconds per hundred examples
    "ci": {
        "max_nodes": 4,
        "max_jobs": 5,
        "max_pods_per_job": 4,
        "max_queues": 3,
        "max_priority_classes": 3,
        "max_cycles": 3,
    },
    # scheduled runs: larger clusters, longer histories
    "nightly": {
        "max_nodes": 12,
        "max_jobs": 16,
        "max_pods_per_job": 8,
        "max_queues": 6,
        "max_priority_classes": 4,
        "max_cycles": 6,
    },
}


def cluster_total(node_docs: list[dict[str, Any]]) -> dict[str, int]:
    """The cluster's allocatable in whole cores and Gi (rounded down), for top-level guarantees."""
    cpu = sum(amounts(d["status"]["allocatable"]).get(CPU, 0) for d in node_docs)
    memory = sum(amounts(d["status"]["allocatable"]).get(MEMORY, 0) for d in node_docs)
    return {CPU: int(cpu), MEMORY: int(memory / 2**30)}


def scenario_name(doc: dict[str, Any]) -> str:
    """A stable name from the content: the same document always gets the same name."""
    body = {k: v for k, v in doc.items() if k != "metadata"}
    digest = hashlib.sha1(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"generated-{digest}"


@st.composite
def scenarios(
    draw: st.DrawFn,
    max_nodes: int = 4,
    max_jobs: int = 5,
    max_pods_per_job: int = 4,
    max_queues: int = 3,
    max_priority_classes: int = 3,
    max_cycles: int = 3,
    min_nodes: int = 1,
    min_jobs: int = 0,
    confs: st.SearchStrategy[dict[str, Any]] | None = None,
    odd: bool = True,
    gpu: bool | None = None,
    with_system_pods: bool = True,
    use_swarm: bool = True,
) -> dict[str, Any]:
    """One scenario document.

    Bounds: nodes in [min_nodes, max_nodes]; jobs in [min_jobs, max_jobs], each with 1 to
    max_pods_per_job pods (a job with more roles than that gets one pod per role); up to
    max_queues queues (flat, or a tree under root) and max_priority_classes classes;
    `cycles` in [1, max_cycles]. `confs` replaces the conf strategy (default
    `scheduler_confs()`); `use_swarm` lets each scenario lean on a random subset of rare features
    (`generators/swarm.py`); `odd` allows odd and edge quantities; `gpu` forces GPUs on (True)
    or off (False) for nodes and pods, None leaves it to chance.
    """
    swarm = draw(swarms()) if use_swarm else PLAIN
    conf = draw(confs if confs is not None else scheduler_confs())
    features = conf_features(conf)

    # The clock: usage metrics need one to be fresh or stale against; otherwise optional (cdp's is settled
    # after the jobs: a plugin's draws come last, so that dropping the plugin while shrinking leaves the
    # draws before them in place).
    if features.metrics:
        now_offset: int | None = draw(st.integers(3600, 3 * 3600))
    else:
        now_offset = draw(_OPTIONAL_NOW)
    metrics_time = None
    if now_offset is not None and features.metrics:
        metrics_time = timestamp(now_offset - draw(choice((60, 30, 240, 600))))

    node_docs = draw(node_lists(min_nodes, max_nodes, gpu=gpu, metrics=features.metrics,
                                metrics_time=metrics_time, odd=odd))
    total = cluster_total(node_docs)
    # Pods ask for GPUs (sometimes) only where the cluster has some, as users do.
    has_gpus = any(GPU in n["status"]["allocatable"] for n in node_docs)
    pod_gpu = gpu if gpu is not None else (None if has_gpus else False)
    classes = draw(priority_classes(max_priority_classes, never=swarm.never_policy))
    class_values = {c["metadata"]["name"]: c["value"] for c in classes}

    if features.queue_hierarchy is not None:
        # A tree may be just root (every queue created by the scheduler), so that shrinking can
        # drop every queue and then the hierarchical conf.
        tree = draw(queue_trees(0, max_queues))
        queue_docs = draw(hierarchical_queues(tree, deserved=features.deserved, capability_total=total))
        job_queues = leaf_queues(tree)
        if "default" not in tree:
            job_queues.append("default")
    else:
        queue_docs = draw(queue_lists(max_queues, deserved=features.deserved, guarantee_total=total))
        job_queues = ["default"] + [q["metadata"]["name"] for q in queue_docs if q["metadata"]["name"] != "default"]

    ledger = NodeLedger(node_docs)
    extra_pods: list[dict[str, Any]] = []
    if with_system_pods and node_docs and draw(rarely(15)):
        which = draw(st.lists(st.integers(0, len(node_docs) - 1), min_size=1, max_size=len(node_docs)))
        extra_pods = system_pods(node_docs, ledger, which)

    drafts = draw(st.lists(
        job_drafts(queues=tuple(job_queues), priority_classes=tuple(class_values), max_pods=max_pods_per_job,
                   max_nodes=max(1, len(node_docs)), odd=odd, gpu=pod_gpu, sla=features.sla, swarm=swarm),
        min_size=min_jobs, max_size=max_jobs,
    ))
    job_docs = place_jobs(drafts, ledger, class_values)
    # Backfill work usually runs at the lowest priority, so the filler favours the lowest class.
    lowest = [min(class_values, key=class_values.get)] * 2 if class_values else []
    if len(drafts) < max_jobs and node_docs and draw(sometimes(70) if swarm.contested else rarely(35)):
        # A full cluster, as most are: a running elastic job takes whatever is left of the nodes.
        filler = filler_job(ledger, namespace=draw(choice(NAMESPACES)),
                            queue=draw(choice(tuple(job_queues))),
                            priority_class=draw(choice((None, *lowest, *class_values))),
                            max_pods=max_pods_per_job, split=draw(st.integers(1, 3)))
        job_docs = filler + job_docs

    quota_docs = []
    if features.resource_quotas:
        usage = namespace_usage(job_docs + extra_pods)
        for namespace in sorted({d["metadata"]["namespace"] for d in job_docs if d["kind"] == "PodGroup"}):
            if draw(sometimes(60)):
                quota_docs.append(draw(resource_quotas(namespace, usage.get(namespace, {}))))

    if features.pdbs:  # a budget over some job kinds' pods, per namespace
        kinds = sorted({(d["metadata"]["namespace"], d["metadata"]["labels"]["app"]) for d in job_docs
                        if d["kind"] == "Pod" and "app" in d["metadata"].get("labels", {})})
        for namespace, app in kinds:
            if draw(sometimes(50)):
                quota_docs.append(draw(pod_disruption_budgets(namespace, app)))

    # The plugins' own fields last (see the clock above).
    if features.node_groups:
        node_docs = draw(label_node_groups(node_docs))
        queue_docs = _node_group_queues(draw, queue_docs, features.queue_hierarchy == "nodegroup", max_queues)
    if features.cooldowns:
        if now_offset is None or (now_offset < 2 * 3600 and not features.metrics):
            now_offset = draw(_COOLDOWN_NOW)
        apply_cooldowns(draw, job_docs, now_offset)
    if features.task_topology:
        _task_topologies(draw, job_docs)
    if features.numa:
        quota_docs.extend(apply_numa(draw, node_docs, job_docs))
    if features.devices is not None and not {"gangpreempt", "gangreclaim"} & set(features.actions):
        device_docs, device_args = apply_devices(draw, features.devices, node_docs, job_docs)
        quota_docs.extend(device_docs)
        if device_args:  # a conf strategy may hand out one object every time: change a copy
            conf = copy.deepcopy(conf)
            for tier in conf.get("tiers", []):
                for plugin in tier.get("plugins", []):
                    if plugin.get("name") == "deviceshare":
                        plugin["arguments"] = {**(plugin.get("arguments") or {}), **device_args}
    elif features.devices is not None:
        # Not with the gang actions yet: their rollbacks twice over (docs/findings.md F31, F32) break proportion's
        # and drf's accounting in ways only the proportion panic is known for; the conf keeps no deviceshare.
        for tier in conf.get("tiers", []):
            tier["plugins"] = [p for p in tier.get("plugins", []) if p.get("name") != "deviceshare"]

    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": ""},
        "schedulerConf": conf,
        "objects": [*classes, *queue_docs, *node_docs, *extra_pods, *job_docs, *quota_docs],
        "cycles": draw(st.integers(1, max(1, max_cycles))),
    }
    if swarm.topology and node_docs:
        trees = draw(hyper_node_trees([n["metadata"]["name"] for n in node_docs]))
        top = max(t["spec"]["tier"] for t in trees)
        for group in (d for d in job_docs if d["kind"] == "PodGroup"):
            if draw(sometimes(60)):
                group["spec"]["networkTopology"] = draw(network_topologies(top))
            if draw(sometimes(30)):  # subgroups by role: the pods carry their role as a label too
                group["spec"]["subGroupPolicy"] = draw(sub_group_policies(top))
                name = group["metadata"]["name"]
                for pod in job_docs:
                    meta = pod["metadata"]
                    if pod["kind"] == "Pod" and meta.get("annotations", {}).get(GROUP_KEY) == name:
                        role = meta["annotations"].get("volcano.sh/task-spec")
                        if role:
                            meta.setdefault("labels", {})["volcano.sh/task-spec"] = role
        doc["objects"].extend(trees)
        if draw(sometimes(80)) and not any(p.get("name") == "network-topology-aware"
                                          for tier in conf.get("tiers", []) for p in tier.get("plugins", [])):
            conf.setdefault("tiers", [{"plugins": []}])[-1].setdefault("plugins", []).append(
                {"name": "network-topology-aware"})
    if swarm.sharded and node_docs and draw(sometimes(50)):
        options, shard_docs = draw(node_shards([n["metadata"]["name"] for n in node_docs]))
        doc["schedulerOptions"] = options
        doc["objects"].extend(shard_docs)
    if not features.numa and draw(rarely(20)):
        # numa-aware joins a conf that lacks it here, after every other draw, so that adding the plugin did
        # not move the draws of the scenarios drawn before it (the generator tests' samples)
        plugin: dict[str, Any] = {"name": "numa-aware"}
        if draw(rarely(20)):
            plugin["arguments"] = draw(PLUGIN_ARGUMENTS["numa-aware"])
        conf = doc["schedulerConf"] = copy.deepcopy(conf)  # a conf strategy may hand out one object every time
        conf.setdefault("tiers", [{"plugins": []}])[-1].setdefault("plugins", []).append(plugin)
        doc["objects"].extend(apply_numa(draw, node_docs, job_docs))
    if features.devices is not None and not {"gangpreempt", "gangreclaim"} & set(features.actions):
        doc["schedulerConf"] = apply_mindcluster(draw, doc["schedulerConf"], node_docs, job_docs)
    # volumes and DRA after every other draw, so that the samples drawn before they existed stay put
    doc["objects"].extend(apply_volumes(draw, node_docs, job_docs))
    doc["objects"].extend(apply_dra(draw, node_docs, job_docs))
    if spread_scored(doc["schedulerConf"]):
        # Sometimes a Service or ReplicaSet over a job kind (spread's system default constraints); after every
        # other draw, so that the scenarios drawn before it stay as they were.
        kinds = sorted({(d["metadata"]["namespace"], d["metadata"]["labels"]["app"]) for d in job_docs
                        if d["kind"] == "Pod" and "app" in d["metadata"].get("labels", {})})
        for namespace, app in kinds:
            if draw(rarely(25)):
                pods = [d for d in job_docs if d["kind"] == "Pod" and d["metadata"]["namespace"] == namespace
                        and d["metadata"].get("labels", {}).get("app") == app]
                doc["objects"].append(draw(default_spread_selector(namespace, app, pods)))
    apply_pod_level_resources(draw, job_docs)  # pod-level resources last of all, for the same reason
    apply_queue_gates(draw, doc, job_docs)  # Volcano's queue-allocation gate: last, for the same reason
    apply_dra_quotas(draw, doc)  # capacity's DRA quotas (only with DRA claims and capacity): last, as well
    if swarm.min_resources:  # waiting jobs sized against admission's room: last, as well
        apply_admission_pressure(draw, doc["objects"], job_docs)
    if swarm.topology:  # subgroups by replica instance: last, as well
        tiers = [o["spec"]["tier"] for o in doc["objects"] if o["kind"] == "HyperNode"]
        apply_instance_sub_groups(draw, job_docs, max(tiers) if tiers else None)
    if now_offset is not None:
        doc["now"] = timestamp(now_offset)
    doc["metadata"]["name"] = scenario_name(doc)
    return doc


def _node_group_queues(draw: st.DrawFn, queue_docs: list[dict[str, Any]], inherit: bool,
                       max_queues: int) -> list[dict[str, Any]]:
    """The queues with their node-group affinities and limits; the `default` queue written out (so that it
    can have an affinity) when it is not among them and the bound allows."""
    names = {q["metadata"]["name"] for q in queue_docs}
    if "default" not in names and len(queue_docs) < max_queues and draw(sometimes(60)):
        queue_docs = [default_queue(), *queue_docs]
    apply_node_groups(draw, queue_docs, inherit)
    return queue_docs


def _task_topologies(draw: st.DrawFn, job_docs: list[dict[str, Any]]) -> None:
    """Task-topology annotations on some PodGroups, naming their pods' roles (in place)."""
    for group in (d for d in job_docs if d["kind"] == "PodGroup"):
        annotations = draw(task_topology_annotations(job_roles(group_pods(group, job_docs))))
        if annotations:
            group["metadata"].setdefault("annotations", {}).update(annotations)


def profile_scenarios(profile: str = "ci", **overrides: Any) -> st.SearchStrategy[dict[str, Any]]:
    """scenarios() with the bounds of a named profile (see scenario_profiles)."""
    if profile not in scenario_profiles:
        raise ValueError(f"unknown profile {profile!r} (known: {', '.join(scenario_profiles)})")
    return scenarios(**{**scenario_profiles[profile], **overrides})


# ---------------------------------------------------------------- saving and sampling


class _PlainDumper(yaml.SafeDumper):
    """Never writes anchors and aliases, so every object reads on its own."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(doc: dict[str, Any]) -> str:
    """The document as a scenario file (block YAML, keys in document order, no aliases)."""
    return yaml.dump(doc, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, width=120)


def sample_documents(
    strategy: st.SearchStrategy[Any], count: int = 1, seed: int = 0
) -> list[Any]:
    """`count` examples of `strategy`, the same ones for the same seed (no database, no shrinking).

    Hypothesis' own generation, seeded, so the examples are as varied as in a test run (the
    first is the strategy's simplest example). Not for use inside a running Hypothesis test.
    """
    out: list[Any] = []

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(example: Any) -> None:
        out.append(copy_document(example))  # the example's own tree: Hypothesis may share parts of it

    collect()
    return out[:count]
