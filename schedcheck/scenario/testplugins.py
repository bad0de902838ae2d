"""Upstream's test-only plugins, rewritten for the reference so converted unit-test cases can run.

Some of upstream's scheduler unit tests open their session with a plugin that exists only in the test:
a fixture registered next to the real plugins for one case. `schedcheck upstream-tests` recognises three
of them and writes each into the scenario's tiers under the name below, with what the fixture had built in
(a job name, task names, a priority) as plugin arguments:

- `test-rejecter` (upstream uthelper.RejecterPlugin, used by TestJobEnqueuedOnOtherPluginsReject in the
  capacity, proportion and resourcequota tests): its JobEnqueueable vote rejects the job whose PodGroup is
  named `rejectJob` (any namespace) and permits every other job, PodGroup-less jobs included.
- `device-fit-after-eviction` (preempt_test.go's fixture of the same name, TestNormalPreemptRechecksPredicate
  AfterEviction): a predicate that refuses the task named `task` (Unschedulable, so preempt may still evict
  for it) on a node holding a task named `blocker` that is not Releasing; every other task passes.
- `test-victims-by-priority` (shuffle_test.go's gomock plugin "fake", whose victim function TestShuffle
  adds to the session after it opens): VictimTasks picks the candidates whose priority is `priority`.

They are the tests' fixtures, not scheduler plugins: they are registered with the reference's plugin
registry from here (the conf loader imports this module, so whatever reads a scenario, run, replay,
differential or upstream-tests, can build them) and are not among KNOWN_PLUGINS, upstream's plugin list.
The Go adapter registers equivalents (adapters/volcano/testplugins.go). Matching is by task and PodGroup
name, as upstream's fixtures match: a name, not a namespace/name key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import FitError, Status, StatusCode
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, REJECT, Session
from schedcheck.scenario.errors import describe

DEVICE_FIT_REASON = "the blocking task still holds the device"


@dataclass(frozen=True)
class Argument:
    """One argument a test plugin needs: its key, the kind of value (str or int) and what it means."""

    key: str
    kind: type
    meaning: str


class RejecterPlugin(Plugin):
    name = "test-rejecter"
    ARGUMENTS = (Argument("rejectJob", str, "the PodGroup name whose job is rejected at enqueue"),)

    def on_session_open(self, ssn: Session) -> None:
        reject = self.arguments["rejectJob"]

        def enqueueable(job: Any) -> int:
            return REJECT if job.pod_group is not None and job.pod_group.name == reject else PERMIT

        ssn.add_fn("job_enqueueable", self.name, enqueueable)


class DeviceFitAfterEvictionPlugin(Plugin):
    name = "device-fit-after-eviction"
    ARGUMENTS = (Argument("task", str, "the name of the task the predicate refuses"),
                 Argument("blocker", str, "the name of the task whose presence (not Releasing) refuses it"))

    def on_session_open(self, ssn: Session) -> None:
        refused, blocker = self.arguments["task"], self.arguments["blocker"]

        def predicate(task: TaskInfo, node: Any) -> FitError | None:
            if task.name != refused:
                return None
            for other in node.tasks.values():
                if other.name == blocker and other.status != TaskStatus.Releasing:
                    return FitError(task.key, node.name, [Status(StatusCode.Unschedulable, DEVICE_FIT_REASON)])
            return None

        ssn.add_fn("predicate", self.name, predicate)


class VictimsByPriorityPlugin(Plugin):
    name = "test-victims-by-priority"
    ARGUMENTS = (Argument("priority", int, "the priority of the candidates VictimTasks picks"),)

    def on_session_open(self, ssn: Session) -> None:
        priority = self.arguments["priority"]

        def victims(candidates: list[TaskInfo]) -> list[TaskInfo]:
            return [t for t in candidates if t.priority == priority]

        ssn.add_fn("victim_tasks", self.name, victims)


TEST_PLUGINS: dict[str, type[Plugin]] = {
    p.name: p for p in (RejecterPlugin, DeviceFitAfterEvictionPlugin, VictimsByPriorityPlugin)
}


def check_arguments(name: str, arguments: Mapping[str, Any],
                    fail: Callable[[str, str], Any], warn: Callable[[str, str], Any]) -> None:
    """Check a test plugin's arguments: a missing or mistyped one is `fail(key, reason)`, a key the plugin
    does not read is `warn(key, reason)`."""
    wanted = TEST_PLUGINS[name].ARGUMENTS  # type: ignore[attr-defined]
    for argument in wanted:
        value = arguments.get(argument.key)
        if value is None:
            fail(argument.key, f"missing: {name} needs {argument.meaning}")
        if argument.kind is int and (not isinstance(value, int) or isinstance(value, bool)):
            fail(argument.key, f"{name} expects an integer, got {describe(value)}")
        if argument.kind is str and (not isinstance(value, str) or not value):
            fail(argument.key, f"{name} expects a non-empty string, got {describe(value)}")
    known = {a.key for a in wanted}
    for key in arguments:
        if key not in known:
            warn(str(key), f"ignored: {name} reads only {', '.join(sorted(known))}")


for _plugin in TEST_PLUGINS.values():
    register_plugin_builder(_plugin.name, _plugin)
