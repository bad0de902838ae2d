"""preempt (semantics §8.4, upstream actions/preempt/preempt.go), on small clusters built in code."""

from __future__ import annotations

from schedcheck.reference.actions.preempt import (
    Preempt,
    between_jobs_filter,
    within_job_filter,
)
from schedcheck.reference.actions.preempt_topology import (
    Candidate,
    TopologySettings,
    calculate_num_candidates,
    clone_cycle_state,
    select_candidate,
    select_victims_on_node,
)
from schedcheck.reference.actions.victims import validate_victims
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import ClusterObjects, PodCondition, PriorityClass, Queue
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf, session

TIERS = (["priority", "gang", "conformance"], ["predicates", "nodeorder"])
ACTIONS = "enqueue, allocate, preempt"
CLASSES = [PriorityClass("high", 1000), PriorityClass("mid", 500), PriorityClass("low", 10)]


def running(name: str, group: str, node_name: str = "n1", cpu: str = "1", **extra):
    extra.setdefault("phase", "Running")
    return pod(name, group=group, cpu=cpu, node_name=node_name, **extra)


def running_group(name: str, min_member: int, priority_class: str = "low", queue: str = "default"):
    return pod_group(name, min_member, phase="Running", priority_class_name=priority_class, queue=queue)


def waiting_group(name: str, min_member: int, priority_class: str = "high", queue: str = "default"):
    return pod_group(name, min_member, phase="Inqueue", priority_class_name=priority_class, queue=queue)


def cluster(nodes, pods, groups, queues=()) -> ClusterObjects:
    return ClusterObjects(nodes=nodes, pods=pods, pod_groups=groups, queues=list(queues),
                          priority_classes=list(CLASSES))


def run(objects: ClusterObjects, tiers=TIERS, actions: str = ACTIONS, cycles: int = 1, arguments=None, **flags):
    scheduler_conf = conf(*tiers, actions=actions, **flags)
    if arguments:
        scheduler_conf.configurations["preempt"] = arguments
    scheduler = Scheduler(objects, scheduler_conf)
    report = None
    for index in range(cycles):
        if index:
            scheduler.advance()
        report = scheduler.run_once()
    return scheduler, report.session


def evicted(scheduler: Scheduler) -> list[str]:
    return sorted(record.task.split("/")[1] for record in scheduler.cache.log.evictions)


def status(ssn: Session, job: str, name: str) -> TaskStatus:
    return next(t.status for t in ssn.jobs[f"default/{job}"].tasks.values() if t.name == name)


def open_only(objects: ClusterObjects, tiers=TIERS) -> Session:
    return session(objects, conf(*tiers, actions=ACTIONS))


# -- phase A: between jobs of one queue ---------------------------------------------------


def test_higher_priority_job_evicts_one_lower_priority_task_and_is_pipelined():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low"), running("low-1", "low"), pod("high-0", group="high")],
                      [running_group("low", 1), waiting_group("high", 1)])
    scheduler, ssn = run(objects)
    assert evicted(scheduler) == ["low-0"]
    preemptor = next(iter(ssn.jobs["default/high"].tasks.values()))
    assert preemptor.status == TaskStatus.Pipelined and preemptor.node_name == "n1"
    assert preemptor.eviction_occurred
    # At close the pipelined preemptor is nominated to n1 in the cache.
    assert scheduler.cache.jobs["default/high"].tasks[preemptor.uid].pod.nominated_node_name == "n1"


def test_equal_priority_job_is_not_preempted():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low"), running("low-1", "low"), pod("peer-0", group="peer")],
                      [running_group("low", 1), waiting_group("peer", 1, priority_class="low")])
    scheduler, _ = run(objects)
    assert evicted(scheduler) == []


def test_victims_of_another_queue_are_not_preempted():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low"), running("low-1", "low"), pod("high-0", group="high")],
                      [running_group("low", 1, queue="other"), waiting_group("high", 1)],
                      queues=[Queue("other", "uid-other")])
    scheduler, _ = run(objects)
    assert evicted(scheduler) == []


