"""Contested clusters: a full cluster and jobs that want in, so that preempt and reclaim have work.

`scenarios()` draws every feature independently; a state where preempt or reclaim has a victim to weigh
needs several at once (a full cluster whose running pods gang lets go, a waiting job admitted in the
same queue with a higher class, or in another queue under its share, with nothing else keeping it off
the nodes), and 1,200 drawn ci documents held about one. `contested_scenarios()` draws that state on
purpose, with little else: plain nodes; two or three priority classes; flat queues (sometimes one not
reclaimable, or one Closed); an elastic low-priority filler job holding each node in one to three pods
(the victims; now and then kube-system's, or marked not preemptable); now and then a job of a third
queue that reclaim may not touch holding some nodes (so reclaim must stop at the filler's deserved); and
one to four waiting jobs that contend for the room: preemptors in the filler's queue, reclaimers in
others, BestEffort or Never-preempting now and then. The conf always runs preempt, reclaim or both, and
a conf that runs reclaim has a queue besides the filler's (semantics §10, §11; seed 003).

Shrinks towards one node held by two filler pods (gang lets one go), one waiting one-pod preemptor one
class above them, and upstream's default conf with preempt and reclaim.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from schedcheck.generators.confs import conf_features, scheduler_confs
from schedcheck.generators.jobs import filler_job
from schedcheck.generators.ledger import NodeLedger
from schedcheck.generators.nodes import node_lists
from schedcheck.generators.quantities import choice, rarely, requests, sometimes
from schedcheck.generators.queues import queue_lists
from schedcheck.generators.scenarios import API_VERSION, cluster_total, scenario_name
from schedcheck.generators.vocabulary import GROUP_NAME, PREEMPTABLE, SCHEDULER_NAME, timestamp

# Tier sets whose objects this module draws (hierarchies, metrics, sla times and quotas are scenarios()'s).
CONTEST_TIER_SETS = ("default", "minimal", "helm", "binpack", "capacity", "three-tiers")
CONTEST_ACTIONS = (
    "enqueue, allocate, preempt, reclaim, backfill",
    "enqueue, allocate, preempt, backfill",
    "enqueue, allocate, reclaim, backfill",
    "enqueue, allocate, backfill, preempt, reclaim",
    "enqueue, reclaim, allocate, backfill, preempt",
    "enqueue, allocate, backfill, reclaim",
)


def _classes(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """low < (mid <) high, as a cluster's batch, service and critical classes; high sometimes never preempts."""
    low = draw(choice((0, -10, 1)))
    values = {"low": low, "high": low + draw(choice((1000, 1, 100)))}
    if draw(rarely(30)):
        values["mid"] = low + 1 if values["high"] > low + 1 else low
    docs = {}
    for name, value in values.items():
        doc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                               "metadata": {"name": name}, "value": value}
        if name == "high" and draw(rarely(15)):
            doc["preemptionPolicy"] = "Never"
        docs[name] = doc
    return docs


def _waiting_job(draw: st.DrawFn, index: int, queue: str, priority_class: str | None, max_pods: int,
                 best_effort: bool) -> list[dict[str, Any]]:
    """A job whose pods all wait: admitted (Inqueue) mostly, gang minimum 1 to all of its pods."""
    name = f"want-{index}"
    count = draw(st.integers(1, max(1, max_pods)))
    request = {} if best_effort else draw(requests(odd=False, gpu=False))
    pods = []
    for i in range(count):
        spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME,
                                "containers": [{"name": "main", **({"resources": {"requests": dict(request)}}
                                                                   if request else {})}]}
        if priority_class:
            spec["priorityClassName"] = priority_class
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{name}-{i}", "namespace": "default",
                                  "annotations": {GROUP_NAME: name},
                                  "creationTimestamp": timestamp(60 * index + 1)},
                     "spec": spec, "status": {"phase": "Pending"}})
    spec = {"minMember": draw(st.integers(1, count)), "queue": queue}
    if priority_class:
        spec["priorityClassName"] = priority_class
    phase = "Pending" if draw(rarely(25)) else "Inqueue"
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": name, "namespace": "default", "creationTimestamp": timestamp(60 * index)},
             "spec": spec, "status": {"phase": phase}}
    return [group, *pods]


