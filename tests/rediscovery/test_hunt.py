"""The rediscovery hunt on Python stand-ins for two upstream builds: a mutant as the buggy one, the
reference as the fixed one (the Go builds need the network and minutes; the logic is the same)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedcheck.conform.impl import Implementation
from schedcheck.conform.reference import run
from schedcheck.conform.search import folder_scenarios
from schedcheck.mutants import mutant
from schedcheck.rediscovery.catalog import CatalogError, load_catalog, select
from schedcheck.rediscovery.command import TABLE_BEGIN, TABLE_END, render_table, update_table
from schedcheck.rediscovery.hunt import hunt, only_buggy_fails

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def gang_ignorer(doc):
    with mutant("gang-commit-too-few"):
        return run(doc)


def reference(doc):
    return run(doc)


BUGGY = Implementation("buggy", target=gang_ignorer)
FIXED = Implementation("fixed", target=reference)


def _scenarios(*names):
    return [(name, doc) for name, doc in folder_scenarios(str(SCENARIOS)) if name in names]


def test_the_hunt_finds_the_bug_only_the_buggy_build_has_and_minimises_it():
    source = _scenarios("gang-discard.yaml")
    assert source, "the gang scenario moved"
    found = hunt(BUGGY, FIXED, iter(source), seed=0, budget=60, minimise_budget=20, replays=1)
    assert found.found and found.failing is not None
    assert found.failing.kind and "gang" in found.failing.kind
    assert found.minimised is not None
    assert found.replays["parent"] == [True] and found.replays["fix"] == [False] and found.confirmed
    assert only_buggy_fails(BUGGY, FIXED, found.minimised, 0, found.failing.kind) is not None


def test_a_failure_both_builds_share_is_counted_and_not_reported():
    source = _scenarios("gang-discard.yaml")
    found = hunt(BUGGY, BUGGY, iter(source), seed=0, budget=60, minimise_budget=5, replays=1)
    assert not found.found
    assert found.shared == 1 and found.scenarios == 1


def test_two_faithful_builds_find_nothing():
    source = _scenarios("gang-discard.yaml", "preempt-excess-eviction.yaml")
    found = hunt(FIXED, FIXED, iter(source), seed=0, budget=60, replays=1)
    assert not found.found and found.shared == 0 and found.scenarios == 2


def test_the_catalog_loads_and_names_its_fields(tmp_path):
    bugs = load_catalog()
    assert len(bugs) >= 10
    assert len({bug.id for bug in bugs}) == len(bugs)
    assert all(len(bug.fix) >= 12 and len(bug.parent) >= 12 for bug in bugs)
    assert select(bugs, [bugs[0].id]) == [bugs[0]]
    with pytest.raises(CatalogError, match="no bug nope"):
        select(bugs, ["nope"])
    broken = tmp_path / "bugs.yaml"
    broken.write_text("- {id: x, title: t, upstream: u, fix: f, parent: '', release: r, area: a, bug: b}\n")
    with pytest.raises(CatalogError, match="bug x: field parent"):
        load_catalog(broken)


def test_the_table_keeps_other_rows_and_replaces_the_rerun_ones(tmp_path):
    doc = tmp_path / "rediscovery.md"
    doc.write_text("# Rediscovery\n\nprose\n")
    row = {"id": "a", "upstream": "#1", "area": "gang", "parent": "p" * 12, "fix": "f" * 12, "found": False,
           "scenarios": 3, "sharedFlags": 0}
    update_table(doc, [row], seed=1, budget=10)
    update_table(doc, [{**row, "id": "b"}], seed=1, budget=10)
    update_table(doc, [{**row, "found": True, "foundAfterSeconds": 2.0, "kind": "divergence",
                        "replaysRedOnParent": "2/2", "replaysClearOnFix": "2/2"}], seed=2, budget=10)
    text = doc.read_text()
    assert text.startswith("# Rediscovery\n\nprose\n") and text.count(TABLE_BEGIN) == 1 and TABLE_END in text
    lines = [line for line in text.splitlines() if line.startswith("| `")]
    assert [line.split("`")[1] for line in lines] == ["a", "b"]
    assert "**yes**" in lines[0] and "seed 2" in lines[0] and "| no |" in lines[1]
    assert "build failed: boom" in render_table([{**row, "error": "boom"}])


KEPT = sorted((Path(__file__).resolve().parents[2] / "schedcheck" / "corpus" / "rediscovery").glob("*.answers.json"))


def test_the_kept_rediscoveries_are_there():
    """The parametrised check below would be skipped, not failed, over an empty folder."""
    assert len(KEPT) >= 7 and all(p.with_name(p.name.replace(".answers.json", ".yaml")).is_file() for p in KEPT)


@pytest.mark.parametrize("path", KEPT, ids=lambda p: p.stem)
def test_every_kept_rediscovery_flags_the_buggy_answer_and_passes_the_fixed_one(path):
    """The harness's oracles, offline: the buggy build's saved answer is flagged, the fixed build's is not."""
    from schedcheck.conform.check import check_answer
    from schedcheck.scenario.loader import scenario_from_document

    saved = json.loads(path.read_text())
    scenario = scenario_from_document(saved["scenario"], path.name)
    assert check_answer(scenario, saved["parent"]["result"], saved["seed"]), "the buggy answer passes"
    assert not check_answer(scenario, saved["fix"]["result"], saved["seed"]), "the fixed answer is flagged"
