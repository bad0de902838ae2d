"""drf: dominant shares, job order, preemption and hierarchical DRF (semantics §9.3)."""

from __future__ import annotations

import pytest

from schedcheck.reference.framework.session import PERMIT
from schedcheck.reference.k8s import ClusterObjects, Queue
from schedcheck.reference.util.assertion import AssertionViolation
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf, session

HIERARCHY = "volcano.sh/hierarchy"
WEIGHTS = "volcano.sh/hierarchy-weights"


def _objects(nodes, jobs, queues=()):
    """jobs: (group, queue, running, pending, cpu, memory)."""
    objects = ClusterObjects(nodes=nodes, queues=list(queues))
    for group, queue, running, pending, cpu, memory in jobs:
        objects.pod_groups.append(pod_group(group, 0, queue=queue, phase="Running" if running else "Inqueue"))
        objects.pods += [pod(f"{group}-r{i}", group=group, cpu=cpu, memory=memory, node_name=nodes[0].name,
                             phase="Running") for i in range(running)]
        objects.pods += [pod(f"{group}-p{i}", group=group, cpu=cpu, memory=memory) for i in range(pending)]
    return objects


def _open(objects, hierarchy=False):
    flags = {"drf": {"enableHierarchy": True}} if hierarchy else {}
    ssn = session(objects, conf(["drf"], **flags))
    return ssn, ssn.plugins["drf"]


def _tasks(ssn, job, prefix=""):
    return sorted((t for t in ssn.jobs[job].tasks.values() if t.name.startswith(prefix)), key=lambda t: t.name)


def _fn(ssn, point):
    return ssn._fns[point]["drf"]


# -- flat DRF -------------------------------------------------------------------------------------


def test_share_counts_pods_so_many_tiny_pods_are_pods_dominant():
    # 10 cpu, 100Gi, 10 pods. tiny: 4 x 100m/1Gi -> cpu .04, memory .04, pods .4. fat: 1 x 3 cpu -> .3.
    nodes = [node("n1", cpu="10", memory="100Gi", pods="10")]
    ssn, plugin = _open(_objects(nodes, [("tiny", "default", 4, 1, "100m", "1Gi"), ("fat", "default", 1, 1, "3", "1Gi")]))
    tiny, fat = plugin.job_attrs["default/tiny"], plugin.job_attrs["default/fat"]
    assert (tiny.dominant_resource, tiny.share) == ("pods", pytest.approx(0.4))
    assert (fat.dominant_resource, fat.share) == ("cpu", pytest.approx(0.3))
    order = _fn(ssn, "job_order")
    assert order(ssn.jobs["default/fat"], ssn.jobs["default/tiny"]) == -1
    assert order(ssn.jobs["default/tiny"], ssn.jobs["default/fat"]) == 1
    assert order(ssn.jobs["default/tiny"], ssn.jobs["default/tiny"]) == 0


def test_pending_and_pipelined_tasks_do_not_count_at_open():
    nodes = [node("n1", cpu="10", memory="100Gi")]
    _, plugin = _open(_objects(nodes, [("a", "default", 0, 3, "1", "1Gi")]))
    assert plugin.job_attrs["default/a"].share == 0 and plugin.job_attrs["default/a"].dominant_resource == ""


def _preempt_session():
    # 10 cpu (memory and pods plentiful): a runs 2 and asks 1 more (0.3 with it); b runs 6, c runs 3.
    nodes = [node("n1", cpu="10", memory="1000Gi", pods="1000")]
    jobs = [("a", "default", 2, 1, "1", "1Gi"), ("b", "default", 6, 1, "1", "1Gi"), ("c", "default", 3, 0, "1", "1Gi")]
    return _open(_objects(nodes, jobs))


def test_preemptable_subtracts_cumulatively_per_job():
    ssn, _ = _preempt_session()
    preemptor = _tasks(ssn, "default/a", "a-p")[0]
    preemptees = _tasks(ssn, "default/b", "b-r") + _tasks(ssn, "default/c")
    victims, vote = _fn(ssn, "preemptable")(preemptor, preemptees)
    # b: 5, 4, 3 cpu left -> .5, .4, .3 (equal to the preemptor's .3: a victim), then .2, .1 are not;
    # c: 2 left -> .2 < .3, never.
    assert vote == PERMIT and [v.name for v in victims] == ["b-r0", "b-r1", "b-r2"]


