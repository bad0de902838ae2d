"""Upstream's test-only plugins as schedcheck re-implements them (schedcheck/scenario/testplugins.py).

Each plugin's decision is judged on a real session, and each converted upstream case is shown to need its
test plugin: with the plugin taken out of the tiers the case's expectations fail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from schedcheck.reference.api.types import TaskStatus
from schedcheck.reference.api.unschedule_info import FitError, StatusCode
from schedcheck.reference.framework.conf import KNOWN_PLUGINS, PluginOption, SchedulerConf, Tier
from schedcheck.reference.framework.conf import apply_plugin_conf_defaults
from schedcheck.reference.framework.session import PERMIT, REJECT
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.runner import run_scenario
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import load_scenario, scenario_from_document
from schedcheck.scenario.testplugins import TEST_PLUGINS
from tests.builders import node, pod, pod_group
from tests.framework.helpers import session

UPSTREAM = Path(__file__).resolve().parents[2] / "schedcheck" / "corpus" / "upstream"
CASES = {  # converted upstream case -> the test plugin it uses
    "capacity-TestJobEnqueuedOnOtherPluginsReject-pgA-rejected-by-co-tier-plugin-must-not-consume-q1-capacity-"
    "pgB-must-be-admitted": "test-rejecter",
    "proportion-TestJobEnqueuedOnOtherPluginsReject-phantom-inqueue-reservation-rejecter-blocks-pgA-pgB-must-"
    "still-be-admitted": "test-rejecter",
    "resourcequota-TestJobEnqueuedOnOtherPluginsReject-pgA-rejected-by-co-tier-plugin-must-not-consume-ns1-"
    "quota-pgB-must-be-admitted": "test-rejecter",
    "preempt-TestNormalPreemptRechecksPredicateAfterEviction-normal-preemption-evicts-a-victim-when-hidden-"
    "device-capacity-remains-unavailable": "device-fit-after-eviction",
    "shuffle-TestShuffle-select-pods-with-low-priority-and-evict-them": "test-victims-by-priority",
}


def _conf(name: str, arguments: dict, actions: str = "enqueue") -> SchedulerConf:
    option = PluginOption(name, arguments=arguments)
    apply_plugin_conf_defaults(option)
    return SchedulerConf(actions=[actions], tiers=[Tier([option])])


def test_rejecter_rejects_only_the_named_podgroup():
    objects = ClusterObjects(nodes=[node("n1")], pods=[pod("a-0", group="pgA"), pod("b-0", group="pgB")],
                             pod_groups=[pod_group("pgA", 1), pod_group("pgB", 1)])
    ssn = session(objects, _conf("test-rejecter", {"rejectJob": "pgA"}))
    vote = ssn._fns["job_enqueueable"]["test-rejecter"]
    assert vote(ssn.jobs["default/pgA"]) == REJECT and vote(ssn.jobs["default/pgB"]) == PERMIT
    assert not ssn.job_enqueueable(ssn.jobs["default/pgA"]) and ssn.job_enqueueable(ssn.jobs["default/pgB"])


def test_device_fit_refuses_the_task_until_the_blocker_is_releasing():
    objects = ClusterObjects(
        nodes=[node("n1"), node("n2")],
        pods=[pod("preemptee", group="low", node_name="n1", phase="Running"), pod("preemptor", group="high"),
              pod("bystander", group="high")],
        pod_groups=[pod_group("low", 1, phase="Running"), pod_group("high", 1)])
    ssn = session(objects, _conf("device-fit-after-eviction", {"task": "preemptor", "blocker": "preemptee"},
                                 actions="preempt"))
    tasks = {t.name: t for job in ssn.jobs.values() for t in job.tasks.values()}
    n1, n2 = ssn.nodes["n1"], ssn.nodes["n2"]
    refusal = ssn.predicate_fn(tasks["preemptor"], n1)
    assert isinstance(refusal, FitError) and refusal.codes() == {StatusCode.Unschedulable}  # preempt may evict
    assert ssn.predicate_fn(tasks["preemptor"], n2) is None  # no blocker there
    assert ssn.predicate_fn(tasks["bystander"], n1) is None  # another task
    blocker = n1.tasks[tasks["preemptee"].key]
    blocker.status = TaskStatus.Releasing
    assert ssn.predicate_fn(tasks["preemptor"], n1) is None


def test_victims_by_priority_picks_the_candidates_of_that_priority():
    objects = ClusterObjects(
        nodes=[node("n1")],
        pods=[pod(f"p-{i}", group="pg", node_name="n1", phase="Running", priority=p)
              for i, p in enumerate((10, 100, 10, 5))],
        pod_groups=[pod_group("pg", 1, phase="Running")])
    ssn = session(objects, _conf("test-victims-by-priority", {"priority": 10}, actions="shuffle"))
    running = list(ssn.jobs["default/pg"].tasks.values())
    assert len(running) == 4
    assert sorted(t.name for t in ssn.victim_tasks(running)) == ["p-0", "p-2"]
    ssn = session(objects, _conf("test-victims-by-priority", {"priority": 7}, actions="shuffle"))
    assert ssn.victim_tasks(list(ssn.jobs["default/pg"].tasks.values())) == []


@pytest.mark.parametrize("name", sorted(CASES), ids=lambda n: n[:60])
def test_each_converted_case_needs_its_test_plugin(name):
    path = UPSTREAM / f"{name}.yaml"
    assert run_scenario(load_scenario(path)).ok
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    plugins = doc["schedulerConf"]["tiers"][0]["plugins"]
    assert [p["name"] for p in plugins if p["name"] in TEST_PLUGINS] == [CASES[name]]
    doc["schedulerConf"]["tiers"][0]["plugins"] = [p for p in plugins if p["name"] != CASES[name]]
    without = run_scenario(scenario_from_document(doc, str(path)))
    assert without.expectation_failures, "the case passes without its test plugin: it proves nothing"


def _write(tmp_path: Path, plugin: dict) -> Path:
    path = tmp_path / "case.yaml"
    doc = yaml.safe_load((UPSTREAM / f"{sorted(CASES)[0]}.yaml").read_text(encoding="utf-8"))
    doc["schedulerConf"]["tiers"][0]["plugins"][1] = plugin
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("plugin, field, reason", [
    ({"name": "test-rejecter"}, "arguments.rejectJob", "missing: test-rejecter needs"),
    ({"name": "test-rejecter", "arguments": {"rejectJob": 3}}, "arguments.rejectJob",
     "test-rejecter expects a non-empty string, got 3"),
    ({"name": "device-fit-after-eviction", "arguments": {"task": "preemptor"}}, "arguments.blocker",
     "missing: device-fit-after-eviction needs"),
    ({"name": "test-victims-by-priority", "arguments": {"priority": "low"}}, "arguments.priority",
     'test-victims-by-priority expects an integer, got "low"'),
    ({"name": "test-victims-by-priority", "arguments": {"priority": True}}, "arguments.priority",
     "expects an integer, got true"),
])
def test_a_missing_or_malformed_argument_is_a_one_line_error(tmp_path, plugin, field, reason):
    path = _write(tmp_path, plugin)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: schedulerConf: tiers[0].plugins[1].{field}: ")
    assert reason in message


def test_the_cli_reports_the_error_in_one_line_and_warns_about_unread_arguments(tmp_path):
    path = _write(tmp_path, {"name": "test-rejecter", "arguments": {"rejectjob": "pgA"}})
    done = subprocess.run([sys.executable, "-m", "schedcheck.cli", "run", str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "plugins[1].arguments.rejectJob: missing: test-rejecter" in done.stderr
    path = _write(tmp_path, {"name": "test-rejecter", "arguments": {"rejectJob": "pgA", "namespace": "ns1"}})
    warnings = load_scenario(path).warnings
    assert any("plugins[1].arguments.namespace: ignored: test-rejecter reads only rejectJob" in w for w in warnings)


def test_the_test_plugins_are_no_upstream_plugins_and_the_reference_alone_does_not_build_them():
    assert not set(TEST_PLUGINS) & KNOWN_PLUGINS
    code = ("from schedcheck.reference.framework.plugin import get_plugin_builder as g; "
            "import schedcheck.reference.scheduler; "
            f"print([n for n in {sorted(TEST_PLUGINS)!r} if g(n)])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
