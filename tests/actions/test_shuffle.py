"""shuffle action: Running tasks in, VictimTasks out, each evicted through ssn.evict (semantics §8.6)."""

from __future__ import annotations

import pytest

import schedcheck.reference.scheduler as scheduler_module
from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.cache.errors import CacheError
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.scheduler import Scheduler
from schedcheck.reference.util import assertion
from schedcheck.reference.util.assertion import AssertionViolation
from tests.builders import node, pod, pod_group
from tests.framework.helpers import conf


def _objects():
    return ClusterObjects(
        nodes=[node("n1"), node("n2")],
        pods=[pod("a-0", group="a", node_name="n1", phase="Running"),
              pod("a-1", group="a", node_name="n2", phase="Running"),
              pod("b-0", group="b", node_name="n1", phase="Pending"),  # Bound, not Running
              pod("c-0", group="c")],
        pod_groups=[pod_group("a", 2, phase="Running"), pod_group("b", 1, phase="Inqueue"), pod_group("c", 1)])


def _run_with_victim_fns(monkeypatch, *tiers_of_fns, flags=None):
    """Run shuffle with stand-in VictimTasks callbacks registered under plugins p0, p1, ..."""
    original = scheduler_module.open_session
    seen: list[list[str]] = []
    names = [[f"p{t}{i}" for i in range(len(fns))] for t, fns in enumerate(tiers_of_fns)]

    def open_with_victims(*args, **kwargs):
        ssn = original(*args, **kwargs)
        for tier_names, fns in zip(names, tiers_of_fns):
            for name, fn in zip(tier_names, fns):
                def wrapped(tasks, fn=fn):
                    seen.append(sorted(t.key for t in tasks))
                    return fn(tasks)
                ssn.add_fn("victim_tasks", name, wrapped)
        return ssn

    monkeypatch.setattr(scheduler_module, "open_session", open_with_victims)
    scheduler = Scheduler(_objects(), conf(*names, actions="shuffle", **(flags or {})))
    return scheduler, scheduler.run_once().session, seen


def test_only_running_tasks_are_offered_and_victims_are_evicted(monkeypatch):
    scheduler, ssn, seen = _run_with_victim_fns(monkeypatch, [lambda tasks: [t for t in tasks if t.name == "a-1"]])
    assert seen == [["default/a-0", "default/a-1"]]
    assert [e.task for e in scheduler.cache.log.evictions] == ["default/a-1"]
    assert scheduler.cache.log.evictions[0].reason == "shuffle"
    job = ssn.jobs["default/a"]
    assert [t.name for t in job.tasks_with_status(TaskStatus.Releasing)] == ["a-1"]
    assert ssn.nodes["n2"].releasing.milli_cpu == 1000


def test_no_gang_check_the_whole_gang_may_go(monkeypatch):
    scheduler, ssn, _ = _run_with_victim_fns(monkeypatch, [lambda tasks: list(tasks)])
    assert sorted(e.task for e in scheduler.cache.log.evictions) == ["default/a-0", "default/a-1"]
    assert ssn.jobs["default/a"].pod_group.phase == "Running"  # 2 releasing tasks with nodes still count


def test_first_tier_with_victims_wins_and_a_tier_is_a_union(monkeypatch):
    def pick(name):
        return lambda tasks: [t for t in tasks if t.name == name]

    scheduler, _, _ = _run_with_victim_fns(monkeypatch, [lambda tasks: []], [pick("a-0"), pick("a-1")], [pick("x")])
    assert sorted(e.task for e in scheduler.cache.log.evictions) == ["default/a-0", "default/a-1"]


def test_disabled_victim_flag_skips_the_plugin(monkeypatch):
    scheduler, _, _ = _run_with_victim_fns(monkeypatch, [lambda tasks: list(tasks)],
                                           flags={"p00": {"enabledVictim": False}})
    assert scheduler.cache.log.evictions == []


def test_an_eviction_the_cache_refuses_is_skipped(monkeypatch):
    original_evict = scheduler_module.SchedulerCache.evict

    def refuse_a0(self, task, reason):
        if task.name == "a-0":
            raise CacheError("refused")
        return original_evict(self, task, reason)

    monkeypatch.setattr(scheduler_module.SchedulerCache, "evict", refuse_a0)
    scheduler, ssn, _ = _run_with_victim_fns(monkeypatch, [lambda tasks: list(tasks)])
    assert [e.task for e in scheduler.cache.log.evictions] == ["default/a-1"]
    assert [t.name for t in ssn.jobs["default/a"].tasks_with_status(TaskStatus.Running)] == ["a-0"]


def test_shuffle_without_victim_plugins_does_nothing():
    scheduler = Scheduler(_objects(), conf(["gang"], actions="shuffle"))
    scheduler.run_once()
    assert scheduler.cache.log.evictions == []


# -- tdm as a VictimTasks provider (tests/plugins has no tdm module; tdm is optional) -----------

TDM_NOW = "2026-05-01T22:30:00Z"


def _tdm_objects(budget=None):
    revocable = node("spot-1", cpu="16", labels={"volcano.sh/revocable-zone": "rz1"})
    annotations = {budget[0]: budget[1]} if budget else {}
    pods = [pod(f"e-{i}", group="e", node_name="spot-1", phase="Running",
                annotations={"volcano.sh/preemptable": "true"}) for i in range(4)]
    pods.append(pod("keep-0", group="k", node_name="spot-1", phase="Running",
                    annotations={"volcano.sh/preemptable": "false"}))
    pods.append(pod("new-0", group="n", annotations={"volcano.sh/revocable-zone": "*"}))
    pods.append(pod("plain-0", group="p"))
    return ClusterObjects(nodes=[revocable, node("stable-1")], pods=pods,
                          pod_groups=[pod_group("e", 1, phase="Running", annotations=annotations),
                                      pod_group("k", 1, phase="Running"), pod_group("n", 1), pod_group("p", 1)])


