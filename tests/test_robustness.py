"""Nothing lost when it matters: reports survive a failing scheduler; odd cluster state is said aloud."""

from __future__ import annotations

from pathlib import Path

from schedcheck.cli import main
from schedcheck.reference.util.assertion import AssertionViolation
from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario_text

SCENARIO = """
apiVersion: schedcheck/v1
kind: Scenario
metadata: {name: over-full}
schedulerConf:
  actions: "allocate"
  tiers:
  - plugins:
    - name: gang
objects:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    allocatable: {cpu: "2", memory: 4Gi, pods: "110"}
- apiVersion: scheduling.volcano.sh/v1beta1
  kind: PodGroup
  metadata: {name: a, namespace: default}
  spec: {minMember: 1}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: a-0, namespace: default, annotations: {scheduling.k8s.io/group-name: a}}
  spec:
    nodeName: n1
    containers:
    - name: c
      resources: {requests: {cpu: "3"}}
  status: {phase: Running}
"""


def test_a_node_out_of_sync_is_a_warning_and_a_finding():
    result = run_scenario(load_scenario_text(SCENARIO, "s.yaml"))
    assert any("node n1 is out of sync" in w and "cpu 3000 > 2000" in w for w in result.warnings)
    assert [f["id"] for f in result.findings] == ["input.node-out-of-sync"] and result.ok


def test_a_node_within_its_allocatable_says_nothing():
    result = run_scenario(load_scenario_text(SCENARIO.replace('cpu: "3"', 'cpu: "1"'), "s.yaml"))
    assert result.warnings == [] and result.findings == []


def test_check_writes_its_report_when_the_scheduler_asserts(tmp_path, monkeypatch, capsys):
    from schedcheck.reference.scheduler import Scheduler

    def boom(self):
        raise AssertionViolation("resource is not sufficient to do operation: <cpu 1000> sub <cpu 2000>")

    monkeypatch.setattr(Scheduler, "run_once", boom)
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert main(["check", str(path), "--report", str(tmp_path / "r")]) == 1
    [folder] = (tmp_path / "r").iterdir()
    report = (folder / "report.md").read_text()
    assert "upstream.assert" in report and "resource is not sufficient" in report
    assert "Traceback" not in capsys.readouterr().err
