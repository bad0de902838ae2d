"""gang's Unschedulable condition message, in the shape of upstream's JobInfo.FitError (api/job_info.go): the
PodGroupNotReady detail, the task-status histogram, the pending tasks' scheduling reasons, the origin reason."""

from __future__ import annotations

from pathlib import Path

from schedcheck.reference.scheduler import Scheduler
from schedcheck.scenario.loader import load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def _messages(name: str) -> dict[str, str]:
    scenario = load_scenario(SCENARIOS / name)
    scheduler = Scheduler(scenario.objects, scenario.conf, seed=0, now=scenario.now)
    scheduler.run_once()
    return {pg.name: c.message for pg in scheduler.cache.world.pod_groups for c in pg.conditions
            if c.type == "Unschedulable"}


def test_the_unschedulable_message_is_upstreams_fit_error():
    messages = _messages("gang-pipelined-phantom.yaml")
    assert messages["spark"] == ("1/2 tasks in gang unschedulable: pod group is not ready, 1 Allocated, "
                                 "1 Pipelined, 2 minAvailable")
    assert messages["report"] == ("1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, "
                                  "1 minAvailable; Pending: 1 Unschedulable. Origin reason is report-0: "
                                  "0/2 nodes are unavailable: 2 Insufficient cpu.")