def test_preemptable_share_tolerance_is_one_millionth():
    ssn, plugin = _preempt_session()
    preemptor = _tasks(ssn, "default/a", "a-p")[0]
    plugin.job_attrs["default/a"].allocated.milli_cpu += 0.005  # preemptor share .3000005
    victims, _ = _fn(ssn, "preemptable")(preemptor, _tasks(ssn, "default/b", "b-r"))
    assert [v.name for v in victims] == ["b-r0", "b-r1", "b-r2"]  # .3 is within 1e-6 of .3000005
    plugin.job_attrs["default/a"].allocated.milli_cpu += 0.01  # now .3000015
    victims, _ = _fn(ssn, "preemptable")(preemptor, _tasks(ssn, "default/b", "b-r"))
    assert [v.name for v in victims] == ["b-r0", "b-r1"]


def test_preemptable_uses_the_asserting_sub():
    ssn, _ = _preempt_session()
    preemptor = _tasks(ssn, "default/a", "a-p")[0]
    with pytest.raises(AssertionViolation):  # b's pending task is not in b's allocated
        _fn(ssn, "preemptable")(preemptor, _tasks(ssn, "default/b"))


def test_preemptor_of_an_unknown_job_yields_no_victims():
    ssn, plugin = _preempt_session()
    del plugin.job_attrs["default/a"]
    assert _fn(ssn, "preemptable")(_tasks(ssn, "default/a", "a-p")[0], _tasks(ssn, "default/b")) == (None, PERMIT)


def test_event_handlers_update_the_share():
    ssn, plugin = _preempt_session()
    task = _tasks(ssn, "default/a", "a-p")[0]
    ssn.fire_allocate(task)
    assert plugin.job_attrs["default/a"].share == pytest.approx(0.3)
    for _ in range(3):
        ssn.fire_deallocate(task)
    assert plugin.job_attrs["default/a"].share == 0
    with pytest.raises(AssertionViolation):
        ssn.fire_deallocate(task)


def test_flat_mode_registers_no_queue_order_or_reclaimable():
    ssn, plugin = _preempt_session()
    assert not plugin.hierarchy_enabled
    assert "drf" not in ssn._fns["queue_order"] and "drf" not in ssn._fns["reclaimable"]


# -- hierarchical DRF -----------------------------------------------------------------------------


def _queue(name, hierarchy, weights):
    return Queue(name, name, annotations={HIERARCHY: hierarchy, WEIGHTS: weights})


def _tree_session(sci_weight="50", dev_running=2, prod_running=4, prod_pending=1):
    # 10 cpu, 10G memory, 50 pods. sci: 2 x (1 cpu, 1G) = .2; dev: cpu-only pods; prod: memory-only pods.
    queues = [_queue("root-sci", "root/sci", f"100/{sci_weight}"),
              _queue("root-eng-dev", "root/eng/dev", "100/50/50"),
              _queue("root-eng-prod", "root/eng/prod", "100/50/50")]
    jobs = [("pg1", "root-sci", 2, 2, "1", "1G"), ("pg21", "root-eng-dev", dev_running, 2, "1", "0"),
            ("pg22", "root-eng-prod", prod_running, prod_pending, "0", "1G")]
    return _open(_objects([node("n", cpu="10", memory="10G", pods="50")], jobs, queues), hierarchy=True)


def test_tree_scales_children_to_the_smallest_unsaturated_dominant_share():
    ssn, plugin = _tree_session()
    root = plugin.hierarchical_root
    eng = root.children["eng"]
    assert set(root.children) == {"sci", "eng"} and set(eng.children) == {"dev", "prod"}
    assert eng.weight == 50 and eng.children["dev"].children["default/pg21"].weight == 1
    # dev .2, prod .4 -> eng takes dev whole and half of prod: cpu 2, memory 2G, pods 2 + 2.
    assert (eng.attr.allocated.milli_cpu, eng.attr.allocated.memory, eng.attr.allocated.get("pods")) == (2000, 2e9, 4)
    assert eng.attr.share == pytest.approx(0.2) and root.children["sci"].attr.share == pytest.approx(0.2)
    order = _fn(ssn, "queue_order")
    sci, dev, prod = (ssn.queues[q] for q in ("root-sci", "root-eng-dev", "root-eng-prod"))
    assert order(sci, dev) == 0  # equal at the level where the paths split, and sci has no deeper level
    assert order(dev, prod) == -1 and order(prod, dev) == 1


