"""pdb: PodDisruptionBudgets in victim choice (pkg/scheduler/plugins/pdb/pdb.go).

One filter serves as VictimTasksFn, PreemptableFn and ReclaimableFn (both with Permit): the budgets'
status.disruptionsAllowed are copied afresh for every call, and the candidate tasks are walked in the
order given. A pod without labels matches no budget. For each budget of the pod's namespace whose
selector (non-empty) matches the pod's labels, and which does not already list the pod among its
status.disruptedPods, the copied allowance is decremented; a pod that takes any allowance below 0 is
left out. Every candidate passed counts against the allowance, whether or not it is then evicted, and
nothing carries over from one call to the next: two preemptors in one session may each take the whole
budget (docs/findings.md #15).
"""

from __future__ import annotations

from schedcheck.reference.api.task_info import TaskInfo
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import PERMIT, Session
from schedcheck.reference.k8s import LabelSelector, PodDisruptionBudget
from schedcheck.reference.plugins.interpod_affinity import selector_matches

PLUGIN_NAME = "pdb"


def _selects(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """A nil or empty selector matches nothing here (Selector.Empty())."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return False
    return selector_matches(selector, labels)


def filter_victims(budgets: list[PodDisruptionBudget], tasks: list[TaskInfo]) -> list[TaskInfo]:
    allowed = [b.disruptions_allowed for b in budgets]
    victims = []
    for task in tasks:
        pod = task.pod
        if not pod.labels:
            continue  # upstream: a pod without labels is neither checked nor kept as a victim
        violated = False
        for i, budget in enumerate(budgets):
            if budget.namespace != pod.namespace or not _selects(budget.selector, pod.labels):
                continue
            if pod.name in budget.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                violated = True
        if not violated:
            victims.append(task)
    return victims


class PdbPlugin(Plugin):
    name = PLUGIN_NAME

    def on_session_open(self, ssn: Session) -> None:
        budgets = list(ssn.cache.world.pod_disruption_budgets)

        def victims(tasks: list[TaskInfo]) -> list[TaskInfo]:
            return filter_victims(budgets, tasks)

        def evictable(_evictor: TaskInfo, evictees: list[TaskInfo]):
            return filter_victims(budgets, evictees), PERMIT

        ssn.add_fn("victim_tasks", self.name, victims)
        ssn.add_fn("reclaimable", self.name, evictable)
        ssn.add_fn("preemptable", self.name, evictable)


register_plugin_builder(PLUGIN_NAME, PdbPlugin)
