"""cdp plugin: the cooldown-time label or annotation and the victims it protects (cdp.go, cdp_test.go).

Upstream's cdp_test.go builds tasks by hand (no uthelper.TestCommonStruct), so `schedcheck upstream-tests`
extracts nothing from it; its cases are restated here against the session clock.
"""

from __future__ import annotations

import pytest

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.k8s import ClusterObjects, PodCondition
from schedcheck.reference.plugins.cdp import COOLDOWN_TIME_KEY, cooldown_time, cooling_down, filter_victims
from schedcheck.reference.plugins.sla import seconds_to_ns
from schedcheck.reference.util.timestamps import format_timestamp, parse_timestamp
from schedcheck.scenario.dump import pod_document
from schedcheck.scenario.loader import scenario_from_document
from tests.builders import node, pod, pod_group

S = 1_000_000_000
NOW = "2026-05-01T10:00:00Z"
NOW_NS = seconds_to_ns(parse_timestamp(NOW))


def at(seconds_before_now: int) -> str:
    return format_timestamp(parse_timestamp(NOW) - seconds_before_now)


def scheduled(seconds_before_now: int, status: str = "True") -> PodCondition:
    return PodCondition("PodScheduled", status, last_transition_time=at(seconds_before_now))


def victim(name: str, cooldown: str | None = None, label: str | None = None, conditions=None, phase="Running"):
    annotations = {} if cooldown is None else {COOLDOWN_TIME_KEY: cooldown}
    labels = {} if label is None else {COOLDOWN_TIME_KEY: label}
    return pod(name, group="pg", annotations=annotations, labels=labels, node_name="n1" if phase == "Running" else "",
               phase=phase, conditions=list(conditions or []))


def test_at_counts_back_from_now():
    assert at(100) == "2026-05-01T09:58:20Z"
    assert at(600) == "2026-05-01T09:50:00Z"
    assert at(60) == "2026-05-01T09:59:00Z"


@pytest.mark.parametrize("annotation, label, expected", [
    ("600s", None, 600 * S),
    ("600abcde", None, None),  # upstream's "not-enabled" case
    (None, None, None),
    ("10m", "1m", 60 * S),  # the label is read first
    ("10m", "soon", None),  # an unparsable label does not fall back to the annotation
    ("0s", None, 0),
    ("-5m", None, -300 * S),
    ("", None, None),
])
def test_cooldown_time(annotation, label, expected):
    assert cooldown_time(victim("p", annotation, label)) == expected


@pytest.mark.parametrize("cooldown, conditions, phase, protected", [
    ("600s", [scheduled(100)], "Running", True),  # upstream's task1
    ("600abcde", [scheduled(100)], "Running", False),  # upstream's task2
    ("600s", [scheduled(800)], "Running", False),  # upstream's task3
    (None, [scheduled(100)], "Running", False),
    ("600s", [scheduled(600)], "Running", False),  # the cooldown ends exactly now: not after now
    ("600s", [scheduled(599)], "Running", True),
    ("600s", [scheduled(100)], "Pending", False),  # only a Running pod is protected
    ("600s", [], "Running", False),
    ("600s", [scheduled(100, "False")], "Running", False),
    ("600s", [PodCondition("PodScheduled", "True")], "Running", False),  # no time: Go's zero time
    ("600s", [PodCondition("Ready", "True", last_transition_time=at(100)), scheduled(100)], "Running", True),
    ("600s", [scheduled(800), scheduled(100)], "Running", False),  # the first PodScheduled True decides
    ("600s", [scheduled(100, "False"), scheduled(100)], "Running", True),
    ("0s", [PodCondition("PodScheduled", "True", last_transition_time="2026-05-01T10:00:01Z")], "Running", True),
    ("-10m", [scheduled(100)], "Running", False),
])
def test_cooling_down(cooldown, conditions, phase, protected):
    assert cooling_down(victim("p", cooldown, conditions=conditions, phase=phase), NOW_NS) is protected


def _session(pods, tier_plugins=("cdp",)):
    options = [PluginOption(name) for name in tier_plugins]
    for option in options:
        apply_plugin_conf_defaults(option)
    objects = ClusterObjects(nodes=[node("n1")], pods=list(pods), pod_groups=[pod_group("pg", 0, phase="Running")])
    return open_session(SchedulerCache(objects, now=NOW), SchedulerConf(actions=["preempt"], tiers=[Tier(options)]),
                        0, 0)


def _tasks(ssn, *names):
    by_name = {t.name: t for job in ssn.jobs.values() for t in job.tasks.values()}
    return [by_name[n] for n in names]


def test_preemptable_and_reclaimable_drop_the_pods_in_cooldown_keeping_order():
    ssn = _session([victim("task1", "600s", conditions=[scheduled(100)]),
                    victim("task2", "600abcde", conditions=[scheduled(100)]),
                    victim("task3", "600s", conditions=[scheduled(800)])])
    candidates = _tasks(ssn, "task1", "task2", "task3")
    preemptor = candidates[0]
    assert [t.name for t in ssn.preemptable(preemptor, candidates)] == ["task2", "task3"]
    assert [t.name for t in ssn.reclaimable(preemptor, candidates)] == ["task2", "task3"]
    assert [t.name for t in ssn.preemptable(preemptor, candidates[::-1])] == ["task3", "task2"]


def test_nothing_left_means_no_victims():
    ssn = _session([victim("a", "1h", conditions=[scheduled(100)])])
    candidates = _tasks(ssn, "a")
    assert ssn.preemptable(candidates[0], candidates) is None
    assert filter_victims(candidates, NOW_NS) == []


def test_the_session_clock_decides():
    pods = [victim("a", "10m", conditions=[scheduled(100)])]
    objects = ClusterObjects(nodes=[node("n1")], pods=pods, pod_groups=[pod_group("pg", 0, phase="Running")])
    option = PluginOption("cdp")
    apply_plugin_conf_defaults(option)
    later = open_session(SchedulerCache(objects, now="2026-05-01T10:10:00Z"),
                         SchedulerConf(actions=["preempt"], tiers=[Tier([option])]), 0, 0)
    candidates = _tasks(later, "a")
    assert [t.name for t in later.preemptable(candidates[0], candidates)] == ["a"]


def test_enable_preemptable_false_leaves_preempt_unfiltered():
    options = [PluginOption("cdp", flags={"enablePreemptable": False})]
    apply_plugin_conf_defaults(options[0])
    objects = ClusterObjects(nodes=[node("n1")], pods=[victim("a", "1h", conditions=[scheduled(100)])],
                             pod_groups=[pod_group("pg", 0, phase="Running")])
    ssn = open_session(SchedulerCache(objects, now=NOW), SchedulerConf(actions=["preempt"], tiers=[Tier(options)]),
                       0, 0)
    candidates = _tasks(ssn, "a")
    assert ssn.preemptable(candidates[0], candidates) is None  # no plugin voted: no victims at all
    assert ssn.reclaimable(candidates[0], candidates) is None


def test_loader_reads_and_dumps_the_last_transition_time():
    doc = {"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [{
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running", "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-05-01T09:58:20Z"}]}}]}
    scenario = scenario_from_document(doc, "<test>")
    loaded = scenario.objects.pods[0]
    assert loaded.conditions == [PodCondition("PodScheduled", "True", last_transition_time="2026-05-01T09:58:20Z")]
    assert not any("lastTransitionTime" in w for w in scenario.warnings)
    dumped = pod_document(loaded)["status"]["conditions"]
    assert dumped == [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-05-01T09:58:20Z"}]