def test_weights_divide_the_share_and_are_clamped_at_one():
    ssn, plugin = _tree_session(sci_weight="100")
    order = _fn(ssn, "queue_order")
    assert order(ssn.queues["root-sci"], ssn.queues["root-eng-dev"]) == -1  # .2/100 < .2/50
    ssn, plugin = _tree_session(sci_weight="0.5")
    assert plugin.hierarchical_root.children["sci"].weight == 1


def test_saturated_queue_goes_last():
    # prod has no pending task: its job is fully served (allocated >= request) so prod is saturated
    # and goes after dev even though its share is lower.
    ssn, plugin = _tree_session(dev_running=4, prod_running=2, prod_pending=0)
    prod = plugin.hierarchical_root.children["eng"].children["prod"]
    assert prod.saturated and not plugin.hierarchical_root.children["eng"].saturated
    assert _fn(ssn, "queue_order")(ssn.queues["root-eng-prod"], ssn.queues["root-eng-dev"]) == 1


def test_missing_weight_raises_like_upstreams_index_panic():
    queues = [Queue("q", "q", annotations={HIERARCHY: "root/a"})]
    objects = _objects([node("n")], [("j", "q", 0, 1, "1", "1Gi")], queues)
    with pytest.raises(IndexError):
        _open(objects, hierarchy=True)


def test_queue_without_hierarchy_annotation_hangs_under_root():
    objects = _objects([node("n")], [("j", "default", 0, 1, "1", "1Gi")])
    ssn, plugin = _open(objects, hierarchy=True)
    assert set(plugin.hierarchical_root.children) == {"default/j"}
    assert _fn(ssn, "queue_order")(ssn.queues["default"], ssn.queues["default"]) == 0


def _reclaim_session(sci_running, dev_pending):
    queues = [_queue("root-sci", "root/sci", "100/50"), _queue("root-eng-dev", "root/eng/dev", "100/50/50")]
    jobs = [("pg1", "root-sci", sci_running, 0, "1", "1G"), ("pg21", "root-eng-dev", 0, dev_pending, "1", "0")]
    return _open(_objects([node("n", cpu="10", memory="10G", pods="50")], jobs, queues), hierarchy=True)


def test_hierarchical_reclaimable_compares_queues_with_each_victim_removed():
    # sci runs 4 (share .4); dev's job asks for 3 cpu and holds none; with the reclaimer's cpu eng is
    # at .1. Removing any one sci task (each alone, then restored) leaves sci at .3 > .1: all four
    # are victims. prod has no job, so it has no node.
    ssn, plugin = _reclaim_session(sci_running=4, dev_pending=3)
    reclaimer = _tasks(ssn, "default/pg21")[0]
    victims, vote = _fn(ssn, "reclaimable")(reclaimer, _tasks(ssn, "default/pg1"))
    assert vote == PERMIT and len(victims) == 4
    assert plugin.hierarchical_root.children["sci"].attr.share == pytest.approx(0.4)  # the live tree is untouched


def test_hierarchical_reclaimable_spares_a_queue_that_would_drop_below_the_reclaimer():
    ssn, _ = _reclaim_session(sci_running=1, dev_pending=3)
    victims, _ = _fn(ssn, "reclaimable")(_tasks(ssn, "default/pg21")[0], _tasks(ssn, "default/pg1"))
    assert victims == []  # without its task sci is at 0 < eng's .1


def test_reclaimer_whose_request_is_met_by_the_reclaim_is_saturated_and_reclaims_nothing():
    # Quirk: with a single pending task the hypothetical allocation meets the job's whole request,
    # its leaf is saturated, so its queue sorts after sci and no victim is taken.
    ssn, _ = _reclaim_session(sci_running=4, dev_pending=1)
    victims, _ = _fn(ssn, "reclaimable")(_tasks(ssn, "default/pg21")[0], _tasks(ssn, "default/pg1"))
    assert victims == []


def test_allocation_events_rebuild_the_tree():
    ssn, plugin = _tree_session()
    task = _tasks(ssn, "default/pg21", "pg21-p")[0]
    ssn.fire_allocate(task)
    dev = plugin.hierarchical_root.children["eng"].children["dev"]
    assert dev.attr.share == pytest.approx(0.3) and plugin.total_allocated.milli_cpu == 5000
    ssn.fire_deallocate(task)
    assert dev.attr.share == pytest.approx(0.2) and plugin.total_allocated.milli_cpu == 4000
