"""A fixed slice of the input-fuzzing campaign: every malformed scenario is rejected in one line or runs."""

from __future__ import annotations

from pathlib import Path

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


# ---------------------------------------------------------------- found by the 10,000-case campaign (seed 7)


def test_a_scheduler_that_raises_is_one_line_not_a_traceback(tmp_path, capsys):
    from schedcheck.cli import main

    text = (Path(__file__).parent / "scenarios" / "drf-hierarchy-weights.yaml").read_text(encoding="utf-8")
    broken = tmp_path / "broken-weights.yaml"
    broken.write_text(text.replace('volcano.sh/hierarchy-weights: "1/1"', 'volcano.sh/hierarchy-weights: ""'),
                      encoding="utf-8")
    for argv in (["run", str(broken)], ["check", str(broken), "--report", str(tmp_path / "reports")]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err
        line = next(ln for ln in err.splitlines() if "the scheduler stopped" in ln)
        assert str(broken) in line and "IndexError" in line and "drf" in line


def test_conform_names_a_scenario_without_metadata(tmp_path, capsys):
    from schedcheck.cli import main

    text = (Path(__file__).parent / "scenarios" / "drf-hierarchy-weights.yaml").read_text(encoding="utf-8")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "nameless.yaml").write_text(text.replace("metadata:\n  name: drf-hierarchy-weights\n", "metadata: null\n"),
                                          encoding="utf-8")
    code = main(["conform", "--impl", "python:schedcheck.conform.reference:run", "--scenarios", str(folder),
                 "--budget", "5", "--report", str(tmp_path / "reports")])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err


def test_a_case_out_of_time_is_a_hang_even_through_a_command_that_turns_exceptions_into_one_line(tmp_path,
                                                                                                  monkeypatch):
    """The time limit is not an Exception: `run` and `check` turn a scheduler's exception into one line and
    would otherwise swallow it and let the case run on unbounded."""
    import schedcheck.fuzz_input as fuzz
    import schedcheck.runner as runner

    def slow(*args, **kwargs):
        import time

        while True:
            time.sleep(0.05)
    monkeypatch.setattr(fuzz, "CASE_SECONDS", 1)
    monkeypatch.setattr(runner, "run_scenario", slow)
    monkeypatch.setattr("schedcheck.commands.run.run_scenario", slow, raising=False)
    text = (Path(__file__).parent / "scenarios" / "gang-discard.yaml").read_text(encoding="utf-8")
    verdict, what = fuzz.try_case(text, "slow.yaml", tmp_path)
    assert verdict == "problem" and what.startswith("hang")


def test_an_absurd_cycle_count_is_a_one_line_rejection_not_a_hang(tmp_path, capsys):
    from schedcheck.cli import main

    text = (Path(__file__).parent / "scenarios" / "gang-discard.yaml").read_text(encoding="utf-8")
    path = tmp_path / "many.yaml"
    path.write_text(text + "\ncycles: 1000000000000000000000000000000\n", encoding="utf-8")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cycles" in err[0] and "at most 10000" in err[0] and str(path) in err[0]


# ---------------------------------------------------------------- found by a 1,500-case campaign (seed 7, stop 29)


def _with_stray_bom(tmp_path: Path) -> Path:
    """A scenario with a byte-order mark inside it (not at the start): the loader's YAML reader takes it,
    PyYAML's safe_load does not."""
    text = (Path(__file__).parent / "scenarios" / "deviceshare-vgpu-exclusive-rule.yaml").read_text(encoding="utf-8")
    assert "\n    capacity:" in text
    folder = tmp_path / "cases"
    folder.mkdir()
    path = folder / "case.yaml"
    path.write_text(text.replace("\n    capacity:", "\n\ufeff   capacity:", 1), encoding="utf-8")
    return path


def test_conform_and_replay_use_the_document_the_loader_read(tmp_path, capsys):
    from schedcheck.cli import main
    from schedcheck.fuzz_input import CONFORM_IMPL

    path = _with_stray_bom(tmp_path)
    assert main(["run", str(path)]) == 0
    assert main(["conform", "--impl", CONFORM_IMPL, "--scenarios", str(path.parent), "--budget", "5",
                 "--minimise-budget", "1", "--report", str(tmp_path / "reports")]) == 0
    assert main(["replay", str(path), "--impl", CONFORM_IMPL]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_saved_case_with_a_multi_line_problem_stays_a_loadable_scenario(tmp_path, monkeypatch):
    import schedcheck.scenario.loader as loader

    def broken(text, source, conf_path=None):
        raise ValueError("first line\n  second line\n    third")

    monkeypatch.setattr(loader, "load_scenario_text", broken)
    summary = campaign(corpus([]), 1, seed=3, report=tmp_path, out=None)
    assert summary["problems"] == 1
    monkeypatch.undo()
    lines = (next(tmp_path.iterdir()) / "case-0.yaml").read_text().splitlines()
    header = lines[:lines.index(next(line for line in lines if line.startswith("# from ")))]
    assert header == ["# ValueError at test_fuzz_input.py:%d: first line" % _raise_line(), "#   second line",
                      "#     third"]  # every line a comment: what follows is the input itself


def _raise_line() -> int:
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if 'raise ValueError("first line' in line)


def test_a_report_place_that_cannot_be_written_is_refused_before_the_campaign(tmp_path, capsys):
    from schedcheck.cli import main

    a_file = tmp_path / "plain-file"
    a_file.write_text("mine")
    assert main(["fuzz-input", "--count", "5", "--report", str(a_file)]) == 2
    assert capsys.readouterr().err.strip() == f"schedcheck: fuzz-input: --report {a_file}: not a folder"
    assert a_file.read_text() == "mine"
