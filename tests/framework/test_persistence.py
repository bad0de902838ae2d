"""pipelinePersistence: the conf switch, the kept annotations, the allocate fast path, the binder faults.

Built on the hand-derived scenario tests/scenarios/persistence-reclaim-persistent.yaml: session 0
reclaim evicts ns/hog-0 on n2 and pipelines ns/api-0 there; session 1 keeps it (n2 has no Idle room
while hog-0 terminates); session 2 binds it on n2.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from schedcheck.reference.api.pipelined import (
    EVICTION_OCCURRED_ANNOTATION,
    PIPELINED_NODE_ANNOTATION,
    PIPELINED_STATUS_ANNOTATION,
    read_pipelined,
)
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.framework.conf import PluginOption, apply_plugin_conf_defaults
from schedcheck.scenario.conf_loader import parse_scheduler_conf
from schedcheck.reference.framework.event import EventHandler
from schedcheck.reference.framework.framework import close_session, open_session
from schedcheck.reference.framework.statement import Statement
from schedcheck.reference.scheduler import Scheduler
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario

SCENARIO = Path(__file__).parents[1] / "scenarios" / "persistence-reclaim-persistent.yaml"
API = "ns/api-0"


def scheduler(mode: str = "persistent") -> Scheduler:
    scenario = load_scenario(SCENARIO)
    conf = copy.deepcopy(scenario.conf)
    conf.pipeline_persistence = mode
    return Scheduler(scenario.objects, conf, now=scenario.now)


def pod(s: Scheduler, key: str):
    return next(p for p in s.cache.world.pods if p.key == key)


def task(ssn, key: str):
    return next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.key == key)


# -- the conf switch -------------------------------------------------------------------------------

def test_the_switch_defaults_to_upstream_and_reads_persistent():
    assert parse_scheduler_conf({"actions": "allocate"}, "c.yaml").pipeline_persistence == "upstream"
    conf = parse_scheduler_conf({"actions": "allocate", "pipelinePersistence": "persistent"}, "c.yaml")
    assert conf.persistent_pipelines


@pytest.mark.parametrize("value", ["yes", True, ["persistent"]])
def test_a_bad_switch_value_is_a_one_line_error(value):
    with pytest.raises(ScenarioError) as info:
        parse_scheduler_conf({"actions": "allocate", "pipelinePersistence": value}, "c.yaml")
    message = str(info.value)
    assert "\n" not in message and "c.yaml" in message and "pipelinePersistence" in message


# -- annotations across sessions -------------------------------------------------------------------

def test_a_pipelined_decision_is_kept_on_the_pod_and_restored():
    s = scheduler()
    other = pod(s, API)
    other.annotations = {**other.annotations, "team": "web"}
    s.run_once()
    annotations = pod(s, API).annotations
    assert annotations[PIPELINED_STATUS_ANNOTATION] == "true" and annotations[PIPELINED_NODE_ANNOTATION] == "n2"
    assert annotations[EVICTION_OCCURRED_ANNOTATION] == "true"  # recorded by reclaim
    assert annotations["team"] == "web"  # third-party annotations survive
    s.advance()
    ssn = s.run_once().session
    kept = task(ssn, API)
    assert (kept.status, kept.node_name, kept.eviction_occurred) == (TaskStatus.Pipelined, "n2", True)
    assert API in ssn.nodes["n2"].tasks
    assert not ssn.jobs["ns/api"].is_starving()  # nothing is evicted for it again
    assert [o.op for o in ssn.operations] == []
    s.advance()
    s.run_once()  # the fast path binds it
    s.advance()
    bound = pod(s, API)
    assert bound.node_name == "n2" and read_pipelined(bound) is None  # cleared on bind


def test_upstream_mode_ignores_the_annotations():
    s = scheduler("upstream")
    p = pod(s, API)
    p.annotations = {**p.annotations, PIPELINED_STATUS_ANNOTATION: "true", PIPELINED_NODE_ANNOTATION: "n3"}
    s.cache._rebuild()
    ssn = s.run_once().session
    assert task(ssn, API).node_name != "n3" and s.cache.log.releases == []


def test_ready_task_num_counts_pipelined_only_in_persistent_mode():
    for mode, ready in (("persistent", 1), ("upstream", 0)):
        s = scheduler(mode)
        ssn = s.run_once().session
        assert ssn.jobs["ns/api"].ready_task_num() == ready


def test_unallocating_a_kept_task_restores_it_pipelined_with_no_plugin_event():
    s = scheduler()
    s.run_once()
    s.advance()
    s.advance()  # hog-0 is gone: n2 has room
    ssn = open_session(s.cache, s.conf, 2, 0)
    events: list[str] = []
    ssn.add_event_handler(EventHandler(lambda e: events.append("allocate"), lambda e: events.append("deallocate")))
    kept = task(ssn, API)
    node = ssn.nodes["n2"]
    stmt = Statement(ssn)
    stmt.allocate(kept, node)
    assert kept.status == TaskStatus.Allocated and node.tasks[API].status == TaskStatus.Allocated
    assert node.pipelined.is_empty()
    stmt.discard()
    assert (kept.status, kept.node_name) == (TaskStatus.Pipelined, "n2")
    assert node.tasks[API].status == TaskStatus.Pipelined and not node.pipelined.is_empty()
    assert events == []  # charged once (at open), neither the allocation nor its undo charges again
    close_session(ssn)


# -- world faults ----------------------------------------------------------------------------------

def test_a_pod_bound_elsewhere_clears_the_decision_and_is_logged():
    s = scheduler()
    s.run_once()
    s.cache.cluster.bound_elsewhere[API] = "n3"
    s.advance()
    p = pod(s, API)
    assert p.node_name == "n3" and read_pipelined(p) is None
    assert [(r.task, r.reason) for r in s.cache.log.releases] == [(API, "bound by another scheduler")]


@pytest.mark.parametrize(("mode", "other", "outcome"), [
    ("persistent", "n3", "already-bound"), ("upstream", "n3", "conflict"),
    ("persistent", "n1", "bound-elsewhere"), ("upstream", "n1", "bound-elsewhere"),
])
def test_the_binder_finds_the_pod_already_bound(mode, other, outcome):
    """ns/etl-1 is bound to n3 in session 0; another scheduler binds it first, to n3 or to n1."""
    s = scheduler(mode)
    s.run_once()
    s.cache.cluster.bound_elsewhere["ns/etl-1"] = other
    s.advance()
    assert [(o.task, o.outcome) for o in s.cache.log.bind_outcomes] == [("ns/etl-1", outcome)]
    assert pod(s, "ns/etl-1").node_name == other


def test_a_pipelined_pod_deleted_or_its_node_removed():
    s = scheduler()
    s.run_once()
    s.cache.world.pods = [p for p in s.cache.world.pods if p.key != API]
    s.advance()
    ssn = s.run_once().session
    assert all(t.key != API for j in ssn.jobs.values() for t in j.tasks.values())
    s2 = scheduler()
    s2.run_once()
    s2.cache.world.nodes = [n for n in s2.cache.world.nodes if n.name != "n2"]
    s2.cache.world.pods = [p for p in s2.cache.world.pods if p.node_name != "n2"]
    s2.advance()
    assert [(r.task, r.node) for r in s2.cache.log.releases] == [(API, "n2")]
    assert task(s2.run_once().session, API).node_name in ("", "n1", "n3")


def test_plugin_deallocation_never_goes_below_zero_in_persistent_mode():
    """Deallocating a task the plugins never charged (api-0 is Pending) leaves proportion and
    capacity at zero in persistent mode (upstream's Sub would assert and go negative)."""
    s = scheduler()
    for name in ("proportion", "capacity"):
        option = PluginOption(name)
        apply_plugin_conf_defaults(option)
        s.conf.tiers[1].plugins.append(option)
    ssn = open_session(s.cache, s.conf, 0, 0)
    ssn.fire_deallocate(task(ssn, API))
    for allocated in (ssn.plugins["proportion"].queue_attrs["serve"].allocated,
                      ssn.plugins["capacity"]._queue_opts["serve"].allocated):
        assert allocated.milli_cpu == 0 and allocated.memory == 0