def test_gang_protects_a_victim_job_at_min_member():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low"), running("low-1", "low"), pod("high-0", group="high")],
                      [running_group("low", 2), waiting_group("high", 1)])
    scheduler, ssn = run(objects)
    assert evicted(scheduler) == []
    assert status(ssn, "high", "high-0") == TaskStatus.Pending


def test_preemptable_false_pod_is_protected():
    # Victim order within the job is lowest task priority first: low-0 would go first.
    annotations = {"volcano.sh/preemptable": "false"}
    objects = cluster([node("n1", cpu="3")],
                      [running("low-0", "low", priority=1, annotations=annotations),
                       running("low-1", "low", priority=2), running("low-2", "low", priority=9),
                       pod("high-0", group="high")],
                      [running_group("low", 1), waiting_group("high", 1)])
    scheduler, _ = run(objects)
    assert evicted(scheduler) == ["low-1"]


def test_best_effort_preemptor_cannot_evict_a_non_best_effort_pod():
    objects = cluster([node("n1", cpu="4", pods="2")],
                      [running("low-0", "low"), running("low-1", "low"),
                       pod("be-0", group="be", cpu="", memory="")],
                      [running_group("low", 1), waiting_group("be", 1)])
    scheduler, _ = run(objects)
    assert evicted(scheduler) == []


def test_best_effort_preemptor_may_evict_a_best_effort_pod():
    objects = cluster([node("n1", cpu="4", pods="2")],
                      [running("low-0", "low", cpu="", memory=""), running("low-1", "low", cpu="", memory=""),
                       pod("be-0", group="be", cpu="", memory="")],
                      [running_group("low", 1), waiting_group("be", 1)])
    scheduler, ssn = run(objects)
    assert evicted(scheduler) == ["low-0"]
    preemptor = next(iter(ssn.jobs["default/be"].tasks.values()))
    assert preemptor.status == TaskStatus.Pipelined
    # Only `pods` was freed, which IsEmpty ignores: upstream reports no eviction for the preemptor.
    assert not preemptor.eviction_occurred


def test_bound_victims_qualify_releasing_ones_do_not():
    objects = cluster([node("n1", cpu="2")],
                      [pod("low-0", group="low", node_name="n1", phase="Pending"),  # Bound
                       running("low-1", "low", deletion_timestamp="2025-01-01T00:00:00Z"),  # Releasing
                       running("low-2", "low", node_name="n2"), pod("high-0", group="high", cpu="2")],
                      [running_group("low", 1), waiting_group("high", 1)])
    objects.nodes.append(node("n2", cpu="1"))
    scheduler, ssn = run(objects)
    # FutureIdle of n1 is 1 (low-1 releasing); evicting the Bound low-0 frees the other cpu.
    assert evicted(scheduler) == ["low-0"]
    assert status(ssn, "high", "high-0") == TaskStatus.Pipelined


def test_eviction_stops_as_soon_as_the_preemptor_fits():
    objects = cluster([node("n1", cpu="4")],
                      [running(f"low-{i}", "low") for i in range(4)] + [pod("high-0", group="high", cpu="2")],
                      [running_group("low", 0), waiting_group("high", 1)])
    scheduler, _ = run(objects)
    assert len(evicted(scheduler)) == 2


def test_victims_are_evicted_lowest_job_priority_first():
    objects = cluster([node("n1", cpu="2")],
                      [running("mid-0", "midjob"), running("low-0", "lowjob"), pod("high-0", group="high")],
                      [running_group("midjob", 0, priority_class="mid"), running_group("lowjob", 0),
                       waiting_group("high", 1)])
    scheduler, _ = run(objects)
    assert evicted(scheduler) == ["low-0"]


def test_job_not_pipelined_discards_its_evictions():
    # high needs 2 tasks of 2 cpu; only n1's victims can make room for one of them.
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low", cpu="2"), running("low-1", "low", cpu="1", node_name="n2"),
                       pod("high-0", group="high", cpu="2"), pod("high-1", group="high", cpu="2")],
                      [running_group("low", 0), waiting_group("high", 2)])
    objects.nodes.append(node("n2", cpu="1"))
    scheduler, ssn = run(objects)
    assert evicted(scheduler) == []
    assert [op.op for op in ssn.operations if op.action == "preempt"] == ["evict", "pipeline", "unpipeline", "unevict"]
    assert status(ssn, "low", "low-0") == TaskStatus.Running


