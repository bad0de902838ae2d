"""Dumping typed objects to a scenario document and loading it back gives the same objects."""

from pathlib import Path

import pytest

from schedcheck.scenario.dump import scenario_document
from schedcheck.scenario.loader import load_scenario, scenario_from_document

CORPUS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml")) + sorted(
    (Path(__file__).parent.parent / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_round_trip(path):
    original = load_scenario(path)
    doc = scenario_document(original.name, original.objects, original.conf, original.cycles, original.now,
                            original.options, original.extender_server)
    again = scenario_from_document(doc, str(path))
    assert again.extender_server == original.extender_server
    assert again.objects == original.objects
    assert again.options == original.options
    assert again.conf.actions == original.conf.actions
    assert [[(o.name, o.arguments, {k: v for k, v in o.flags.items() if v is not None}) for o in t.plugins]
            for t in again.conf.tiers] == \
        [[(o.name, o.arguments, {k: v for k, v in o.flags.items() if v is not None}) for o in t.plugins]
         for t in original.conf.tiers]
    assert again.conf.configurations == original.conf.configurations
    assert again.conf.pipeline_persistence == original.conf.pipeline_persistence
    assert again.conf.built_directly == original.conf.built_directly
