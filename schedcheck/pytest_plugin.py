"""pytest plugin: a folder of scenario files as test items.

    pytest --schedcheck-scenarios tests/scenarios [--schedcheck-report reports]

Each `.yaml`/`.yml`/`.json` file under the folder is one test, judged as `schedcheck check` judges it:
every invariant on, and its `expect` block. A failing scenario writes its report folder and names it in
the failure text. Installed with schedcheck (entry point `pytest11`), so any project can keep its
scenarios beside its own tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUFFIXES = (".yaml", ".yml", ".json")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("schedcheck")
    group.addoption("--schedcheck-scenarios", action="append", default=[], metavar="DIR",
                    help="collect every scenario file under DIR as a test (repeatable)")
    group.addoption("--schedcheck-report", default="reports", metavar="DIR",
                    help="where failing scenarios write their report folders (default reports/)")


def pytest_configure(config: pytest.Config) -> None:
    for folder in config.getoption("--schedcheck-scenarios") or []:
        if not Path(folder).is_dir():
            raise pytest.UsageError(f"--schedcheck-scenarios {folder}: not a directory")
        config.args.append(str(Path(folder).resolve()))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    folders = [Path(f).resolve() for f in parent.config.getoption("--schedcheck-scenarios") or []]
    if file_path.suffix in SUFFIXES and any(folder in file_path.resolve().parents for folder in folders):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioFailed(Exception):
    pass


class ScenarioItem(pytest.Item):
    def runtest(self) -> None:
        from schedcheck.invariants.engine import InvariantEngine
        from schedcheck.report import write_report
        from schedcheck.runner import run_scenario
        from schedcheck.scenario.errors import ScenarioError
        from schedcheck.scenario.loader import load_scenario

        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            raise ScenarioFailed(str(exc)) from None
        engine = InvariantEngine()
        result = run_scenario(scenario, engine=engine)
        if result.ok:
            return
        payload = result.to_json()
        payload.update({"source": scenario.source, "invariants": [inv.id for inv in engine.invariants]})
        folder = write_report(Path(self.config.getoption("--schedcheck-report")), scenario.name, payload)
        lines = [f"{v['id']} (cycle {v.get('cycle', '-')}): {v.get('message', '')}" for v in result.violations]
        lines += [f"expectation: {failure}" for failure in result.expectation_failures]
        raise ScenarioFailed("\n".join(lines + [f"report: {folder}/report.md"]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return f"{self.path}:\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.name}"