def test_victim_releasing_then_preemptor_bound_over_three_cycles():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low", cpu="2"), pod("high-0", group="high", cpu="2")],
                      [running_group("low", 0), waiting_group("high", 1)])
    scheduler, ssn = run(objects, cycles=2)
    assert status(ssn, "low", "low-0") == TaskStatus.Releasing
    assert status(ssn, "high", "high-0") == TaskStatus.Pipelined  # allocate re-pipelines on FutureIdle
    scheduler.advance()
    ssn = scheduler.run_once().session
    assert [b.task for b in scheduler.cache.log.binds] == ["default/high-0"]
    assert evicted(scheduler) == ["low-0"]


def test_preemption_policy_never_does_not_preempt():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low", cpu="2"), pod("high-0", group="high", cpu="2", preemption_policy="Never")],
                      [running_group("low", 0), waiting_group("high", 1)])
    scheduler, _ = run(objects)
    assert evicted(scheduler) == []


def test_queue_not_allocatable_blocks_preemption():
    objects = cluster([node("n1", cpu="2")],
                      [running("low-0", "low", cpu="2"), pod("high-0", group="high", cpu="2")],
                      [running_group("low", 0), waiting_group("high", 1)])
    ssn = open_only(objects)
    ssn.add_fn("allocatable", "gang", lambda queue, task: False)
    Preempt().execute(ssn)
    assert not ssn.cache.log.evictions
    assert [op.op for op in ssn.operations] == ["evict", "unevict"]  # evicted all, never fit


# -- phase B: within a job ----------------------------------------------------------------

PHASE_B_FLAGS = {"gang": {"enablePreemptable": False}}


def test_phase_b_high_priority_task_evicts_a_lower_priority_task_of_its_own_job():
    objects = cluster([node("n1", cpu="2")],
                      [running("job-0", "job", priority=1), running("job-1", "job", priority=1),
                       pod("job-2", group="job", priority=100)],
                      [running_group("job", 3)])
    scheduler, ssn = run(objects, **PHASE_B_FLAGS)
    assert len(evicted(scheduler)) == 1
    assert status(ssn, "job", "job-2") == TaskStatus.Pipelined


def test_phase_b_stops_at_the_first_failure():
    # job-2 (priority 100) cannot fit anywhere even after evictions; job-3 (priority 50) could,
    # but phase B stops at the first failure, and phase A has no other job to take from.
    pods = [running("job-0", "job", priority=1), running("job-1", "job", priority=1),
            pod("job-2", group="job", priority=100, cpu="8"), pod("job-3", group="job", priority=50)]
    scheduler, _ = run(cluster([node("n1", cpu="2")], pods, [running_group("job", 4)]), **PHASE_B_FLAGS)
    assert evicted(scheduler) == []
    scheduler, _ = run(cluster([node("n1", cpu="2")], pods[:2] + pods[3:], [running_group("job", 3)]),
                       **PHASE_B_FLAGS)
    assert len(evicted(scheduler)) == 1


def test_phase_b_commits_without_the_pipelined_check():
    # minMember 4 can never be pipelined, yet phase B commits each successful task.
    objects = cluster([node("n1", cpu="2")],
                      [running("job-0", "job", priority=1), running("job-1", "job", priority=1),
                       pod("job-2", group="job", priority=100), pod("job-3", group="job", priority=100, cpu="8")],
                      [running_group("job", 4)])
    scheduler, ssn = run(objects, **PHASE_B_FLAGS)
    assert len(evicted(scheduler)) == 1
    assert status(ssn, "job", "job-2") == TaskStatus.Pipelined


