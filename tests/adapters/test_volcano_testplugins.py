"""The Go adapter's test plugins (adapters/volcano/testplugins.go) decide as the reference's do.

Judged on the pinned release (v1.14.1) the adapter builds by default: outcomes that version shares with
master. (On v1.14.1 the three enqueue cases keep pgB Pending too, and preempt pipelines the preemptor
without evicting: the upstream fixes master's TestJobEnqueuedOnOtherPluginsReject and
TestNormalPreemptRechecksPredicateAfterEviction guard; against master all five converted cases agree.)
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from schedcheck.runner import run_scenario
from schedcheck.scenario.loader import load_scenario
from tests.adapters.test_volcano_adapter import run_adapter

UPSTREAM = Path(__file__).resolve().parents[2] / "schedcheck" / "corpus" / "upstream"
REJECT = UPSTREAM / ("capacity-TestJobEnqueuedOnOtherPluginsReject-pgA-rejected-by-co-tier-plugin-must-not-consume-"
                     "q1-capacity-pgB-must-be-admitted.yaml")
DEVICE_FIT = UPSTREAM / ("preempt-TestNormalPreemptRechecksPredicateAfterEviction-normal-preemption-evicts-a-victim-"
                         "when-hidden-device-capacity-remains-unavailable.yaml")
SHUFFLE = UPSTREAM / "shuffle-TestShuffle-select-pods-with-low-priority-and-evict-them.yaml"


def _both(command: list[str], path: Path) -> tuple[dict, dict]:
    done = run_adapter(command, str(path))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), run_scenario(load_scenario(path)).to_json()


def _edited(tmp_path: Path, source: Path, edit) -> Path:
    doc = yaml.safe_load(source.read_text(encoding="utf-8"))
    edit(doc)
    path = tmp_path / source.name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _plugin(doc: dict, name: str) -> dict:
    return next(p for p in doc["schedulerConf"]["tiers"][0]["plugins"] if p["name"] == name)


def test_the_rejecter_keeps_its_job_pending_upstream(volcano_adapter, tmp_path):
    up, ref = _both(volcano_adapter, REJECT)
    assert up["podGroupPhases"]["ns1/pgA"] == ref["podGroupPhases"]["ns1/pgA"] == "Pending"

    def reject_b(doc):
        _plugin(doc, "test-rejecter")["arguments"] = {"rejectJob": "pgB"}
    up, ref = _both(volcano_adapter, _edited(tmp_path, REJECT, reject_b))
    assert up["podGroupPhases"] == ref["podGroupPhases"] == {"ns1/pgA": "Inqueue", "ns1/pgB": "Pending"}


def test_victims_by_priority_evicts_the_low_priority_pods_upstream(volcano_adapter):
    up, ref = _both(volcano_adapter, SHUFFLE)
    assert sorted(up["evicted"]) == sorted(ref["evicted"]) == ["test/pod1-1", "test/pod2-1", "test/pod3-1"]


def test_device_fit_refuses_the_task_in_allocate_upstream(volcano_adapter, tmp_path):
    def allocate(doc):
        doc["schedulerConf"]["actions"] = "enqueue, allocate"
        doc["schedulerConf"].pop("configurations", None)
        _plugin(doc, "proportion")["enableJobEnqueued"] = True
        doc["expect"] = {}
    up, ref = _both(volcano_adapter, _edited(tmp_path, DEVICE_FIT, allocate))
    assert up["binds"] == ref["binds"] == {}  # n1 has room, but the preemptee holds the device

    def other_blocker(doc):
        allocate(doc)
        _plugin(doc, "device-fit-after-eviction")["arguments"]["blocker"] = "nobody"
    up, ref = _both(volcano_adapter, _edited(tmp_path, DEVICE_FIT, other_blocker))
    assert up["binds"] == ref["binds"] == {"c1/preemptor": "n1"}


def test_a_missing_argument_is_an_input_error_upstream_too(volcano_adapter, tmp_path):
    def bare(doc):
        _plugin(doc, "test-victims-by-priority").pop("arguments")
    done = run_adapter(volcano_adapter, str(_edited(tmp_path, SHUFFLE, bare)))
    assert done.returncode == 2
    assert "tiers[0].plugins[0].arguments.priority: missing (test-victims-by-priority needs it)" in done.stderr
