"""A task's subgroup is matched on every add (upstream AddTaskInfo), a subgroup's priority follows upstream's
addTask / deleteTask, and a job's clone keeps only the subgroups its tasks are in."""

import copy

from schedcheck.reference.api.job_info import JobInfo
from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.k8s import SubGroupPolicy
from tests.builders import pod, pod_group


def _job() -> tuple[JobInfo, TaskInfo]:
    job = JobInfo("default/pg")
    job.set_pod_group(pod_group("pg", 0, sub_group_policy=[SubGroupPolicy("part", 1, match_label_keys=["part"])]))
    task = TaskInfo(pod("p0", labels={"part": "0"}))
    job.add_task_info(task)
    return job, task


def _members(job: JobInfo) -> dict[str, list[str]]:
    return {uid.rsplit("/", 1)[-1]: sorted(sub.task_uids) for uid, sub in job.sub_jobs.items()}


def _relabel_to_part_2(job: JobInfo, task) -> None:
    """Hand the job a Releasing copy of `task` whose pod's labels name subgroup part-2."""
    moved = task.clone()
    moved.pod = copy.deepcopy(task.pod)
    moved.pod.labels = {"part": "2"}
    job.update_task_status(moved, TaskStatus.Releasing)


def test_a_relabelled_copy_moves_to_the_subgroup_its_labels_name() -> None:
    job, task = _job()
    _relabel_to_part_2(job, task)
    assert _members(job) == {"part-0": [], "part-2": [task.uid]}


def test_an_unchanged_task_keeps_its_subgroup() -> None:
    job, task = _job()
    job.update_task_status(task, TaskStatus.Running)
    assert _members(job) == {"part-0": [task.uid]}


def test_a_clone_holds_only_occupied_subgroups() -> None:
    job, task = _job()
    _relabel_to_part_2(job, task)
    assert _members(job.clone()) == {"part-2": [task.uid]}


def test_a_subgroup_priority_does_not_drop_when_its_top_task_leaves() -> None:
    job, task = _job()
    high = TaskInfo(pod("p1", labels={"part": "0"}))
    high.priority = 50
    job.add_task_info(high)
    [sub] = job.sub_jobs.values()
    assert sub.priority == 50
    job.delete_task_info(high)
    assert sub.priority == 50 and set(sub.task_priorities) == {task.priority}