def test_filters_split_phase_a_and_phase_b():
    objects = cluster([node("n1", cpu="4")],
                      [running("own-0", "own"), running("other-0", "other"), running("far-0", "far"),
                       pod("own-1", group="own")],
                      [running_group("own", 2), running_group("other", 1), running_group("far", 1, queue="q2")],
                      queues=[Queue("q2", "uid-q2")])
    ssn = open_only(objects)
    preemptor = next(t for t in ssn.jobs["default/own"].tasks.values() if t.name == "own-1")
    tasks = {t.name: t for t in ssn.nodes["n1"].tasks.values()}
    phase_a = between_jobs_filter(ssn, ssn.jobs["default/own"], preemptor)
    phase_b = within_job_filter(preemptor)
    assert [n for n, t in tasks.items() if phase_a(t)] == ["other-0"]
    assert [n for n, t in tasks.items() if phase_b(t)] == ["own-0"]


# -- eligibility --------------------------------------------------------------------------


def _eligibility_session(nominated: str, victim_conditions=None, deleting=False, preemptor_extra=None,
                        pre_predicate=True):
    """taskEligibleToPreempt asks PredicateFn without a PrePredicate of its own; in a session allocate has
    asked one for the pending task first (`pre_predicate`), which InterPodAffinity's filter reads."""
    victim_extra = {"conditions": victim_conditions or []}
    if deleting:
        victim_extra["deletion_timestamp"] = "2025-01-01T00:00:00Z"
    objects = cluster([node("n1", cpu="2", pods="1"), node("n2", cpu="2", labels={"zone": "b"})],
                      [running("low-0", "low", priority=1, **victim_extra),
                       pod("high-0", group="high", priority=100, nominated_node_name=nominated,
                           **(preemptor_extra or {}))],
                      [running_group("low", 0), waiting_group("high", 1)])
    ssn = open_only(objects)
    action = Preempt()
    action.ssn = ssn
    task = next(iter(ssn.jobs["default/high"].tasks.values()))
    if pre_predicate:
        assert ssn.pre_predicate_fn(task) is None
    return action, task


def test_eligibility_without_an_earlier_pre_predicate_the_filter_errs_so_the_task_is_eligible():
    action, task = _eligibility_session("n2", pre_predicate=False)
    assert action.task_eligible_to_preempt(task)  # an Error status, not UnschedulableAndUnresolvable


