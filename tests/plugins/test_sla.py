"""sla plugin: Go durations, waiting times, JobOrder and the Abstain/Permit votes (semantics §9.11)."""

from __future__ import annotations

import pytest

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import ABSTAIN, PERMIT
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins.sla import DurationError, global_waiting_time, job_waiting_time, parse_go_duration
from schedcheck.reference.scheduler import Scheduler
from tests.builders import node, pod, pod_group, rl

S = 1_000_000_000
NOW = "2026-05-01T10:00:00Z"


@pytest.mark.parametrize("text, nanoseconds", [
    ("0", 0), ("-0", 0), ("+0", 0), ("0s", 0), ("5s", 5 * S), ("300s", 300 * S), ("10m", 600 * S),
    ("1h30m", 5400 * S), ("1.5h", 5400 * S), ("-1.5h", -5400 * S), ("+5m", 300 * S), (".5s", S // 2),
    ("1.s", S), ("1h2m3s4ms5us6ns", 3723004005006), ("3µs", 3000), ("3μs", 3000), ("2h45m", 9900 * S),
    ("0.3333333333333333333h", 1200 * S), ("9223372036854775807ns", 2**63 - 1),
    ("-9223372036854775808ns", -(2**63)), ("2562047h47m16.854775807s", 2**63 - 1),
])
def test_parse_go_duration_accepts_what_go_accepts(text, nanoseconds):
    assert parse_go_duration(text) == nanoseconds


@pytest.mark.parametrize("text", [
    "", "-", "1", "1.5", "s", ".s", "-.s", "1x", "1d", "1h ", " 1h", "1H", "1e3s",
    "9223372036854775808ns", "2562047h47m16.854775808s", "3000000h", "1h-5m",
])
def test_parse_go_duration_rejects_what_go_rejects(text):
    with pytest.raises(DurationError):
        parse_go_duration(text)


def _job(annotations):
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("a-0", group="a")],
                             pod_groups=[pod_group("a", 1, annotations=annotations)])
    return SchedulerCache(objects).snapshot().jobs["default/a"]


def test_job_waiting_time_prefers_the_volcano_annotation_then_the_legacy_one():
    assert job_waiting_time(_job({})) is None
    assert job_waiting_time(_job({"sla-waiting-time": "10m"})) == 600 * S
    assert job_waiting_time(_job({"volcano.sh/sla-waiting-time": "5m", "sla-waiting-time": "10m"})) == 300 * S
    # Unparsable or non-positive: treated as absent, so the legacy key is read.
    assert job_waiting_time(_job({"volcano.sh/sla-waiting-time": "soon", "sla-waiting-time": "10m"})) == 600 * S
    assert job_waiting_time(_job({"volcano.sh/sla-waiting-time": "-5m"})) is None
    assert job_waiting_time(_job({"sla-waiting-time": "0s"})) is None


def test_global_waiting_time_argument():
    assert global_waiting_time({}) is None
    assert global_waiting_time({"sla-waiting-time": "1h"}) == 3600 * S
    assert global_waiting_time({"sla-waiting-time": 3600}) is None  # not a string
    assert global_waiting_time({"sla-waiting-time": "0"}) is None
    assert global_waiting_time({"sla-waiting-time": "bad"}) is None


def _session(groups, arguments=None, now=NOW):
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod(f"{g.name}-0", group=g.name) for g in groups],
                             pod_groups=list(groups))
    option = PluginOption("sla", arguments=dict(arguments or {}))
    apply_plugin_conf_defaults(option)
    ssn = open_session(SchedulerCache(objects, now=now), SchedulerConf(actions=["enqueue"], tiers=[Tier([option])]),
                       0, 0)
    return ssn, ssn.plugins["sla"]


