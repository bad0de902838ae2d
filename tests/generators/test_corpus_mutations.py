"""Edits of corpus scenarios: each operator edits what it names, the result loads, and the search shrinks back."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from schedcheck.generators import corpus_mutations as cm
from schedcheck.scenario.loader import scenario_from_document

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
BASE = yaml.safe_load((SCENARIOS / "pdb-refusal-overridden-by-a-later-tier.yaml").read_text(encoding="utf-8"))


def _kinds(doc):
    return [o["kind"] for o in doc["objects"]]


def test_an_unedited_document_only_loses_its_expectations_and_its_name():
    out = cm._apply(BASE, [])
    assert "expect" not in out and out["objects"] == BASE["objects"] and "expect" in BASE
    assert out["metadata"] == {"name": "pdb-refusal-overridden-by-a-later-tier-edited"}


@pytest.mark.parametrize("name", sorted(cm.OPERATORS))
def test_every_operator_changes_the_document_and_keeps_it_loadable(name):
    changed = False
    for which in range(8):
        for param in range(8):
            out = cm._apply(BASE, [(name, which, param)])
            scenario_from_document(out, f"<{name}>")  # loads (dangling references are warnings)
            changed |= out["objects"] != BASE["objects"] or out.get("schedulerConf") != BASE["schedulerConf"] \
                or out.get("cycles") != BASE.get("cycles")
    assert changed, f"{name} never changed anything"


def test_operators_edit_what_they_name():
    assert _kinds(cm._apply(BASE, [("drop-object", 0, 0)])).count("Pod") == _kinds(BASE).count("Pod") - 1
    assert _kinds(cm._apply(BASE, [("clone-pod", 0, 0)])).count("Pod") == _kinds(BASE).count("Pod") + 1
    node = next(o for o in cm._apply(BASE, [("scale-node", 0, 0)])["objects"] if o["kind"] == "Node")
    assert node["status"]["allocatable"]["cpu"] == "4"
    assert cm._apply(BASE, [("cycles", 0, 1)])["cycles"] == 3
    assert "preempt" in cm._apply(BASE, [("actions", 0, 3)])["schedulerConf"]["actions"]
    assert cm._apply(BASE, [("drop-object", 0, 1)]) == cm._apply(BASE, [])  # the last node is never dropped


def test_quantities_keep_their_unit():
    assert [cm._scale(v, f) for v, f in (("4Gi", 2.0), ("500m", 0.5), ("1.5", 3.0), ("3", 0.0), ("x", 2.0))] == \
        ["8Gi", "250m", "4.5", "0", "x"]


def test_the_strategy_draws_loadable_documents_and_never_edits_its_input():
    before = copy.deepcopy(BASE)

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(cm.corpus_mutations([BASE]))
    def check(doc):
        scenario_from_document(doc, "<mutated>")
        assert "expect" not in doc

    check()
    assert BASE == before


def test_an_empty_corpus_is_refused():
    with pytest.raises(ValueError):
        cm.corpus_mutations([])


def test_clones_of_one_pod_get_distinct_names():
    out = cm._apply(BASE, [("clone-pod", 0, 1), ("clone-pod", 0, 0), ("clone-pod", 0, 1)])
    names = [o["metadata"]["name"] for o in out["objects"] if o["kind"] == "Pod"]
    assert len(names) == len(set(names)) == len(_kinds(BASE)) - _kinds(BASE).count("Pod") * 0 - len(
        [k for k in _kinds(BASE) if k != "Pod"]) + 3
    scenario_from_document(out, "<clones>")


def test_a_pod_made_pending_forgets_the_cards_the_scheduler_wrote_on_it():
    # a running vGPU pod cloned or unbound keeps no card annotation: placing the pending copy would charge
    # its twin's cards a second time (device.within-capacity; gate seeds 6 and 7 before this)
    doc = yaml.safe_load((SCENARIOS / "deviceshare-vgpu-binpack-score.yaml").read_text(encoding="utf-8"))
    running = [i for i, o in enumerate(o for o in doc["objects"] if o["kind"] == "Pod")
               if cm.ASSIGNED_IDS in (o["metadata"].get("annotations") or {})]
    assert running
    for edit in ("clone-pod", "unbind-pod"):
        edited = cm._apply(doc, [(edit, running[0], 0)])
        pending = [o for o in edited["objects"] if o["kind"] == "Pod" and not o.get("spec", {}).get("nodeName")
                   and o.get("status", {}).get("phase") == "Pending"]
        assert pending and all(cm.ASSIGNED_IDS not in (o["metadata"].get("annotations") or {}) for o in pending)
    assert any(cm.ASSIGNED_IDS in (o["metadata"].get("annotations") or {}) for o in doc["objects"]
               if o["kind"] == "Pod")  # the input itself is never edited