PREEMPTED = [PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")]


def test_eligibility_without_nomination():
    action, task = _eligibility_session("")
    assert action.task_eligible_to_preempt(task)


def test_eligibility_nominated_node_missing_from_session():
    action, task = _eligibility_session("gone")
    assert not action.task_eligible_to_preempt(task)


def test_eligibility_nominated_node_already_schedulable():
    action, task = _eligibility_session("n2")
    assert not action.task_eligible_to_preempt(task)


def test_eligibility_lower_priority_pod_terminating_by_preemption_blocks():
    # n1 admits one pod: the predicate fails with plain Unschedulable (pod number exceeded).
    action, task = _eligibility_session("n1", PREEMPTED, deleting=True)
    assert not action.task_eligible_to_preempt(task)


def test_eligibility_terminating_pod_without_the_preemption_condition_does_not_block():
    action, task = _eligibility_session("n1", [PodCondition("DisruptionTarget", "True", "EvictionByEvictionAPI")],
                                        deleting=True)
    assert action.task_eligible_to_preempt(task)


def test_eligibility_condition_without_deletion_does_not_block():
    action, task = _eligibility_session("n1", PREEMPTED, deleting=False)
    assert action.task_eligible_to_preempt(task)


def test_eligibility_unresolvable_nominated_node_is_eligible_again():
    # A node selector n1 cannot satisfy: UnschedulableAndUnresolvable, so the terminating pod is moot.
    action, task = _eligibility_session("n1", PREEMPTED, deleting=True,
                                        preemptor_extra={"node_selector": {"zone": "a"}})
    assert action.task_eligible_to_preempt(task)


def test_preemption_policy_never_is_ineligible():
    action, task = _eligibility_session("", preemptor_extra={"preemption_policy": "Never"})
    assert not action.task_eligible_to_preempt(task)


# -- ValidateVictims ----------------------------------------------------------------------


def test_validate_victims_accepts_an_empty_list_when_future_idle_suffices():
    objects = cluster([node("n1", cpu="2")], [running("low-0", "low"), pod("high-0", group="high")],
                      [running_group("low", 0), waiting_group("high", 1)])
    ssn = open_only(objects)
    task = next(iter(ssn.jobs["default/high"].tasks.values()))
    assert validate_victims(task, ssn.nodes["n1"], None)
    task.init_resreq = task.init_resreq.clone().add(task.init_resreq)  # 2 cpu
    assert not validate_victims(task, ssn.nodes["n1"], [])
    assert validate_victims(task, ssn.nodes["n1"], list(ssn.nodes["n1"].tasks.values()))


# -- topology-aware preemption ------------------------------------------------------------

TOPOLOGY = {"enableTopologyAwarePreemption": True, "minCandidateNodesPercentage": 100}


def test_calculate_num_candidates_clamps():
    settings = TopologySettings()
    assert calculate_num_candidates(5, settings) == 1  # 10% of 5 is 0 -> minimum 1
    assert calculate_num_candidates(50, settings) == 5
    assert calculate_num_candidates(5000, settings) == 100
    assert calculate_num_candidates(3, TopologySettings(min_candidate_nodes_absolute=10)) == 3


def _reprieve_cluster():
    # n1 (4 cpu) runs small (1 cpu, priority 1) and big (3 cpu, priority 2) of job batch; the
    # preemptor needs 3 cpu. Removal order: small, then big (fits). Reprieve from the highest
    # priority down: big back -> no fit, stays a victim; small back -> 3 free -> reprieved.
    return cluster([node("n1", cpu="4"), node("n2", cpu="1")],
                   [running("small", "batch", priority=1), running("big", "batch", cpu="3", priority=2),
                    running("rest", "batch", node_name="n2", priority=3), pod("high-0", group="high", cpu="3")],
                   [running_group("batch", 1), waiting_group("high", 1)])


def test_select_victims_on_node_reprieves_an_unneeded_victim():
    ssn = open_only(_reprieve_cluster())
    job = ssn.jobs["default/high"]
    task = next(iter(job.tasks.values()))
    ssn.pre_predicate_fn(task)
    node_copy = ssn.nodes["n1"].clone()
    state = clone_cycle_state(ssn.get_cycle_state(task.uid))
    victims = select_victims_on_node(ssn, state, task, ssn.queues["default"], node_copy,
                                     between_jobs_filter(ssn, job, task))
    assert [v.name for v in victims] == ["big"]
    assert ssn.nodes["n1"].idle.milli_cpu == 0  # the session's node is untouched


def test_topology_aware_preemption_evicts_only_the_unreprieved_victim():
    scheduler, ssn = run(_reprieve_cluster(), arguments=TOPOLOGY)
    assert evicted(scheduler) == ["big"]
    task = next(iter(ssn.jobs["default/high"].tasks.values()))
    assert task.status == TaskStatus.Pipelined and task.node_name == "n1" and task.eviction_occurred


def test_normal_preemption_evicts_both_for_the_same_cluster():
    scheduler, _ = run(_reprieve_cluster())
    assert evicted(scheduler) == ["big", "small"]


def _candidate(name: str, *priorities: int) -> Candidate:
    return Candidate(name, [TaskInfo(pod(f"{name}-{i}", priority=p)) for i, p in enumerate(priorities)])


def test_select_candidate_orders_by_highest_priority_then_sum_then_count():
    assert select_candidate([], 0.0) is None
    assert select_candidate([_candidate("a", 5)], 0.0).name == "a"
    assert select_candidate([_candidate("a", 5), _candidate("b", 3, 3)], 0.0).name == "b"  # lower highest
    assert select_candidate([_candidate("a", 3, 3), _candidate("b", 3, 1)], 0.0).name == "b"  # lower sum
    # -2^31 offsets make the sum a count-sensitive key: fewer victims of equal priority win here
    assert select_candidate([_candidate("a", 3, 0), _candidate("b", 3)], 0.0).name == "b"
    assert select_candidate([_candidate("a", 3), _candidate("b", 3)], 0.0).name == "a"  # first on a full tie


def test_topology_aware_candidate_choice_prefers_the_lowest_priority_victims():
    # n1 holds a mid-priority job's task, n2 a low-priority job's task; both free enough room.
    objects = cluster([node("n1", cpu="2"), node("n2", cpu="2")],
                      [running("mid-0", "midjob", cpu="2", priority=500),
                       running("low-0", "lowjob", cpu="2", priority=10, node_name="n2"),
                       pod("high-0", group="high", cpu="2")],
                      [running_group("midjob", 0, priority_class="mid"), running_group("lowjob", 0),
                       waiting_group("high", 1)])
    for seed in range(4):  # whatever the random offset, both nodes are dry-run and n2 wins
        scheduler = Scheduler(objects, _topology_conf(), seed=seed)
        ssn = scheduler.run_once().session
        assert evicted(scheduler) == ["low-0"]
        assert status(ssn, "high", "high-0") == TaskStatus.Pipelined


def _topology_conf():
    scheduler_conf = conf(*TIERS, actions=ACTIONS)
    scheduler_conf.configurations["preempt"] = dict(TOPOLOGY)
    return scheduler_conf


def test_arguments_use_upstream_names_and_defaults():
    ssn = open_only(cluster([node("n1")], [], []))
    action = Preempt()
    action.ssn = ssn
    action._parse_arguments()
    assert action.enable_predicate_error_cache and not action.enable_topology_aware_preemption
    assert action.topology == TopologySettings(16, 10, 1, 100)
    ssn.conf.configurations["preempt"] = {"enableTopologyAwarePreemption": "true", "minCandidateNodesPercentage": 50,
                                          "minCandidateNodesAbsolute": 2, "maxCandidateNodesAbsolute": 7,
                                          "predicateErrorCacheEnable": False}
    action._parse_arguments()
    assert action.enable_topology_aware_preemption and not action.enable_predicate_error_cache
    assert action.topology == TopologySettings(16, 50, 2, 7)


def test_pre_predicate_failure_prevents_preemption():
    objects = cluster([node("n1", cpu="2")], [running("low-0", "low", cpu="2"), pod("high-0", group="high", cpu="2")],
                      [running_group("low", 0), waiting_group("high", 1)])
    ssn = open_only(objects)
    ssn.add_fn("pre_predicate", "gang", lambda task: Exception("volume not bound"))
    Preempt().execute(ssn)
    assert not ssn.operations


def test_a_dry_run_that_needs_no_eviction_is_not_a_candidate():
    # n1 has 2 idle cpu: removing the first victim already fits, and the reprieve puts it back.
    objects = cluster([node("n1", cpu="4")], [running("low-0", "low", cpu="2"), pod("high-0", group="high", cpu="2")],
                      [running_group("low", 0), waiting_group("high", 1)])
    ssn = open_only(objects)
    job = ssn.jobs["default/high"]
    task = next(iter(job.tasks.values()))
    ssn.pre_predicate_fn(task)  # the preemptor's cycle state, which the dry run's simulate functions read
    state = clone_cycle_state(ssn.get_cycle_state(task.uid))
    victims = select_victims_on_node(ssn, state, task, ssn.queues["default"], ssn.nodes["n1"].clone(),
                                     between_jobs_filter(ssn, job, task))
    assert victims == []


def test_a_dry_run_without_the_preemptors_cycle_state_finds_no_candidate():
    """Upstream's InterPodAffinity RemovePod fails when PreFilter never wrote its state: the node is no
    candidate (the predicates plugin's SimulateRemoveTask passes that error on)."""
    ssn = open_only(_reprieve_cluster())
    job = ssn.jobs["default/high"]
    task = next(iter(job.tasks.values()))
    assert select_victims_on_node(ssn, {}, task, ssn.queues["default"], ssn.nodes["n1"].clone(),
                                  between_jobs_filter(ssn, job, task)) is None
