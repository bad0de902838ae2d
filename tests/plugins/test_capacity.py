"""capacity: explicit deserved, flat and hierarchical (semantics §9.5)."""

from __future__ import annotations

import pytest

from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import EvictionContext, EvictionKind
from schedcheck.reference.framework.session import PERMIT, REJECT
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.plugins.capacity import STATE_KEY
from tests.builders import node, pod, pod_group, rl
from tests.framework.helpers import conf, session

CPU = 1000.0


def _objects(queues, jobs, cpu="16"):
    """jobs: (group, queue, running, pending[, podgroup extras])."""
    objects = ClusterObjects(nodes=[node("n1", cpu=cpu, memory="64Gi")], queues=list(queues))
    for group, queue, running, pending, *extra in jobs:
        fields = {"phase": "Running" if running else "Inqueue", **(extra[0] if extra else {})}
        objects.pod_groups.append(pod_group(group, 1, queue=queue, **fields))
        objects.pods += [pod(f"{group}-r{i}", group=group, node_name="n1", phase="Running") for i in range(running)]
        objects.pods += [pod(f"{group}-p{i}", group=group) for i in range(pending)]
    return objects


def _open(objects, hierarchy=False):
    flags = {"capacity": {"enableHierarchy": True}} if hierarchy else {}
    ssn = session(objects, conf(["capacity"], **flags))
    return ssn, ssn.plugins["capacity"]


def _fn(ssn, point):
    return ssn._fns[point]["capacity"]


def _tasks(ssn, job, prefix=""):
    return sorted((t for t in ssn.jobs[job].tasks.values() if t.name.startswith(prefix)), key=lambda t: t.name)


# -- flat mode ------------------------------------------------------------------------------------


def _flat():
    # 8 cpu. Σ guarantee = 2 (qd), so realCapability = 6 + own guarantee, capped by capability.
    queues = [Queue("qa", "qa", deserved=rl(cpu="2"), capability=rl(cpu="3")),
              Queue("qb", "qb", deserved=rl(cpu="10")),
              Queue("qc", "qc"),
              Queue("qd", "qd", deserved=rl(cpu="1"), guarantee=rl(cpu="2"))]
    jobs = [("ja", "qa", 0, 5), ("jb", "qb", 0, 1), ("jc", "qc", 0, 1), ("jd", "qd", 0, 1)]
    return _open(_objects(queues, jobs, cpu="8"))


def test_flat_deserved_is_spec_capped_by_real_capability_and_raised_to_guarantee():
    _, plugin = _flat()
    attrs = plugin.queue_attrs
    assert [attrs[q].real_capability.milli_cpu for q in ("qa", "qb", "qd")] == [3 * CPU, 6 * CPU, 8 * CPU]
    assert [attrs[q].deserved.milli_cpu for q in ("qa", "qb", "qc", "qd")] == [2 * CPU, 6 * CPU, 0, 2 * CPU]
    assert attrs["qc"].share == 1.0 and attrs["qa"].share == 0.0  # best effort: share 1


def test_flat_queue_order_prefers_a_queue_with_deserved_on_equal_share():
    ssn, plugin = _flat()
    order = _fn(ssn, "queue_order")
    qa, qc = ssn.queues["qa"], ssn.queues["qc"]
    assert order(qa, qc) == -1
    plugin.queue_attrs["qa"].allocated.milli_cpu = 2 * CPU
    plugin.queue_attrs["qa"].update_share()
    assert plugin.queue_attrs["qa"].share == 1.0
    assert order(qa, qc) == -1 and order(qc, qa) == 1  # tie on share: deserved first
    qc.queue.priority = 5
    assert order(qc, qa) < 0