def _tdm_scheduler(objects, window, actions="shuffle", period=None):
    from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults

    arguments = {"tdm.revocable-zone.rz1": window}
    if period is not None:
        arguments["tdm.evict.period"] = period
    option = PluginOption("tdm", arguments=arguments)
    apply_plugin_conf_defaults(option)
    return Scheduler(objects, SchedulerConf(actions=[a.strip() for a in actions.split(",")], tiers=[Tier([option])]),
                     now=TDM_NOW)


def test_tdm_zone_windows_on_the_session_clock():
    from schedcheck.reference.plugins.tdm import zone_unavailable
    from schedcheck.reference.util.timestamps import parse_timestamp

    at = parse_timestamp
    assert zone_unavailable({"rz": "22:00-23:00"}, "rz", at("2026-05-01T22:30:00Z")) is None
    assert zone_unavailable({"rz": "22:00-23:00"}, "rz", at("2026-05-01T23:00:00Z")) is None  # end inclusive
    assert zone_unavailable({"rz": "22:00-23:00"}, "rz", at("2026-05-01T23:00:01Z")) is not None
    # Wrapping midnight: active until midnight only, since "today" moves on (upstream quirk).
    assert zone_unavailable({"rz": "22:00-06:00"}, "rz", at("2026-05-01T23:59:59Z")) is None
    assert zone_unavailable({"rz": "22:00-06:00"}, "rz", at("2026-05-02T01:00:00Z")) is not None
    assert zone_unavailable({"rz": "9:00-17:00"}, "rz", at("2026-05-01T10:00:00Z")) is None  # one hour digit
    assert zone_unavailable({"rz": "09:00 - 17:00"}, "rz", at("2026-05-01T10:00:00Z")) is not None
    assert zone_unavailable({}, "rz", at("2026-05-01T10:00:00Z")) == "revocable zone rz not support"


def test_tdm_disruption_budget():
    from schedcheck.reference.plugins.tdm import max_pod_evict_num, parse_int_or_percent

    assert (parse_int_or_percent("3", 8), parse_int_or_percent("50%", 3), parse_int_or_percent("x%", 3)) == (3, 2, 0)
    cases = [(None, 1), (("volcano.sh/jdb-min-available", "1"), 3), (("volcano.sh/jdb-min-available", "5"), 1),
             (("volcano.sh/jdb-max-unavailable", "50%"), 2), (("volcano.sh/jdb-max-unavailable", "0"), 0)]
    for budget, expected in cases:
        ssn = _tdm_scheduler(_tdm_objects(budget), "22:00-23:00", actions="enqueue").run_once().session
        assert max_pod_evict_num(ssn.jobs["default/e"]) == expected, budget


def test_tdm_victims_are_node_copies_so_shuffle_trips_the_releasing_assertion():
    # tdm returns the node's own task copies; ssn.Evict marks that copy Releasing through the job and
    # then UpdateTask subtracts it from the node's (empty) Releasing: upstream's Sub assertion panics.
    scheduler = _tdm_scheduler(_tdm_objects(), "08:00-20:00")
    with pytest.raises(AssertionViolation):
        scheduler.run_once()
    assert [e.task for e in scheduler.cache.log.evictions] == ["default/e-0"]  # the cache went first


def _evictions_per_cycle(scheduler, cycles):
    counts = []
    for cycle in range(cycles):
        if cycle:
            scheduler.advance()
        before = len(scheduler.cache.log.evictions)
        scheduler.run_once()
        counts.append([e.task for e in scheduler.cache.log.evictions[before:]])
    return counts


def test_tdm_evicts_an_inactive_zone_within_the_budget_with_panics_off():
    assertion.set_panic_on_error(False)  # PANIC_ON_ERROR=false: upstream logs the assertion and goes on
    budget = ("volcano.sh/jdb-max-unavailable", "2")
    scheduler = _tdm_scheduler(_tdm_objects(budget), "08:00-20:00", period="0s")
    # Cycle 0: 4 running, none unavailable -> 2 (keep-0 is not preemptable). Cycle 1: e-0 and e-1 are
    # terminating, 2 unavailable >= 2 -> none. Cycle 2: they are gone, 2 of 2 running -> 2 more.
    assert _evictions_per_cycle(scheduler, 3) == [["default/e-0", "default/e-1"], [],
                                                  ["default/e-2", "default/e-3"]]
    scheduler = _tdm_scheduler(_tdm_objects(budget), "08:00-20:00", period="2s")
    assert _evictions_per_cycle(scheduler, 3) == [["default/e-0", "default/e-1"], [],
                                                  ["default/e-2", "default/e-3"]]
    scheduler = _tdm_scheduler(_tdm_objects(budget), "08:00-20:00", period="3s")
    assert _evictions_per_cycle(scheduler, 3)[1:] == [[], []]  # the next round is due at +3 s


def test_tdm_active_zone_evicts_nothing_and_admits_only_revocable_tasks():
    scheduler = _tdm_scheduler(_tdm_objects(), "22:00-23:00", actions="enqueue, allocate, shuffle")
    scheduler.run_once()
    assert scheduler.cache.log.evictions == []
    assert {b.task: b.node for b in scheduler.cache.log.binds} == {"default/new-0": "spot-1",
                                                                   "default/plain-0": "stable-1"}
