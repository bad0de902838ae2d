"""TaskInfo construction and JobInfo counters (semantics §2, §4)."""

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.task_info import TaskInfo, get_task_status
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.k8s import Container
from tests.builders import pod, pod_group, rl


def test_task_status_from_pod_phase():
    assert get_task_status(pod("p", phase="Pending")) == TaskStatus.Pending
    assert get_task_status(pod("p", phase="Pending", node_name="n")) == TaskStatus.Bound
    assert get_task_status(pod("p", phase="Running")) == TaskStatus.Running
    assert get_task_status(pod("p", phase="Running", deletion_timestamp="x")) == TaskStatus.Releasing
    assert get_task_status(pod("p", phase="Pending", deletion_timestamp="x")) == TaskStatus.Releasing
    assert get_task_status(pod("p", phase="Succeeded", deletion_timestamp="x")) == TaskStatus.Succeeded
    assert get_task_status(pod("p", phase="Failed")) == TaskStatus.Failed
    assert get_task_status(pod("p", phase="Weird")) == TaskStatus.Unknown


def test_task_defaults_and_annotations():
    t = TaskInfo(pod("p"))
    assert t.priority == 1 and t.preemptable and not t.best_effort and t.job == "default/pg"
    assert t.resreq is t.init_resreq  # one object, as upstream
    t = TaskInfo(pod("p", priority=5, annotations={"volcano.sh/task-priority": "9",
                                                    "volcano.sh/preemptable": "maybe"}))
    assert t.priority == 9 and not t.preemptable
    assert TaskInfo(pod("p", cpu="", memory="")).best_effort


def test_task_clone_separates_requests_and_drops_eviction_flag():
    t = TaskInfo(pod("p"))
    t.eviction_occurred = True
    c = t.clone()
    assert c.resreq is not c.init_resreq and c.pod is t.pod and not c.eviction_occurred


def test_sidecar_init_container_adds_to_regular():
    p = pod("p", cpu="1", memory="1Gi")
    p.init_containers = [Container("side", rl(cpu="2", memory="1Gi"), restart_policy="Always"),
                         Container("init", rl(cpu="1", memory="4Gi"))]
    r = TaskInfo(p).resreq
    # regular = 1+2 = 3 cpu, 2Gi; init candidate = init + sidecars = 3 cpu, 5Gi
    assert r.milli_cpu == 3000 and r.memory == 5 * 1024**3


def _job(min_member: int, statuses: list[TaskStatus], **pg) -> JobInfo:
    job = JobInfo("default/pg")
    job.set_pod_group(pod_group("pg", min_member, **pg))
    for i, status in enumerate(statuses):
        t = TaskInfo(pod(f"p-{i}"))
        t.status = status
        job.add_task_info(t)
    return job


def test_ready_waiting_valid_counts():
    job = _job(3, [TaskStatus.Running, TaskStatus.Allocated, TaskStatus.Pipelined, TaskStatus.Pending,
                   TaskStatus.Releasing, TaskStatus.Succeeded])
    assert job.ready_task_num() == 3  # Running, Allocated, Succeeded
    assert job.waiting_task_num() == 1
    assert job.valid_task_num() == 5  # everything but Releasing
    assert job.is_ready() and job.is_pipelined() and not job.is_starving()


def test_starving_and_pipelined():
    job = _job(3, [TaskStatus.Running, TaskStatus.Pipelined, TaskStatus.Pending])
    assert not job.is_ready() and not job.is_pipelined() and job.is_starving()
    job = _job(2, [TaskStatus.Running, TaskStatus.Pipelined, TaskStatus.Pending])
    assert not job.is_ready() and job.is_pipelined() and not job.is_starving()


def test_allocated_and_total_request_follow_status_changes():
    job = _job(1, [TaskStatus.Pending, TaskStatus.Pending])
    task = next(iter(job.tasks.values()))
    assert job.allocated.milli_cpu == 0 and job.total_request.milli_cpu == 2000
    job.update_task_status(task, TaskStatus.Allocated)
    assert job.allocated.milli_cpu == 1000
    assert set(job.task_status_index) == {TaskStatus.Pending, TaskStatus.Allocated}
    job.update_task_status(task, TaskStatus.Pipelined)
    assert job.allocated.milli_cpu == 0 and job.total_request.milli_cpu == 2000


def test_per_role_minimums():
    job = JobInfo("default/pg")
    job.set_pod_group(pod_group("pg", 3, min_task_member={"ps": 1, "worker": 2}))
    for name, role, status in [("ps-0", "ps", TaskStatus.Allocated), ("w-0", "worker", TaskStatus.Allocated),
                               ("w-1", "worker", TaskStatus.Pipelined)]:
        t = TaskInfo(pod(name, annotations={"volcano.sh/task-spec": role}))
        t.status = status
        job.add_task_info(t)
    assert job.check_task_valid() and job.check_task_pipelined() and not job.check_task_ready()


def test_need_continue_allocating():
    job = _job(2, [TaskStatus.Pending, TaskStatus.Pending])
    assert not job.need_continue_allocating()  # minAvailable == number of tasks
    job = _job(1, [TaskStatus.Pending, TaskStatus.Pending])
    assert job.need_continue_allocating()


def test_pending_phase_and_elastic_resources():
    job = _job(1, [TaskStatus.Running, TaskStatus.Running], min_resources=rl(cpu="1"))
    assert job.is_pending()
    assert job.get_elastic_resources().milli_cpu == 1000
    job.pod_group.phase = "Inqueue"
    assert not job.is_pending()


def test_a_replayed_copy_leaves_the_subjob_index_stale_as_upstream():
    """DeleteTaskInfo drops the job's entry of the stored task but the subjob's entry of the object passed in:
    a saved copy replayed with another status than the job's record leaves the record in its old bucket."""
    job = _job(1, [TaskStatus.Pending])
    stored = next(iter(job.tasks.values()))
    copy = stored.clone()
    copy.status = TaskStatus.Allocated  # as SaveOperations clones a task after its allocation
    job.update_task_status(copy, TaskStatus.Allocated)
    assert job.tasks_with_status(TaskStatus.Pending) == []
    sub = job.sub_job
    assert sub.tasks_with_status(TaskStatus.Pending) == [stored]
    assert sub.tasks_with_status(TaskStatus.Allocated) == [copy] and sub.ready_task_num() == 1
    assert job.clone().sub_job.tasks_with_status(TaskStatus.Pending) == []  # a fresh clone starts clean


def test_the_same_object_moves_between_subjob_buckets():
    job = _job(1, [TaskStatus.Pending])
    task = next(iter(job.tasks.values()))
    job.update_task_status(task, TaskStatus.Pipelined)
    assert job.sub_job.waiting_task_num() == 1 and job.sub_job.tasks_with_status(TaskStatus.Pending) == []


def test_subjob_ids_over_128_bytes_are_hashed_as_upstream():
    """Values printed by master's getSubJobID (api/sub_job_info.go) for the same inputs."""
    from schedcheck.reference.api.sub_job_info import sub_job_id

    assert sub_job_id("ns/job", "workers", ["abcdefghij" * 13]) == "ns/job/workers-55fd755f8b"
    assert sub_job_id("ns/job", "workers", ["x" * 64, "y" * 64]) == "ns/job/workers-79c576d68d"
    assert sub_job_id("ns/job", "workers", ["z" * 128]) == "ns/job/workers-" + "z" * 128  # 128 bytes: kept
    assert sub_job_id("ns/job", "workers", ["a", "b"]) == "ns/job/workers-a-b"