def test_flat_allocatable_checks_real_capability_not_deserved():
    ssn, plugin = _flat()
    allocatable = _fn(ssn, "allocatable")
    task = _tasks(ssn, "default/ja")[0]
    plugin.queue_attrs["qa"].allocated.milli_cpu = 2 * CPU  # at deserved already
    assert allocatable(ssn.queues["qa"], task)  # 3 <= realCapability 3
    plugin.queue_attrs["qa"].allocated.milli_cpu = 2.5 * CPU
    assert not allocatable(ssn.queues["qa"], task)
    ssn.queues["qb"].queue.state = "Closing"
    assert not allocatable(ssn.queues["qb"], _tasks(ssn, "default/jb")[0])


def test_flat_preemptive_needs_room_in_capability_and_one_dimension_within_deserved():
    ssn, plugin = _flat()
    preemptive = _fn(ssn, "preemptive")
    task = _tasks(ssn, "default/ja")[0]
    plugin.queue_attrs["qa"].allocated.milli_cpu = 1 * CPU
    assert preemptive(ssn.queues["qa"], task)  # cpu 2 <= deserved 2
    plugin.queue_attrs["qa"].allocated.milli_cpu = 2 * CPU
    assert not preemptive(ssn.queues["qa"], [task])  # cpu 3 > 2, memory vs deserved 0 fails too
    assert not preemptive(ssn.queues["qa"], _tasks(ssn, "default/ja")[:2])  # 4 > capability 3


def _reclaim(over_queue):
    queues = [over_queue, Queue("need", "need", deserved=rl(cpu="4"))]
    return _open(_objects(queues, [("jo", over_queue.name, 4, 0), ("jn", "need", 0, 1)]))


def test_reclaimable_takes_victims_while_above_deserved_on_relevant_dimensions():
    # over deserves 2 cpu (memory and pods not named, so not relevant) and runs 4: 4 > 2, 3 > 2, then 2.
    ssn, _ = _reclaim(Queue("over", "over", deserved=rl(cpu="2")))
    victims, vote = _fn(ssn, "reclaimable")(_tasks(ssn, "default/jn")[0], _tasks(ssn, "default/jo"))
    assert vote == PERMIT and len(victims) == 2


def test_reclaimable_keeps_the_guarantee():
    ssn, _ = _reclaim(Queue("over", "over", deserved=rl(cpu="2"), guarantee=rl(cpu="3")))
    victims, _ = _fn(ssn, "reclaimable")(_tasks(ssn, "default/jn")[0], _tasks(ssn, "default/jo"))
    assert len(victims) == 1  # 4 - 1 = 3 keeps the guarantee, 3 - 1 would not


def test_reclaimee_sharing_no_dimension_with_deserved_is_an_immediate_victim():
    ssn, _ = _reclaim(Queue("over", "over", deserved=rl(nvidia_com__gpu="8")))
    victims, _ = _fn(ssn, "reclaimable")(_tasks(ssn, "default/jn")[0], _tasks(ssn, "default/jo"))
    assert len(victims) == 4


def test_reclaimee_sharing_no_dimension_with_the_reclaimer_is_skipped():
    ssn, _ = _reclaim(Queue("over", "over", deserved=rl(cpu="2")))
    pods_only = TaskInfo(pod("jn-empty", group="jn", cpu="", memory=""))
    victims, _ = _fn(ssn, "reclaimable")(pods_only, _tasks(ssn, "default/jo"))
    assert victims == []


def test_unified_evictable_permits_gang_preempt_and_filters_gang_reclaim():
    ssn, _ = _reclaim(Queue("over", "over", deserved=rl(cpu="2")))
    fn = _fn(ssn, "unified_evictable")
    candidates = _tasks(ssn, "default/jo")
    job = ssn.jobs["default/jn"]
    assert fn(EvictionContext(EvictionKind.GangPreempt, job), candidates) == (candidates, PERMIT)
    victims, _ = fn(EvictionContext(EvictionKind.GangReclaim, job), candidates)
    assert len(victims) == 2


