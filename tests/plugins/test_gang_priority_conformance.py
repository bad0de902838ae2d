"""gang, priority and conformance callbacks (semantics §9.1, §9.2, §9.10)."""

from schedcheck.reference.api.types import EvictionContext, EvictionKind, TaskStatus
from schedcheck.reference.framework.session import PERMIT, REJECT
from schedcheck.reference.k8s import ClusterObjects, PriorityClass
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf, session


def _ssn():
    objects = ClusterObjects(
        nodes=[node("n1", cpu="16")],
        pods=[pod(f"hi-{i}", group="hi", node_name="n1", phase="Running") for i in range(3)]
        + [pod(f"lo-{i}", group="lo", node_name="n1", phase="Running", priority=5) for i in range(3)]
        + [pod("new-0", group="new", priority=10), pod("sys-0", group="sys", namespace="kube-system",
                                                          node_name="n1", phase="Running"),
           pod("crit-0", group="lo", node_name="n1", phase="Running", priority_class_name="system-node-critical")],
        pod_groups=[pod_group("hi", 2, phase="Running", priority_class_name="high"),
                    pod_group("lo", 2, phase="Running"), pod_group("new", 1, priority_class_name="high"),
                    pod_group("sys", 1, namespace="kube-system", phase="Running")],
        priority_classes=[PriorityClass("high", 100)],
    )
    return session(objects, conf(["priority", "gang", "conformance"]))


def _fn(ssn, point, plugin):
    return ssn._fns[point][plugin]


def _tasks(ssn, job):
    return sorted(ssn.jobs[job].tasks.values(), key=lambda t: t.name)


def test_gang_preemptable_keeps_each_job_at_min_available():
    ssn = _ssn()
    victims, vote = _fn(ssn, "preemptable", "gang")(_tasks(ssn, "default/new")[0],
                                                    _tasks(ssn, "default/hi") + _tasks(ssn, "default/lo"))
    # hi: 3 ready, min 2 -> one victim; lo: 4 ready (crit-0 too), min 2 -> two victims
    assert vote == PERMIT and [v.name for v in victims] == ["hi-0", "crit-0", "lo-0"]


def test_gang_job_order_ready_and_pipelined_vote():
    ssn = _ssn()
    hi, new = ssn.jobs["default/hi"], ssn.jobs["default/new"]
    assert _fn(ssn, "job_order", "gang")(new, hi) == -1 and _fn(ssn, "job_order", "gang")(hi, hi) == 0
    assert _fn(ssn, "job_ready", "gang")(hi) and not _fn(ssn, "job_ready", "gang")(new)
    assert _fn(ssn, "job_pipelined", "gang")(new) == REJECT
    task = _tasks(ssn, "default/new")[0]
    new.update_task_status(task, TaskStatus.Pipelined)
    assert _fn(ssn, "job_pipelined", "gang")(new) == PERMIT and not _fn(ssn, "job_starving", "gang")(new)


def test_gang_job_valid():
    ssn = _ssn()
    assert _fn(ssn, "job_valid", "gang")(ssn.jobs["default/hi"]) is None
    job = ssn.jobs["default/new"]
    job.min_available = 2
    assert _fn(ssn, "job_valid", "gang")(job).reason == "NotEnoughTasks"


def test_gang_close_writes_conditions():
    ssn = _ssn()
    ssn.plugins["gang"].on_session_close(ssn)
    new = ssn.jobs["default/new"].pod_group.conditions[-1]
    assert (new.type, new.status, new.transition_id) == ("Unschedulable", "True", ssn.uid)
    assert new.message.startswith("1/1 tasks in gang unschedulable")
    assert ssn.jobs["default/hi"].pod_group.conditions[-1].type == "Scheduled"


def test_priority_orders_and_preemptable():
    ssn = _ssn()
    hi, lo = ssn.jobs["default/hi"], ssn.jobs["default/lo"]
    assert hi.priority == 100 and lo.priority == 0
    assert _fn(ssn, "job_order", "priority")(hi, lo) == -1
    lo_tasks = _tasks(ssn, "default/lo")  # crit-0 (class not found: priority 0), lo-0..2 (priority 5)
    hi_task = _tasks(ssn, "default/hi")[0]  # no priority, no class: upstream's default 1
    assert (lo_tasks[0].priority, lo_tasks[1].priority, hi_task.priority) == (0, 5, 1)
    assert _fn(ssn, "task_order", "priority")(lo_tasks[1], hi_task) == -1  # higher priority first
    victims, _ = _fn(ssn, "preemptable", "priority")(_tasks(ssn, "default/new")[0], lo_tasks + _tasks(ssn, "default/hi"))
    assert {v.job for v in victims} == {"default/lo"}  # equal job priority (hi) is never a victim
    # within one job, only lower task priority
    victims, _ = _fn(ssn, "preemptable", "priority")(lo_tasks[1], lo_tasks)
    assert [v.name for v in victims] == ["crit-0"]  # 0 < 5; the other lo tasks are equal


def test_priority_starving_counts_all_tasks():
    ssn = _ssn()
    assert not _fn(ssn, "job_starving", "priority")(ssn.jobs["default/hi"])
    assert _fn(ssn, "job_starving", "priority")(ssn.jobs["default/new"])


def test_priority_unified_evictable():
    ssn = _ssn()
    candidates = _tasks(ssn, "default/lo") + _tasks(ssn, "default/hi")
    fn = _fn(ssn, "unified_evictable", "priority")
    victims, _ = fn(EvictionContext(EvictionKind.GangPreempt, job=ssn.jobs["default/new"]), candidates)
    assert {v.job for v in victims} == {"default/lo"}
    victims, _ = fn(EvictionContext(EvictionKind.GangReclaim, job=ssn.jobs["default/new"]), candidates)
    assert len(victims) == len(candidates)


def test_conformance_protects_critical_and_kube_system_pods():
    ssn = _ssn()
    candidates = _tasks(ssn, "default/lo") + _tasks(ssn, "kube-system/sys")
    victims, vote = _fn(ssn, "preemptable", "conformance")(_tasks(ssn, "default/new")[0], candidates)
    assert vote == PERMIT and sorted(v.name for v in victims) == ["lo-0", "lo-1", "lo-2"]
