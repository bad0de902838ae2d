"""A fixed slice of the input-fuzzing campaign: every malformed scenario is rejected in one line or runs."""

from __future__ import annotations

from schedcheck.fuzz_input import campaign, corpus, try_case


def test_a_fixed_slice_of_the_campaign_finds_no_traceback(tmp_path):
    summary = campaign(corpus([]), 60, seed=20261125, report=tmp_path, out=None)
    assert summary["problems"] == 0, summary["found"]
    assert summary["rejectedInOneLine"] > 0 and summary["ran"] > 0


def test_a_traceback_in_the_loader_is_reported_with_its_input(tmp_path, monkeypatch):
    import schedcheck.scenario.loader as loader

    def broken(text, source, conf_path=None):
        raise KeyError("metadata")

    monkeypatch.setattr(loader, "load_scenario_text", broken)
    summary = campaign(corpus([]), 3, seed=1, report=tmp_path, out=None)
    assert summary["problems"] == 1 and summary["found"][0].startswith("KeyError")
    report = next(tmp_path.iterdir())
    assert (report / "case-0.yaml").read_text().startswith("# KeyError")


def test_a_rejection_must_name_the_file(tmp_path, monkeypatch):
    import schedcheck.scenario.loader as loader
    from schedcheck.scenario.errors import ScenarioError

    def anonymous(text, source, conf_path=None):
        raise ScenarioError("", "Pod p", "spec", "bad")  # (ScenarioError itself keeps every message on one line)

    monkeypatch.setattr(loader, "load_scenario_text", anonymous)
    outcome, problem = try_case("kind: Scenario", "s.yaml", tmp_path)
    assert outcome == "problem" and "naming the file" in problem