def test_enqueue_checks_real_capability_and_records_the_event():
    queues = [Queue("q", "q", capability=rl(cpu="2"))]
    jobs = [("big", "q", 0, 1, {"min_resources": rl(cpu="3"), "phase": "Pending"}),
            ("ok", "q", 0, 1, {"min_resources": rl(cpu="2"), "phase": "Pending"})]
    ssn, plugin = _open(_objects(queues, jobs))
    enqueueable = _fn(ssn, "job_enqueueable")
    assert enqueueable(ssn.jobs["default/big"]) == REJECT
    assert plugin.events[-1].message == "queue resource quota insufficient: insufficient cpu"
    assert enqueueable(ssn.jobs["default/ok"]) == PERMIT
    _fn(ssn, "job_enqueued")(ssn.jobs["default/ok"])
    assert enqueueable(ssn.jobs["default/ok"]) == REJECT  # its own minResources are now inqueue


# -- hierarchical mode ----------------------------------------------------------------------------


def _tree(extra_queues=(), jobs=None):
    # root (created by the scheduler, no capability: infinite) -> eng (cpu 4, deserved 1) -> dev (cpu 3,
    # guarantee 1), prod (guarantee 1, capability inherited from eng).
    queues = [Queue("eng", "eng", capability=rl(cpu="4"), deserved=rl(cpu="1")),
              Queue("eng-dev", "eng-dev", parent="eng", capability=rl(cpu="3"), guarantee=rl(cpu="1"),
                    deserved=rl(cpu="2")),
              Queue("eng-prod", "eng-prod", parent="eng", guarantee=rl(cpu="1"), deserved=rl(cpu="2")),
              Queue("ops", "ops"),
              *extra_queues]
    jobs = jobs if jobs is not None else [("dev", "eng-dev", 0, 3), ("prod", "eng-prod", 3, 1), ("ops", "ops", 0, 1)]
    return _open(_objects(queues, jobs), hierarchy=True)


def test_hierarchy_links_inherits_capability_and_splits_real_capability():
    _, plugin = _tree()
    attrs = plugin.queue_attrs
    assert attrs["eng-dev"].ancestors == ["root", "eng"] and set(attrs["eng"].children) == {"eng-dev", "eng-prod"}
    assert attrs["root"].capability.milli_cpu > 1e300 and attrs["root"].capability.get("pods") == float(2**63 - 1)
    prod_cap = attrs["eng-prod"].capability
    assert (prod_cap.milli_cpu, prod_cap.memory > 1e300) == (4 * CPU, True)  # cpu from eng, memory from root
    assert attrs["eng"].real_capability.milli_cpu == 4 * CPU
    # (4 - Σ sibling guarantees 2) + own guarantee 1 = 3, capped by capability 3 / 4
    assert attrs["eng-dev"].real_capability.milli_cpu == 3 * CPU
    assert attrs["eng-prod"].real_capability.milli_cpu == 3 * CPU
    # root's deserved is the sum over its children (eng 1, ops and default 0); eng keeps its own 1,
    # not the sum of its children's max(deserved 2, guarantee 1).
    assert attrs["root"].deserved.milli_cpu == 1 * CPU and attrs["eng"].deserved.milli_cpu == 1 * CPU
    assert attrs["eng-dev"].deserved.milli_cpu == 2 * CPU
    assert attrs["eng"].allocated.milli_cpu == 3 * CPU and attrs["root"].allocated.milli_cpu == 3 * CPU


def test_hierarchy_allocatable_checks_every_ancestor_and_only_leaves():
    ssn, plugin = _tree()
    allocatable = _fn(ssn, "allocatable")
    dev_task = _tasks(ssn, "default/dev")[0]
    assert allocatable(ssn.queues["eng-dev"], dev_task)  # dev 1 <= 3, eng 4 <= 4
    ssn.fire_allocate(dev_task)
    assert plugin.queue_attrs["eng"].allocated.milli_cpu == 4 * CPU  # the event reached the ancestors
    assert not allocatable(ssn.queues["eng-dev"], _tasks(ssn, "default/dev")[1])  # eng would hold 5
    assert not allocatable(ssn.queues["eng"], dev_task)  # not a leaf


