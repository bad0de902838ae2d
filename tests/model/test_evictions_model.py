"""The eviction optimiser is optimal (brute force), and `check` reports the overkill ratio."""

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from schedcheck.model.evictions import Candidate, minimal_gang_victims, minimal_victims
from schedcheck.reference.api.resource_info import Resource, Zero
from schedcheck.cli import main as cli_main

SIZES = st.integers(0, 4).map(lambda v: v * 1000.0)
VICTIMS = st.lists(st.tuples(SIZES, SIZES, st.integers(0, 5)), max_size=5)


def _brute(request: Resource, idle: Resource, candidates: list[Candidate]):
    best = None
    for k in range(len(candidates) + 1):
        for subset in itertools.combinations(candidates, k):
            freed = idle.clone()
            for c in subset:
                freed.add(c.request)
            if request.less_equal(freed, Zero):
                key = (k, sum(c.priority for c in subset))
                best = key if best is None or key < best else best
        if best is not None:
            return best
    return None


@settings(max_examples=120, deadline=None, derandomize=True)
@given(SIZES, SIZES, SIZES, SIZES, VICTIMS)
def test_optimiser_matches_brute_force(r_cpu, r_mem, i_cpu, i_mem, victims):
    request, idle = Resource(r_cpu, r_mem), Resource(i_cpu, i_mem)
    candidates = [Candidate(f"v{i}", Resource(c, m), p) for i, (c, m, p) in enumerate(victims)]
    got = minimal_victims(request, idle, candidates)
    expected = _brute(request, idle, candidates)
    assert (None if got is None else (got.count, got.priority_sum)) == expected


def test_gang_optimum_spreads_over_nodes():
    requests = [Resource(2000, 0), Resource(2000, 0)]
    idle = {"n1": Resource(0, 0), "n2": Resource(1000, 0)}
    candidates = [Candidate("a", Resource(2000, 0), 1, "n1"), Candidate("b", Resource(1000, 0), 1, "n2"),
                  Candidate("c", Resource(4000, 0), 9, "n1")]
    best = minimal_gang_victims(requests, idle, candidates)
    assert best is not None and sorted(best.victims) == ["a", "b"]


def _check(path: str, tmp_path, capsys) -> list[dict]:
    assert cli_main(["check", path, "--json", "--report", str(tmp_path)]) == 0
    return json.loads(capsys.readouterr().out)["overkill"]


def test_overkill_above_one_on_excess_eviction(tmp_path, capsys):
    [entry] = _check("tests/scenarios/preempt-excess-eviction.yaml", tmp_path, capsys)
    assert entry["evictionsMade"] == 2 and entry["evictionsNeeded"] == 1
    assert entry["ratio"] > 1
    assert entry["optimalVictims"] == ["default/big-0"]


def test_overkill_one_on_minimal_eviction(tmp_path, capsys):
    entries = _check("tests/scenarios/preempt-only-needed-victims.yaml", tmp_path, capsys)
    assert entries and all(e["ratio"] == 1 for e in entries)


def test_check_text_shows_overkill(tmp_path, capsys):
    assert cli_main(["check", "tests/scenarios/preempt-excess-eviction.yaml", "--report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "2 evicted, 1 needed, ratio 2.0 (optimal: default/big-0)" in out


def test_whole_bundles_are_all_or_nothing():
    idle = {"n1": Resource(0, 0)}
    candidates = [Candidate("w1", Resource(1000, 0), 0, "n1", "whole-0"),
                  Candidate("w2", Resource(1000, 0), 0, "n1", "whole-0"),
                  Candidate("s1", Resource(1000, 0), 5, "n1")]
    best = minimal_gang_victims([Resource(1000, 0)], idle, candidates)
    assert best.victims == ["s1"]  # one safe task beats a two-task whole bundle despite its priority
    best = minimal_gang_victims([Resource(2000, 0)], idle, candidates[:2])
    assert sorted(best.victims) == ["w1", "w2"]


def test_gang_overkill_bundle_granularity(tmp_path, capsys):
    """gangpreempt adds a victim job's safe bundle whole: two evicted where one task suffices."""
    [entry] = _check("tests/scenarios/gangpreempt-safe-bundle-first.yaml", tmp_path, capsys)
    assert (entry["action"], entry["evictionsMade"], entry["evictionsNeeded"]) == ("gangpreempt", 2, 1)
    assert entry["optimalVictims"][0] in ("data/etl-0", "data/etl-1")  # a safe task, not the whole bundle
    [entry] = _check("tests/scenarios/gangpreempt-whole-bundle-breaks-victim-gang.yaml", tmp_path, capsys)
    assert entry["ratio"] == 1