def _holder(draw: st.DrawFn, ledger: NodeLedger, queue_docs: list[dict[str, Any]], filler_queue: str,
            max_pods: int) -> list[dict[str, Any]]:
    """Now and then a job of a third queue that reclaim may not touch (the queue is not reclaimable, or the
    pods are not preemptable) holds some nodes, beyond that queue's share. The filler then sits less far
    above its own deserved than a reclaimer's deserved reaches, so reclaim must stop at the filler's
    deserved while the reclaimer still starves (with the filler holding every node, the reclaimer's queue
    turns overused exactly when the filler's reaches deserved, and that stop is never tested)."""
    candidates = tuple(q["metadata"]["name"] for q in queue_docs
                       if q["metadata"]["name"] != filler_queue and q["status"].get("state") != "Closed")
    if len(ledger.names) < 2 or len(candidates) < 2 or not draw(sometimes(30)):
        return []
    queue = draw(choice(candidates))
    nodes = ledger.names[:draw(st.integers(1, len(ledger.names) - 1))]
    held = filler_job(ledger, name="hold", queue=queue, priority_class=draw(choice(("low", None))),
                      max_pods=max_pods, split=draw(st.integers(1, 2)), nodes=nodes, created=-3600)
    if not held:
        return []
    if draw(rarely(30)):
        for pod in held[1:]:
            pod["metadata"]["annotations"][PREEMPTABLE] = "false"
    else:
        next(q for q in queue_docs if q["metadata"]["name"] == queue)["spec"]["reclaimable"] = False
    return held


@st.composite
def contested_scenarios(
    draw: st.DrawFn,
    max_nodes: int = 4,
    max_jobs: int = 5,
    max_pods_per_job: int = 4,
    max_queues: int = 3,
    max_cycles: int = 3,
    **_: Any,
) -> dict[str, Any]:
    """One scenario document (the same format as `scenarios()`; the other profile bounds are accepted and
    not needed): a full cluster and 1 to max_jobs - 1 waiting jobs contending for it (one fewer with a holder)."""
    conf = draw(scheduler_confs(tier_sets=CONTEST_TIER_SETS, action_orders=CONTEST_ACTIONS, gang_actions=False))
    features = conf_features(conf)
    node_docs = draw(node_lists(1, max_nodes, gpu=False, odd=False))
    # reclaim needs a queue besides the filler's ("default" among the drawn names still leaves one)
    queue_docs = draw(queue_lists(max_queues, deserved=features.deserved, guarantee_total=cluster_total(node_docs),
                                  min_size=2 if "reclaim" in conf["actions"] else 0))
    if queue_docs and draw(rarely(25)):
        queue_docs[0]["spec"]["reclaimable"] = False
    if queue_docs and draw(rarely(15)):  # a Closed queue takes nothing, by allocate or by reclaim
        queue_docs[-1]["status"]["state"] = "Closed"
    queues = ["default"] + [q["metadata"]["name"] for q in queue_docs if q["metadata"]["name"] != "default"]
    classes = _classes(draw)

    ledger = NodeLedger(node_docs)
    filler_queue = draw(choice(tuple(queues)))
    holder = _holder(draw, ledger, queue_docs, filler_queue, max(2, max_pods_per_job)) if max_jobs >= 3 else []
    holder_queue = holder[0]["spec"]["queue"] if holder else None
    # now and then the filler is system work (kube-system), which conformance never offers as a victim
    namespace = "kube-system" if draw(rarely(15)) else "default"
    filler = filler_job(ledger, namespace=namespace, queue=filler_queue, priority_class=draw(choice(("low", None))),
                        max_pods=max(2, max_pods_per_job), split=draw(st.integers(1 if len(node_docs) > 1 else 2, 3)))
    if filler and draw(rarely(20)):
        for pod in filler[1:]:
            pod["metadata"]["annotations"][PREEMPTABLE] = "false"
    higher = [name for name in classes if name != "low"]
    waiting: list[dict[str, Any]] = []
    others = tuple(q for q in queues if q not in (filler_queue, holder_queue))  # where a reclaimer may wait
    for index in range(draw(st.integers(1, max(1, max_jobs - 1 - bool(holder))))):
        preempt = not others or not draw(st.booleans())  # shrinks to preempting, in one queue
        queue = filler_queue if preempt else draw(choice(others))
        priority_class = draw(choice(tuple(higher))) if preempt else draw(choice(("low", *higher, None)))
        waiting += _waiting_job(draw, index, queue, priority_class, max_pods_per_job,
                                best_effort=draw(rarely(10)))
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": ""},
        "schedulerConf": conf,
        "objects": [*classes.values(), *queue_docs, *node_docs, *holder, *filler, *waiting],
        "cycles": draw(st.integers(1, max(1, max_cycles))),
    }
    if draw(sometimes(30)):
        doc["now"] = timestamp(3600)
    doc["metadata"]["name"] = scenario_name(doc)
    return doc