def test_hierarchy_enqueue_checks_ancestors():
    # prod declares minResources 3 = what it holds: no elastic part (a job without minResources
    # would count wholly as elastic and be subtracted), no inqueue reservation left.
    jobs = [("prod", "eng-prod", 3, 1, {"min_resources": rl(cpu="3")}),
            ("dev", "eng-dev", 0, 2, {"min_resources": rl(cpu="2"), "phase": "Pending"}),
            ("dev1", "eng-dev", 0, 1, {"min_resources": rl(cpu="1"), "phase": "Pending"})]
    ssn, plugin = _tree(jobs=jobs)
    enqueueable = _fn(ssn, "job_enqueueable")
    assert enqueueable(ssn.jobs["default/dev"]) == REJECT  # dev 2 <= 3, but eng 3 + 2 > 4
    assert enqueueable(ssn.jobs["default/dev1"]) == PERMIT
    _fn(ssn, "job_enqueued")(ssn.jobs["default/dev1"])
    assert plugin.queue_attrs["eng"].inqueue.milli_cpu == 1 * CPU


def test_hierarchy_queue_order_compares_where_the_paths_diverge():
    ssn, plugin = _tree()
    order = _fn(ssn, "queue_order")
    dev, prod, ops, eng = (ssn.queues[q] for q in ("eng-dev", "eng-prod", "ops", "eng"))
    assert order(dev, eng) == -1 and order(eng, dev) == 1  # leaves first
    # siblings: dev 0/2 vs prod 3/2
    assert order(dev, prod) == -1
    # dev vs ops diverge under root: eng (3/1) vs ops (best effort, 1): ops first
    assert plugin.queue_attrs["eng"].share == 3.0
    assert order(dev, ops) == 1 and order(ops, dev) == -1


def test_hierarchy_victim_queue_order_prefers_the_closest_relative():
    ssn, _ = _tree()
    victim_order = _fn(ssn, "victim_queue_order")
    dev, prod, ops = (ssn.queues[q] for q in ("eng-dev", "eng-prod", "ops"))
    assert victim_order(prod, ops, dev) == -1  # prod shares eng with dev
    assert victim_order(ops, prod, dev) == 1 and victim_order(prod, prod, dev) == 0


def test_job_in_a_non_leaf_queue_makes_the_session_not_ready():
    jobs = [("dev", "eng-dev", 0, 1), ("bad", "eng", 0, 1)]
    ssn, plugin = _tree(jobs=jobs)
    assert not plugin.ready
    assert not _fn(ssn, "allocatable")(ssn.queues["eng-dev"], _tasks(ssn, "default/dev")[0])
    assert _fn(ssn, "job_enqueueable")(ssn.jobs["default/dev"]) == REJECT
    assert _fn(ssn, "reclaimable")(_tasks(ssn, "default/dev")[0], []) == ([], REJECT)
    assert "capacity" not in ssn._fns["queue_order"]


def test_unknown_parent_makes_the_session_not_ready():
    _, plugin = _tree(extra_queues=[Queue("orphan", "orphan", parent="nowhere")])
    assert not plugin.ready


def test_hierarchy_simulation_moves_ancestors_in_the_snapshot_only():
    ssn, plugin = _tree()
    task = _tasks(ssn, "default/dev")[0]
    _fn(ssn, "pre_predicate")(task)
    state = ssn.get_cycle_state(task.uid)
    assert _fn(ssn, "simulate_allocatable")(state, ssn.queues["eng-dev"], task)
    assert _fn(ssn, "simulate_add_task")(state, task, task, None) is None
    assert state[STATE_KEY].get("eng").allocated.milli_cpu == 4 * CPU
    assert not _fn(ssn, "simulate_allocatable")(state, ssn.queues["eng-dev"], _tasks(ssn, "default/dev")[1])
    assert plugin.queue_attrs["eng"].allocated.milli_cpu == 3 * CPU
    assert _fn(ssn, "simulate_remove_task")(state, task, task, None) is None
    assert state[STATE_KEY].get("eng").allocated.milli_cpu == pytest.approx(3 * CPU)