def test_permitable_abstains_until_the_waiting_time_has_elapsed():
    groups = [pod_group("just", 1, creation_timestamp="2026-05-01T09:50:01Z", annotations={"sla-waiting-time": "10m"}),
              pod_group("exact", 1, creation_timestamp="2026-05-01T09:50:00Z", annotations={"sla-waiting-time": "10m"}),
              pod_group("none", 1, creation_timestamp="2020-01-01T00:00:00Z")]
    ssn, plugin = _session(groups)
    assert plugin.permitable(ssn.jobs["default/just"]) == ABSTAIN  # 9m59s < 10m
    assert plugin.permitable(ssn.jobs["default/exact"]) == PERMIT  # 10m is not < 10m
    assert plugin.permitable(ssn.jobs["default/none"]) == ABSTAIN  # no waiting time at all


def test_global_waiting_time_applies_to_jobs_without_their_own():
    groups = [pod_group("old", 1, creation_timestamp="2026-05-01T08:00:00Z"),
              pod_group("own", 1, creation_timestamp="2026-05-01T08:00:00Z", annotations={"sla-waiting-time": "3h"})]
    ssn, plugin = _session(groups, {"sla-waiting-time": "1h"})
    assert plugin.permitable(ssn.jobs["default/old"]) == PERMIT
    assert plugin.permitable(ssn.jobs["default/own"]) == ABSTAIN


def test_job_order_puts_jobs_with_a_waiting_time_first_then_earliest_deadline():
    groups = [pod_group("plain", 1, creation_timestamp="2026-05-01T07:00:00Z"),
              pod_group("late", 1, creation_timestamp="2026-05-01T08:00:00Z", annotations={"sla-waiting-time": "2h"}),
              pod_group("soon", 1, creation_timestamp="2026-05-01T09:00:00Z", annotations={"sla-waiting-time": "30m"}),
              pod_group("tie", 1, creation_timestamp="2026-05-01T09:20:00Z", annotations={"sla-waiting-time": "10m"})]
    ssn, plugin = _session(groups)
    jobs = ssn.jobs
    assert plugin.job_order(jobs["default/late"], jobs["default/plain"]) == -1
    assert plugin.job_order(jobs["default/plain"], jobs["default/late"]) == 1
    assert plugin.job_order(jobs["default/plain"], jobs["default/plain"]) == 0
    assert plugin.job_order(jobs["default/soon"], jobs["default/late"]) == -1  # 09:30 before 10:00
    assert plugin.job_order(jobs["default/soon"], jobs["default/tie"]) == 0  # both due 09:30


def test_an_earlier_tier_permit_overrides_a_later_reject_but_not_a_same_tier_reject():
    # overcommit rejects (needs 10 cpu of 1.2); sla permits because the hour has passed.
    group = pod_group("a", 1, creation_timestamp="2026-05-01T08:00:00Z", min_resources=rl(cpu="10"),
                      annotations={"sla-waiting-time": "1h"})
    objects = ClusterObjects(nodes=[node("n1", cpu="1")], pods=[pod("a-0", group="a")], pod_groups=[group])

    def phase(*tiers):
        built = []
        for names in tiers:
            options = [PluginOption(n) for n in names]
            for option in options:
                apply_plugin_conf_defaults(option)
            built.append(Tier(options))
        scheduler = Scheduler(objects, SchedulerConf(actions=["enqueue"], tiers=built), now=NOW)
        return scheduler.run_once().session.jobs["default/a"].pod_group.phase

    assert phase(["sla"], ["overcommit"]) == "Inqueue"
    assert phase(["sla", "overcommit"]) == "Pending"
    assert phase(["overcommit"], ["sla"]) == "Pending"


def test_the_session_clock_advances_one_second_per_cycle():
    group = pod_group("a", 1, creation_timestamp="2026-05-01T09:59:59Z", annotations={"sla-waiting-time": "2s"})
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("a-0", group="a")], pod_groups=[group])
    option = PluginOption("sla")
    apply_plugin_conf_defaults(option)
    scheduler = Scheduler(objects, SchedulerConf(actions=["enqueue"], tiers=[Tier([option])]), now=NOW)
    first = scheduler.run_once().session
    assert first.plugins["sla"].permitable(first.jobs["default/a"]) == ABSTAIN  # waited 1s
    scheduler.advance()
    second = scheduler.run_once().session
    assert second.plugins["sla"].permitable(second.jobs["default/a"]) == PERMIT  # waited 2s
